import { userSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';

/**
 * The snapshot key of a handle as typed in a path: one leading `@` dropped, lower-cased (handles
 * match case-insensitively). A bare `@` is a 400: there is no handle in it.
 */
export function handleKey(raw: string): string {
  const handle = raw.startsWith('@') ? raw.slice(1) : raw;
  if (handle.trim() === '') throw new ApiError('bad_request', 'handle must be a handle, with or without a leading @');
  return handle.toLowerCase();
}

/**
 * GET /api/v1/users/{handle}: a person's record, read from Postgres as it is committed (users and
 * user_records, pages.ts), with their skill figures and ranks (pages/skill-pages.ts; of one
 * category's calls with `category`).
 */
export const getUser: Handler<'/api/v1/users/{handle}'> = async (params, ctx) => {
  const handle = handleKey(params.handle);
  const category = params.category ?? null;
  const [body, skill] = await Promise.all([ctx.pages.user(handle), ctx.pages.userSkill({ handle, category, now: new Date(ctx.clock()) })]);
  if (body === null || skill === null) throw new ApiError('not_found', `no user with handle ${params.handle}`);
  return { data: { user: { ...userSnapshotSchema.parse(JSON.parse(body)).user, ...skill }, category } };
};
