import { CALL_LIST_SIZE, callSchema, userCallsSnapshotSchema, userSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../errors.js';
import type { Handler } from '../handler.js';
import { handleKey } from './get-user.js';
import { RECORDS_NOT_READY } from './list-calls.js';
import { firstPageHasMore, itemsOf } from './paging.js';

/**
 * GET /api/v1/users/{handle}/calls: a person's newest calls of one filter from
 * `user-calls:<handle lower-cased>:<all|status>`. The worker writes every filter of a person, empty
 * ones included; without the list, a person who exists is waiting for their first build (503) and
 * anyone else is unknown (404). With `cursor`, the page after the call it names (Postgres); the
 * snapshot still says who the person is and how they spell their handle.
 */
export const listUserCalls: Handler<'/api/v1/users/{handle}/calls'> = async (params, ctx) => {
  const key = handleKey(params.handle);
  const filter = params.status ?? 'all';
  const { limit } = params;
  const identity = { list: 'user-calls', handle: key, status: filter } as const;
  // The cursor is checked before anything is read: a bad one is a 400 whoever the person is.
  const position = params.cursor === undefined ? undefined : ctx.cursors.read(params.cursor, identity);
  const snapshot = await ctx.snapshots.read(`user-calls:${key}:${filter}`, userCallsSnapshotSchema);
  if (!snapshot) {
    const user = await ctx.snapshots.read(`user:${key}`, userSnapshotSchema);
    if (!user) throw new ApiError('not_found', `no user with handle ${params.handle}`);
    throw new ApiError('unavailable', RECORDS_NOT_READY);
  }
  const { handle } = snapshot.data;
  const cursorAfter = (id: string) => ctx.cursors.make({ ...identity, after: id });

  if (position !== undefined) {
    const page = await ctx.pages.userCalls({ handle: key, status: filter, after: position.after, limit });
    const calls = itemsOf(page.bodies, callSchema);
    return { data: { handle, count: calls.length, calls, next_cursor: page.nextAfter === null ? null : cursorAfter(String(page.nextAfter)) } };
  }
  const calls = snapshot.data.calls.slice(0, limit);
  const last = calls.at(-1);
  const more = last !== undefined && firstPageHasMore(calls.length, snapshot.data.calls.length, CALL_LIST_SIZE);
  return { data: { handle, count: calls.length, calls, next_cursor: more ? cursorAfter(last.id) : null } };
};
