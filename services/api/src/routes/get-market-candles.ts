import { CANDLE_FIELDS, DEFAULT_CANDLE_FIELDS, listed, ceilTo, DEFAULT_CANDLE_INTERVAL, floorTo, LATE_POINT_SECONDS, RETENTION_SECONDS, STEP_SECONDS, CANDLE_INTERVALS } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { eventOf } from './event-market.js';
import { NULL_UNITS, type CandleSet, type PackedCandles } from '../pages/candles.js';
import { writeCandlesBody, type CandlesBody } from './candles-body.js';

/**
 * GET /api/v1/markets/{eventSlug}/candles (docs/history.md). The event snapshot says which markets
 * belong to the event (and their questions and outcomes); the candles are read from the history
 * tiers in Postgres (pages/candles.ts), packed, and the body is written from them (candles-body.ts).
 * A window wholly closed is immutable: the adapter serves it with a day's max-age and `immutable`,
 * and holds it; one reaching the current bucket is live data.
 */

const MAX_MARKETS = 20;
const MAX_CANDLES = 2_000;
const DEFAULT_CANDLES = 500;

const days = (seconds: number) => `${seconds / 86_400} days`;

/** The finest interval whose tier still holds `start` at `now` (1h and 1d are kept for good). */
function coveringInterval(start: number, now: number): (typeof CANDLE_INTERVALS)[number] {
  for (const interval of CANDLE_INTERVALS) {
    const kept = RETENTION_SECONDS[interval];
    if (kept === null || start >= now - kept) return interval;
  }
  return '1d';
}

/**
 * Outcome 1's book top from outcome 0's (the books are complementary): its bid is 1 − outcome 0's
 * ask and its ask 1 − outcome 0's bid, each high the complement of the other's low; an empty side
 * stays empty.
 */
function complementQuotes(quotes: readonly number[]): number[] {
  const out = new Array<number>(quotes.length);
  for (let i = 0; i < quotes.length; i += 8) {
    for (let side = 0; side < 8; side += 4) {
      const from = i + (side === 0 ? 4 : 0);
      const empty = quotes[from] === NULL_UNITS;
      out[i + side] = empty ? NULL_UNITS : 10_000 - (quotes[from] as number);
      out[i + side + 1] = empty ? NULL_UNITS : 10_000 - (quotes[from + 2] as number);
      out[i + side + 2] = empty ? NULL_UNITS : 10_000 - (quotes[from + 1] as number);
      out[i + side + 3] = empty ? NULL_UNITS : 10_000 - (quotes[from + 3] as number);
    }
  }
  return out;
}

/** The market's candles as the outcome asked sees them: outcome 1's chance and quotes are outcome 0's complement; volume is already its own token's. */
function forOutcome(set: CandleSet | undefined, outcome: number): Pick<CandlesBody['markets'][number], 'candles' | 'quotes' | 'flows'> {
  if (set === undefined) return { candles: [] };
  if (outcome !== 1) return { candles: set.ohlc, ...(set.quotes ? { quotes: set.quotes } : {}), ...(set.flows ? { flows: set.flows } : {}) };
  return { candles: complement(set.ohlc), ...(set.quotes ? { quotes: complementQuotes(set.quotes) } : {}), ...(set.flows ? { flows: set.flows } : {}) };
}

/** Outcome 1 of a two-outcome market: the complement of outcome 0 (its high the complement of the low), in units. */
function complement(candles: PackedCandles): PackedCandles {
  const out = new Array<number>(candles.length);
  for (let i = 0; i < candles.length; i += 5) {
    out[i] = candles[i] as number;
    out[i + 1] = 10_000 - (candles[i + 1] as number);
    out[i + 2] = 10_000 - (candles[i + 3] as number);
    out[i + 3] = 10_000 - (candles[i + 2] as number);
    out[i + 4] = 10_000 - (candles[i + 4] as number);
  }
  return out;
}

export const getMarketCandles: Handler<'/api/v1/markets/{eventSlug}/candles'> = async (params, ctx) => {
  const interval = params.interval ?? DEFAULT_CANDLE_INTERVAL;
  const step = STEP_SECONDS[interval];
  const now = Math.floor(ctx.clock() / 1000);

  const ids = (params.market ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length > MAX_MARKETS) throw new ApiError('bad_request', `market must list at most ${MAX_MARKETS} market ids (comma-separated); got ${ids.length}`);
  const end = params.end ?? now;
  const start = params.start ?? end - DEFAULT_CANDLES * step;
  if (start >= end) throw new ApiError('bad_request', 'start must be before end');
  const from = floorTo(start, step);
  const to = ceilTo(end, step);
  const count = (to - from) / step;
  if (count > MAX_CANDLES) {
    throw new ApiError('bad_request', `a window holds at most ${MAX_CANDLES} candles per market: this one from start to end is ${count} candles of ${interval}; narrow it or use a coarser interval`);
  }
  const kept = RETENTION_SECONDS[interval];
  if (kept !== null && from < now - kept) {
    const cover = coveringInterval(from, now);
    const coverKept = RETENTION_SECONDS[cover];
    throw new ApiError(
      'bad_request',
      `interval ${interval} keeps ${days(kept)} of candles and this window starts before that; use interval ${cover}, which ${coverKept === null ? 'is kept for good' : `keeps ${days(coverKept)}`}`,
    );
  }

  const event = await eventOf(ctx, params.eventSlug);
  const markets = ids.length === 0 ? event.markets.slice(0, MAX_MARKETS) : ids.map((id) => event.markets.find((m) => m.id === id) ?? id);
  const unknown = markets.find((m) => typeof m === 'string');
  if (typeof unknown === 'string') throw new ApiError('not_found', `no market ${unknown} in event ${event.slug}`);
  const chosen = markets.filter((m) => typeof m !== 'string');
  for (const m of chosen) {
    const n = m.outcomes.length;
    if (params.outcome >= n || (params.outcome > 0 && n !== 2)) {
      throw new ApiError('bad_request', `outcome must be an outcome index of every market asked: market ${m.id} has ${n} outcome${n === 1 ? '' : 's'}${n > 2 ? ' (only outcome 0 is recorded)' : ''}`);
    }
  }

  const asked = listed(params.fields, CANDLE_FIELDS, DEFAULT_CANDLE_FIELDS);
  const fields = { ohlc: asked.has('ohlc'), volume: asked.has('volume'), quotes: asked.has('quotes') };
  const candles = await ctx.candles.read({
    marketIds: chosen.map((m) => m.id),
    step,
    start: from,
    end: to,
    now,
    quotes: fields.quotes,
    ...(fields.volume ? { volumeOf: params.outcome } : {}),
  });
  return {
    // Up to 20 markets of 2,000 candles: written straight from the packed candles (candles-body.ts).
    json: writeCandlesBody({
      event: event.slug,
      interval,
      start: from,
      end: to,
      fields,
      markets: chosen.map((m) => ({
        market_id: m.id,
        question: m.question,
        outcome: m.outcomes[params.outcome]?.name ?? '',
        ...forOutcome(candles.get(m.id), params.outcome),
      })),
    }),
    immutable: to <= floorTo(now, step) && to + LATE_POINT_SECONDS <= now,
  };
};
