import { callSchema } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { handleKey } from './get-user.js';
import { itemsOf } from './paging.js';

/**
 * GET /api/v1/users/{handle}/calls: a person's newest calls of one filter, every page (the first
 * too) a keyset query on their calls in Postgres (pages.ts), so a settlement shows on the person's
 * lists the moment it commits, and a settlement's cost does not grow with its callers' list sizes.
 * With `cursor`, the page after the call it names.
 */
export const listUserCalls: Handler<'/api/v1/users/{handle}/calls'> = async (params, ctx) => {
  const key = handleKey(params.handle);
  const filter = params.status ?? 'all';
  const identity = { list: 'user-calls', handle: key, status: filter } as const;
  // The cursor is checked before anything is read: a bad one is a 400 whoever the person is.
  const position = params.cursor === undefined ? undefined : ctx.cursors.read(params.cursor, identity);
  const page = await ctx.pages.userCalls({ handle: key, status: filter, limit: params.limit, ...(position === undefined ? {} : { after: position.after }) });
  if (!page) throw new ApiError('not_found', `no user with handle ${params.handle}`);
  const calls = itemsOf(page.bodies, callSchema);
  const nextCursor = page.nextAfter === null ? null : ctx.cursors.make({ ...identity, after: String(page.nextAfter) });
  return { data: { handle: page.handle, count: calls.length, calls, next_cursor: nextCursor } };
};
