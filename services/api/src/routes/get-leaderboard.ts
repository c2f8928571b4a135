import { LEADERBOARD_SIZE, leaderboardRowSchema, leaderboardSnapshotSchema, type LeaderboardSort, type LeaderboardWindow } from '@pm/shared/api';
import type { FieldKey } from '@pm/shared/domain';
import { ApiError } from '../http/errors.js';
import type { Handler, HandlerContext } from '../app/handler.js';
import type { Page } from '../pages/pages.js';
import { RECORDS_NOT_READY } from './list-calls.js';
import { handleKey } from './get-user.js';
import { firstPageHasMore, itemsOf } from './paging.js';

const EXPIRED =
  'cursor has expired: the ranking it walks was replaced more than 15 minutes ago; start again from the first page (no cursor)';

/**
 * GET /api/v1/leaderboard. Two kinds of board (docs/skill.md):
 * - kept as rows: the all-time boards of every field (profit, right, xp, clv, brier) and the week
 *   board (sort=week, or sort=profit&window=week): the first page is the worker's snapshot
 *   `leaderboard:<sort>`, whose next_cursor pins the ranking version (migration 0005), so a walk
 *   shows each person once, at the rank they had when it started; later pages from Postgres;
 * - computed: a board of a window (day, month, or week with another sort) or a field (category,
 *   league), ranked on request as of an instant that its next_cursor carries (pages/skill-pages.ts).
 * `around` starts the page at the person, from Postgres, on either kind.
 */
export const getLeaderboard: Handler<'/api/v1/leaderboard'> = async (params, ctx) => {
  const sort = params.sort ?? 'profit';
  if (sort === 'week' && params.window !== undefined && params.window !== 'week') {
    throw new ApiError('bad_request', 'window must be week or omitted with sort=week (the week board is profit over the last 7 days); use sort=profit for another window');
  }
  const window: LeaderboardWindow = params.window ?? (sort === 'week' ? 'week' : 'all');
  const league = params.league === undefined ? null : params.league.toLowerCase();
  const category = league === null ? (params.category ?? null) : null;
  const field: FieldKey | null = league !== null ? `l:${league}` : category !== null ? `c:${category}` : null;
  const { limit } = params;
  const asked = { sort, window, category, league };
  const around = params.around === undefined ? undefined : handleKey(params.around);

  // The board kept as rows that answers this request, if one does.
  const kept: LeaderboardSort | null =
    field !== null ? null : sort === 'week' || (sort === 'profit' && window === 'week') ? 'week' : window === 'all' ? sort : null;
  if (kept === null) return computedBoard(params.cursor, around, { ...asked, field, sort: sort === 'week' ? 'profit' : sort }, limit, ctx);

  const identity = { list: 'leaderboard', sort: kept } as const;
  const answer = (page: Page, version: number) => {
    const rows = itemsOf(page.bodies, leaderboardRowSchema);
    const next_cursor = page.nextAfter === null ? null : ctx.cursors.make({ ...identity, version, after: Number(page.nextAfter) });
    return { data: { ...asked, count: rows.length, rows, next_cursor } };
  };
  if (params.cursor !== undefined) {
    const { version, after } = ctx.cursors.read(params.cursor, identity);
    const page = await ctx.pages.leaderboard({ sort: kept, version, after, limit });
    if (page === null) throw new ApiError('bad_request', EXPIRED);
    return answer(page, version);
  }
  if (around !== undefined) {
    const where = await ctx.pages.keptRank({ sort: kept, handle: around });
    if (where === null) throw new ApiError('not_found', `no user with handle ${params.around}`);
    if (where.rank === null) return answer({ bodies: [], nextAfter: null }, where.version);
    const after = Math.max(0, where.rank - 1 - Math.floor((limit - 1) / 2));
    const page = await ctx.pages.leaderboard({ sort: kept, version: where.version, after, limit });
    // The version read a moment ago was replaced and pruned in between (15 minutes later): start again.
    if (page === null) throw new ApiError('unavailable', RECORDS_NOT_READY);
    return answer(page, where.version);
  }
  const snapshot = await ctx.snapshots.read(`leaderboard:${kept}`, leaderboardSnapshotSchema);
  if (!snapshot) throw new ApiError('unavailable', RECORDS_NOT_READY);
  const { version } = snapshot.data;
  const rows = snapshot.data.rows.slice(0, limit);
  const last = rows.at(-1);
  // A snapshot without a version predates ranking versions (only until the worker's start-up build): no pin, no next page.
  const more = version !== undefined && last !== undefined && firstPageHasMore(rows.length, snapshot.data.rows.length, LEADERBOARD_SIZE);
  return { data: { ...asked, count: rows.length, rows, next_cursor: more ? ctx.cursors.make({ ...identity, version, after: last.rank }) : null } };
};

/** A board of a window or a field, ranked as of its first page's instant (carried by the cursor). */
async function computedBoard(
  cursor: string | undefined,
  around: string | undefined,
  q: { sort: Exclude<LeaderboardSort, 'week'>; window: LeaderboardWindow; field: FieldKey | null; category: string | null; league: string | null },
  limit: number,
  ctx: HandlerContext,
) {
  const identity = { list: 'board', sort: q.sort, window: q.window, field: q.field } as const;
  const position = cursor === undefined ? null : ctx.cursors.read(cursor, identity);
  const asOf = position?.asOf ?? ctx.clock();
  const start = position !== null ? { after: position.after } : around !== undefined ? { around } : { after: 0 };
  const page = await ctx.pages.board({ sort: q.sort, window: q.window, field: q.field, asOf: new Date(asOf), start, limit, live: position === null });
  if (page === null) throw new ApiError('not_found', `no user with handle ${around ?? ''}`);
  const rows = itemsOf(page.bodies, leaderboardRowSchema);
  // The instant the page was ranked at: a page held from a moment ago (nothing it counts moved since) walks on from its own.
  const next_cursor = page.nextAfter === null ? null : ctx.cursors.make({ ...identity, asOf: page.asOf.getTime(), after: Number(page.nextAfter) });
  const sort = q.sort;
  return { data: { sort, window: q.window, category: q.category, league: q.league, count: rows.length, rows, next_cursor } };
}
