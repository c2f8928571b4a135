import { TRADES_MAX_MARKETS } from '@pm/shared/api';
import { tradeData } from '@pm/shared/stream';
import { parseTradeId, tradeId, tradesFloorMs } from '@pm/shared/trades';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { eventOf } from './event-market.js';
import { readTradesPage } from '../pages/trades.js';

/**
 * GET /api/v1/markets/{eventSlug}/trades (docs/design.md "Trades"). The event snapshot says which
 * markets belong to the event and names their outcomes; the trades are read from the tape in Postgres
 * (pages/trades.ts), newest first. The cursor is signed and names the request's parameters and the
 * last trade shown: the next page is every trade after it in the tape's order, so a walk neither
 * repeats nor skips one while new trades (which sort before its first page) arrive.
 */

const iso = (ms: number) => new Date(ms).toISOString();

export const getMarketTrades: Handler<'/api/v1/markets/{eventSlug}/trades'> = async (params, ctx) => {
  const nowMs = ctx.clock();
  const ids = (params.market ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length > TRADES_MAX_MARKETS) throw new ApiError('bad_request', `market must list at most ${TRADES_MAX_MARKETS} market ids (comma-separated); got ${ids.length}`);
  const days = ctx.config.TRADES_RETENTION_DAYS;
  const floorMs = tradesFloorMs(nowMs, days);
  if (params.start !== undefined && params.start * 1000 < floorMs) {
    throw new ApiError('bad_request', `start is before the trades kept: trades are kept for ${days} days, so start must be at or after ${iso(Math.ceil(floorMs / 1000) * 1000)} (Unix ${Math.ceil(floorMs / 1000)})`);
  }
  if (params.start !== undefined && params.end !== undefined && params.start >= params.end) throw new ApiError('bad_request', 'start must be before end');

  const event = await eventOf(ctx, params.eventSlug);
  const markets = ids.length === 0 ? event.markets : ids.map((id) => event.markets.find((m) => m.id === id) ?? id);
  const unknown = markets.find((m) => typeof m === 'string');
  if (typeof unknown === 'string') throw new ApiError('not_found', `no market ${unknown} in event ${event.slug}`);
  const chosen = markets.filter((m) => typeof m !== 'string');
  if (params.outcome !== undefined) {
    for (const m of chosen) {
      const n = m.outcomes.length;
      if (params.outcome >= n) throw new ApiError('bad_request', `outcome must be an outcome index of every market asked: market ${m.id} has ${n} outcome${n === 1 ? '' : 's'} (0 to ${n - 1})`);
    }
  }

  // The list a cursor belongs to: the event and every parameter but `limit` and the cursor itself.
  const filter = `${event.slug}/trades?market=${ids.join(',')}&outcome=${params.outcome ?? ''}&start=${params.start ?? ''}&end=${params.end ?? ''}`;
  let after;
  if (params.cursor !== undefined) {
    after = parseTradeId(ctx.cursors.read(params.cursor, { list: 'trades', filter }).after) ?? undefined;
    if (after === undefined) throw new ApiError('bad_request', 'cursor is not valid: pass next_cursor exactly as a page gave it');
  }

  const rows = await readTradesPage(ctx.readDb, {
    marketIds: chosen.map((m) => m.id),
    outcome: params.outcome,
    fromMs: Math.max(floorMs, (params.start ?? 0) * 1000),
    // Without an end, whatever the exchange stamped (a clock a little ahead included).
    toMs: params.end === undefined ? Number.MAX_SAFE_INTEGER : params.end * 1000,
    after,
    limit: params.limit,
  });
  const byId = new Map(chosen.map((m) => [m.id, m]));
  const trades = rows.map((r) => {
    const name = byId.get(r.marketId)?.outcomes[r.outcomeIndex]?.name ?? '';
    return tradeData({ marketId: r.marketId, outcomeIndex: r.outcomeIndex, name }, { id: tradeId(r), atMs: r.atMs, px: r.px, sz: r.sz });
  });
  const last = trades.length === params.limit ? trades[trades.length - 1] : undefined;
  return {
    data: {
      event: event.slug,
      trades,
      next_cursor: last === undefined ? null : ctx.cursors.make({ list: 'trades', filter, after: last.id }),
    },
  };
};
