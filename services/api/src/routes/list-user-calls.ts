import { userCallsSnapshotSchema, userSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../errors.js';
import type { Handler } from '../handler.js';
import { handleKey } from './get-user.js';
import { RECORDS_NOT_READY } from './list-calls.js';

/**
 * GET /api/v1/users/{handle}/calls: a person's newest calls of one filter from
 * `user-calls:<handle lower-cased>:<all|status>`. The worker writes every filter of a person, empty
 * ones included; without the list, a person who exists is waiting for their first build (503) and
 * anyone else is unknown (404).
 */
export const listUserCalls: Handler<'/api/v1/users/{handle}/calls'> = async (params, ctx) => {
  const key = handleKey(params.handle);
  const filter = params.status ?? 'all';
  const { limit } = params;
  const snapshot = await ctx.snapshots.read(`user-calls:${key}:${filter}`, userCallsSnapshotSchema);
  if (!snapshot) {
    const user = await ctx.snapshots.read(`user:${key}`, userSnapshotSchema);
    if (!user) throw new ApiError('not_found', `no user with handle ${params.handle}`);
    throw new ApiError('unavailable', RECORDS_NOT_READY);
  }
  const calls = snapshot.data.calls.slice(0, limit);
  return { data: { handle: snapshot.data.handle, count: calls.length, calls } };
};
