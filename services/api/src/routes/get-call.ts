import { callSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../errors.js';
import type { Handler } from '../handler.js';

/** GET /api/v1/calls/{id}: one call (the SPEC subset with thesis updates) from its `call:<id>` snapshot. */
export const getCall: Handler<'/api/v1/calls/{id}'> = async (params, ctx) => {
  const snapshot = await ctx.snapshots.read(`call:${params.id}`, callSnapshotSchema);
  if (!snapshot) throw new ApiError('not_found', `no call with id ${params.id}`);
  return { data: { call: snapshot.data.call } };
};
