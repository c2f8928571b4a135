import type { StreamMessage, TradeMessage } from '../api/stream.js';
import { PRICE_UNITS } from '../trades/identity.js';
import { NO_QUOTE, type Quote } from '../domain/quote.js';

/**
 * Builders of the stream's messages from what each writer holds, so that a call site is one line
 * (`stream.append(priceMessage(ref, chance, now))`) and the wire shape lives in one place
 * (shared/src/api/stream.ts has the schemas).
 */

const iso = (ms: number) => new Date(ms).toISOString();

/** An outcome's displayed chance moved (the ingestor, when it publishes the chance). */
export function priceMessage(
  outcome: { eventSlug: string; marketId: string; outcomeIndex: number; name: string },
  chance: number,
  atMs: number,
  quote: Quote = NO_QUOTE,
): StreamMessage {
  return {
    topic: 'price',
    data: {
      event: outcome.eventSlug,
      market_id: outcome.marketId,
      outcome_index: outcome.outcomeIndex,
      outcome: outcome.name,
      chance,
      best_bid: quote.best_bid,
      best_ask: quote.best_ask,
      spread: quote.spread,
      last_trade_price: quote.last_trade_price,
      at: iso(atMs),
    },
  };
}

/** The fields of a trade as the tape and the stream show it (a stored print of an outcome's token). */
export function tradeData(
  outcome: { marketId: string; outcomeIndex: number; name: string },
  trade: { id: string; atMs: number; px: number; sz: number },
): Omit<TradeMessage, 'event'> {
  const price = trade.px / PRICE_UNITS;
  const size = Math.abs(trade.sz);
  return {
    id: trade.id,
    market_id: outcome.marketId,
    outcome_index: outcome.outcomeIndex,
    outcome: outcome.name,
    price,
    size,
    notional: Math.round(price * size * 1e6) / 1e6,
    side: trade.sz < 0 ? 'SELL' : 'BUY',
    at: iso(trade.atMs),
  };
}

/** The exchange printed a match on an outcome's token (the ingestor, once the print is on the tape). */
export function tradeMessage(
  outcome: { eventSlug: string; marketId: string; outcomeIndex: number; name: string },
  trade: { id: string; atMs: number; px: number; sz: number },
): StreamMessage {
  return { topic: 'trade', data: { ...tradeData(outcome, trade), event: outcome.eventSlug } };
}

/** A match's score, period or state changed (the ingestor, when it writes the game row). */
export function scoreMessage(
  game: { event_slug: string | null; game_id: string; league: string; home_team: string; away_team: string; score: string; period: string; clock: string; live: boolean; ended: boolean },
  atMs: number,
): StreamMessage {
  return {
    topic: 'score',
    data: {
      event: game.event_slug,
      game_id: game.game_id,
      league: game.league,
      home_team: game.home_team,
      away_team: game.away_team,
      score: game.score,
      period: game.period,
      clock: game.clock,
      live: game.live,
      ended: game.ended,
      at: iso(atMs),
    },
  };
}

/** A resolved market was settled (the worker, after the settlement transaction committed). */
export function settlementMessage(
  settled: {
    marketId: string;
    eventSlug: string;
    resolution: { winningOutcomeIndex: number | null; voided: boolean };
    closingChances?: ReadonlyArray<number | null> | null;
    calls: { won: number; lost: number; void: number };
    legs: number;
    combos: readonly unknown[];
  },
  atMs: number,
): StreamMessage {
  const voided = settled.resolution.voided;
  return {
    topic: 'settlement',
    data: {
      event: settled.eventSlug,
      market_id: settled.marketId,
      resolved_outcome: voided ? null : settled.resolution.winningOutcomeIndex,
      voided,
      closing_chances: settled.closingChances === undefined || settled.closingChances === null ? null : [...settled.closingChances],
      calls: { ...settled.calls },
      combo_legs: settled.legs,
      combos: settled.combos.length,
      at: iso(atMs),
    },
  };
}

/** A call was recorded (the write path, after its transaction committed). */
export function callMessage(call: {
  id: string;
  handle: string;
  eventSlug: string;
  marketId: string;
  outcomeIndex: number;
  outcome: string;
  chance: number;
  madeAt: Date;
}): StreamMessage {
  return {
    topic: 'call',
    data: {
      id: call.id,
      handle: call.handle,
      event: call.eventSlug,
      market_id: call.marketId,
      outcome_index: call.outcomeIndex,
      outcome: call.outcome,
      chance: call.chance,
      at: call.madeAt.toISOString(),
    },
  };
}
