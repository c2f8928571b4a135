import { callSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';

/** GET /api/v1/calls/{id}: one call (the SPEC subset with thesis updates), read from Postgres as it is committed (pages.ts). */
export const getCall: Handler<'/api/v1/calls/{id}'> = async (params, ctx) => {
  const body = await ctx.pages.call(params.id);
  if (body === null) throw new ApiError('not_found', `no call with id ${params.id}`);
  return { data: { call: callSnapshotSchema.parse(JSON.parse(body)).call } };
};
