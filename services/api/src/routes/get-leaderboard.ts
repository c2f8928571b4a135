import { LEADERBOARD_SIZE, leaderboardRowSchema, leaderboardSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { RECORDS_NOT_READY } from './list-calls.js';
import { firstPageHasMore, itemsOf } from './paging.js';

const EXPIRED =
  'cursor has expired: the ranking it walks was replaced more than 15 minutes ago; start again from the first page (no cursor)';

/**
 * GET /api/v1/leaderboard: the top rows of one sort (default profit) from `leaderboard:<sort>`.
 * Its next_cursor pins the ranking version of the snapshot (migration 0005), so a walk shows each
 * person once, at the rank they had when it started, however ranks move meanwhile; with `cursor`,
 * the rows of that ranking after the rank it names (Postgres, pages/pages.ts).
 */
export const getLeaderboard: Handler<'/api/v1/leaderboard'> = async (params, ctx) => {
  const sort = params.sort ?? 'profit';
  const { limit } = params;
  const identity = { list: 'leaderboard', sort } as const;
  if (params.cursor !== undefined) {
    const { version, after } = ctx.cursors.read(params.cursor, identity);
    const page = await ctx.pages.leaderboard({ sort, version, after, limit });
    if (page === null) throw new ApiError('bad_request', EXPIRED);
    const rows = itemsOf(page.bodies, leaderboardRowSchema);
    const next_cursor = page.nextAfter === null ? null : ctx.cursors.make({ ...identity, version, after: Number(page.nextAfter) });
    return { data: { sort, count: rows.length, rows, next_cursor } };
  }
  const snapshot = await ctx.snapshots.read(`leaderboard:${sort}`, leaderboardSnapshotSchema);
  if (!snapshot) throw new ApiError('unavailable', RECORDS_NOT_READY);
  const { version } = snapshot.data;
  const rows = snapshot.data.rows.slice(0, limit);
  const last = rows.at(-1);
  // A snapshot without a version predates ranking versions (only until the worker's start-up build): no pin, no next page.
  const more = version !== undefined && last !== undefined && firstPageHasMore(rows.length, snapshot.data.rows.length, LEADERBOARD_SIZE);
  return { data: { sort, count: rows.length, rows, next_cursor: more ? ctx.cursors.make({ ...identity, version, after: last.rank }) : null } };
};
