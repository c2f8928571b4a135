import { CALL_LIST_SIZE, callListSnapshotSchema, callSchema, marketCallsSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { firstPageHasMore, itemsOf } from './paging.js';
import { eventPart } from './event-market.js';

export const RECORDS_NOT_READY = 'records are not built yet; please try again shortly';

/**
 * GET /api/v1/calls: the newest calls from `calls:latest`, or with `market` that market's calls and
 * platform split from `calls:market:<id>`. A called market with no snapshot (a closed event's,
 * retired) has its list built on request (event-market.ts `eventPart`); a market nobody called has
 * none: 200 with empty lists, unless the records have not been built at all (no `calls:latest`
 * either), which is a 503. With `cursor`, the page after the call it names (Postgres, pages/pages.ts).
 */
export const listCalls: Handler<'/api/v1/calls'> = async (params, ctx) => {
  const { limit } = params;
  const market = params.market?.trim() || undefined;
  const identity = { list: 'calls', market: market ?? null } as const;
  const cursorAfter = (id: string) => ctx.cursors.make({ ...identity, after: id });

  if (params.cursor !== undefined) {
    const { after } = ctx.cursors.read(params.cursor, identity);
    const page = await ctx.pages.calls({ market: identity.market, after, limit });
    const calls = itemsOf(page.bodies, callSchema);
    const next_cursor = page.nextAfter === null ? null : cursorAfter(String(page.nextAfter));
    if (market === undefined) return { data: { count: calls.length, calls, next_cursor } };
    const split = await ctx.snapshots.read(`calls:market:${market}`, marketCallsSnapshotSchema);
    return { data: { count: calls.length, platform_split: split?.data.platform_split ?? [], calls, next_cursor } };
  }

  if (market !== undefined) {
    const snapshot = await eventPart(ctx, { of: 'calls', marketId: market }, marketCallsSnapshotSchema);
    if (snapshot) {
      const calls = snapshot.data.calls.slice(0, limit);
      const last = calls.at(-1);
      const more = last !== undefined && firstPageHasMore(calls.length, snapshot.data.calls.length, CALL_LIST_SIZE);
      return { data: { count: calls.length, platform_split: snapshot.data.platform_split, calls, next_cursor: more ? cursorAfter(last.id) : null } };
    }
  }
  const latest = await ctx.snapshots.read('calls:latest', callListSnapshotSchema);
  if (!latest) throw new ApiError('unavailable', RECORDS_NOT_READY);
  if (market !== undefined) return { data: { count: 0, platform_split: [], calls: [], next_cursor: null } };
  const calls = latest.data.calls.slice(0, limit);
  const last = calls.at(-1);
  const more = last !== undefined && firstPageHasMore(calls.length, latest.data.calls.length, CALL_LIST_SIZE);
  return { data: { count: calls.length, calls, next_cursor: more ? cursorAfter(last.id) : null } };
};
