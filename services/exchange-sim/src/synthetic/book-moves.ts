import { hash } from 'node:crypto';
import type { LastTradeMessage, MarketMessage, PriceChangeEntry } from '../protocol.js';
import { applyChanges, formatPrice, formatSize, type LevelChange } from './book.js';
import type { SimMarket } from './model.js';
import type { Rng } from './prng.js';

/**
 * The random walk of the books. One move edits one market's Yes book a little (a level stepped
 * toward the fair price, a resize, a trade, a deep level added or pulled), or sweeps it when the fair
 * price jumped (a goal). The edits come out as the exchange's messages for BOTH tokens.
 */

/** Far from fair by more than this (milli), the book is swept to the target in one message. */
const SWEEP_DISTANCE = 60;
const MIN_DEPTH = 3;
const MAX_DEPTH = 10;
/**
 * One sweep in this many loses the removals of the levels it crosses on the wire (the quirk behind
 * real crossed-book bursts): the sim's book is right, every entry's `best_bid`/`best_ask` and the
 * `best_bid_ask` messages state the true top, `GET /book` serves the true book, but a client that
 * only applies the deltas keeps the stale levels and its local book crosses.
 */
const LOSSY_SWEEP_EVERY = 3;
const sweepsOf = new WeakMap<SimMarket, number>();
/** Matches made per market: numbers each match's transaction. */
const matchesOf = new WeakMap<SimMarket, number>();

/**
 * The on-chain transaction of a market's n-th match, as the exchange's `transaction_hash` (0x + 64
 * hex): derived from the market and the count, not drawn from the random stream, so adding it left
 * every seeded world as it was. Both tokens' prints of one match carry the same hash.
 */
function transactionHash(m: SimMarket, timestamp: string, n: number): string {
  return `0x${hash('sha256', `${m.conditionId}|${timestamp}|${n}`)}`;
}

function levelSize(rng: Rng): number {
  return Math.round(Math.exp(rng.range(Math.log(500), Math.log(800_000))));
}

/** Target best bid and ask (milli) for the market's fair price and target spread. */
export function targets(m: SimMarket): { bid: number; ask: number } {
  const t = m.book.tick;
  const spread = Math.max(t, Math.round(m.spreadTarget / t) * t);
  let bid = Math.floor((m.fair * 1000 - spread / 2) / t) * t;
  bid = Math.max(t, Math.min(bid, 1000 - t - spread));
  return { bid, ask: bid + spread };
}

function tickFor(fair: number): number {
  return fair < 0.04 || fair > 0.96 ? 1 : 10;
}

/** A fresh book around the fair price (creation, and the sports markets' kick-off). */
export function seedBook(m: SimMarket, rng: Rng): void {
  const book = m.book;
  book.clear();
  book.tick = tickFor(m.fair);
  const t = book.tick;
  const { bid, ask } = targets(m);
  for (let i = 0, p = bid; i < rng.int(4, 7) && p >= t; i++, p -= t * rng.int(1, 3)) book.bids.set(p, levelSize(rng));
  for (let i = 0, p = ask; i < rng.int(4, 7) && p <= 1000 - t; i++, p += t * rng.int(1, 3)) book.asks.set(p, levelSize(rng));
  m.lastTrade = Math.max(t, Math.min(1000 - t, Math.round((m.fair * 1000) / t) * t));
}

interface MoveContext {
  rng: Rng;
  /** Wall-clock ms as the exchange stamps messages. */
  timestamp: string;
}

export function moveMarket(m: SimMarket, ctx: MoveContext): MarketMessage[] {
  const { rng, timestamp } = ctx;
  const book = m.book;
  const entries: PriceChangeEntry[] = [];
  const trades: LastTradeMessage[] = [];
  const extra: MarketMessage[] = [];
  const edit = (change: LevelChange) => entries.push(...applyChanges(book, m.tokens, [change], timestamp));
  const beforeBest = `${book.bestBid()}|${book.bestAsk()}`;

  const wantedTick = tickFor(m.fair);
  if (wantedTick !== book.tick && (wantedTick === 1 || (m.fair >= 0.05 && m.fair <= 0.95))) {
    if (wantedTick === 10) {
      for (const p of [...book.bids.keys()]) if (p % 10 !== 0) edit({ side: 'bid', price: p, size: 0 });
      for (const p of [...book.asks.keys()]) if (p % 10 !== 0) edit({ side: 'ask', price: p, size: 0 });
    }
    for (const outcome of [0, 1] as const) {
      extra.push({
        event_type: 'tick_size_change', asset_id: m.tokens[outcome], market: m.conditionId,
        old_tick_size: formatPrice(book.tick), new_tick_size: formatPrice(wantedTick), timestamp,
      });
    }
    book.tick = wantedTick;
  }

  const t = book.tick;
  const { bid: tb, ask: ta } = targets(m);
  const bb = book.bestBid();
  const ba = book.bestAsk();
  const trade = (buy: boolean) => {
    const price = buy ? book.bestAsk() : book.bestBid();
    if (price === null) return;
    // The taker takes from the best level the book shows on the other side, at most what rests there.
    const resting = (buy ? book.asks : book.bids).get(price) ?? 0;
    const size = Math.min(resting, rng.int(100, 40_000));
    if (size <= 0) return;
    const match = (matchesOf.get(m) ?? 0) + 1;
    matchesOf.set(m, match);
    const txHash = transactionHash(m, timestamp, match);
    edit({ side: buy ? 'ask' : 'bid', price, size: resting - size });
    m.lastTrade = price;
    const notional = (size / 100) * (price / 1000);
    m.volume += notional;
    m.volume24hr += notional;
    for (const outcome of [0, 1] as const) {
      // A Yes buy at p is a No sell at 1 − p: both tokens print the trade.
      trades.push({
        event_type: 'last_trade_price', asset_id: m.tokens[outcome], market: m.conditionId,
        price: formatPrice(outcome === 0 ? price : 1000 - price), size: formatSize(size),
        side: (outcome === 0) === buy ? 'BUY' : 'SELL', fee_rate_bps: '0', timestamp, transaction_hash: txHash,
      });
    }
  };

  if (bb === null || ba === null || Math.abs((bb + ba) / 2 - m.fair * 1000) > SWEEP_DISTANCE) {
    const up = bb !== null && ba !== null ? m.fair * 1000 > (bb + ba) / 2 : true;
    const sweeps = (sweepsOf.get(m) ?? 0) + 1;
    sweepsOf.set(m, sweeps);
    // A lossy sweep applies the removals to the sim's book but leaves them off the wire.
    const remove = sweeps % LOSSY_SWEEP_EVERY === 0 ? (change: LevelChange) => void applyChanges(book, m.tokens, [change], timestamp) : edit;
    for (const p of [...book.bids.keys()]) if (p > tb) remove({ side: 'bid', price: p, size: 0 });
    for (const p of [...book.asks.keys()]) if (p < ta) remove({ side: 'ask', price: p, size: 0 });
    if (!book.bids.has(tb)) edit({ side: 'bid', price: tb, size: levelSize(rng) });
    if (!book.asks.has(ta)) edit({ side: 'ask', price: ta, size: levelSize(rng) });
    if (rng.chance(0.6)) trade(up);
  } else {
    const r = rng.next();
    const sideOf = (bid: boolean) => (bid ? book.bids : book.asks);
    if (r < 0.4) {
      if (bb < tb) {
        const p = Math.min(bb + t * rng.int(1, 2), tb);
        if (p < ba) edit({ side: 'bid', price: p, size: levelSize(rng) });
      } else if (bb > tb) {
        edit({ side: 'bid', price: bb, size: 0 });
      } else if (ba > ta) {
        const p = Math.max(ba - t * rng.int(1, 2), ta);
        if (p > bb) edit({ side: 'ask', price: p, size: levelSize(rng) });
      } else if (ba < ta) {
        edit({ side: 'ask', price: ba, size: 0 });
      } else {
        trade(rng.chance(0.5));
      }
    } else if (r < 0.65) {
      const bid = rng.chance(0.5);
      const prices = [...sideOf(bid).keys()];
      if (prices.length) edit({ side: bid ? 'bid' : 'ask', price: rng.pick(prices), size: levelSize(rng) });
    } else if (r < 0.83) {
      trade(rng.chance(0.5));
    } else if (r < 0.92) {
      const bid = rng.chance(0.5);
      const prices = [...sideOf(bid).keys()].sort((a, b) => a - b);
      const worst = bid ? prices[0] : prices[prices.length - 1];
      if (worst !== undefined) {
        const p = bid ? worst - t * rng.int(1, 3) : worst + t * rng.int(1, 3);
        if (p >= t && p <= 1000 - t) edit({ side: bid ? 'bid' : 'ask', price: p, size: levelSize(rng) });
      }
    } else {
      const bid = rng.chance(0.5);
      const side = sideOf(bid);
      const best = bid ? book.bestBid() : book.bestAsk();
      const deep = [...side.keys()].filter((p) => p !== best);
      if (side.size > MIN_DEPTH && deep.length) edit({ side: bid ? 'bid' : 'ask', price: rng.pick(deep), size: 0 });
    }
  }

  // Keep both sides between MIN_DEPTH and MAX_DEPTH levels.
  for (const bid of [true, false]) {
    const side = bid ? book.bids : book.asks;
    const sideName = bid ? 'bid' : 'ask';
    while (side.size < MIN_DEPTH) {
      const prices = [...side.keys()];
      const fallback = bid ? tb : ta;
      const worst = prices.length ? (bid ? Math.min(...prices) : Math.max(...prices)) : null;
      const p = worst === null ? fallback : bid ? worst - t * rng.int(1, 3) : worst + t * rng.int(1, 3);
      if (p < t || p > 1000 - t) break;
      edit({ side: sideName, price: p, size: levelSize(rng) });
    }
    while (side.size > MAX_DEPTH) {
      const prices = [...side.keys()];
      edit({ side: sideName, price: bid ? Math.min(...prices) : Math.max(...prices), size: 0 });
    }
  }

  const messages: MarketMessage[] = [];
  if (entries.length) messages.push({ event_type: 'price_change', market: m.conditionId, timestamp, price_changes: entries });
  messages.push(...extra, ...trades);
  if (`${book.bestBid()}|${book.bestAsk()}` !== beforeBest) {
    for (const outcome of [0, 1] as const) {
      const best = book.best(outcome);
      messages.push({
        event_type: 'best_bid_ask', asset_id: m.tokens[outcome], market: m.conditionId,
        best_bid: best.bid === null ? '' : formatPrice(best.bid),
        best_ask: best.ask === null ? '' : formatPrice(best.ask),
        spread: best.bid === null || best.ask === null ? '' : formatPrice(best.ask - best.bid),
        timestamp,
      });
    }
  }
  return messages;
}
