import { describe, expect, it } from 'vitest';
import type { MarketMessage } from '../protocol.js';
import { SyntheticExchange } from './engine.js';

/**
 * The simulator's trades follow its books: each print is at the best level the book showed on the
 * side the taker took from (asks for a BUY, bids for a SELL), that level shrinks by exactly the
 * print's size in the same move, and both tokens' prints of a match carry one transaction hash.
 */

describe('the synthetic match feed', () => {
  const sim = new SyntheticExchange({ seed: 11, speed: 1, startTime: Date.UTC(2026, 3, 5, 15, 0, 0), paused: true, openEvents: 30, quietSpells: { everyMs: 0, forMs: 0 } });
  const messages: MarketMessage[][] = [];
  sim.start({ market: (m) => messages.push([...m]), marketRaw: () => {}, sports: () => {} });

  it('prints at the best level shown, draining it by the print\'s size, with one hash for both tokens', () => {
    // Books as a client holds them: from the REST book of every open token, then every change; and
    // the top as the exchange states it on each change (the local book can hold levels a lossy
    // sweep left off the wire, on purpose: docs/protocol.md).
    const books = new Map<string, { bids: Map<number, number>; asks: Map<number, number> }>();
    const tops = new Map<string, { bid: number; ask: number }>();
    for (const e of sim.listing().map((x) => x.render())) {
      for (const m of e.markets ?? []) {
        for (const token of JSON.parse(String(m.clobTokenIds)) as string[]) {
          const b = sim.book(token);
          if (!b) continue;
          books.set(token, { bids: new Map(b.bids.map((l) => [Number(l.price), Number(l.size)])), asks: new Map(b.asks.map((l) => [Number(l.price), Number(l.size)])) });
          tops.set(token, { bid: Math.max(...b.bids.map((l) => Number(l.price))), ask: Math.min(...b.asks.map((l) => Number(l.price))) });
        }
      }
    }
    sim.step(1_500);
    let prints = 0;
    for (const batch of messages) {
      // Per asset and side, the drains of this move: price → { best before it, by how much }.
      const drains = new Map<string, { best: boolean; drop: number }>();
      const hashes = new Map<string, Set<string>>();
      for (const msg of batch) {
        if (msg.event_type === 'price_change') {
          for (const c of msg.price_changes) {
            const book = books.get(c.asset_id);
            if (!book) continue;
            const side = c.side === 'BUY' ? book.bids : book.asks;
            const price = Number(c.price);
            const before = side.get(price) ?? 0;
            const after = Number(c.size);
            const top = tops.get(c.asset_id) as { bid: number; ask: number };
            const best = (c.side === 'BUY' ? top.bid : top.ask) === price;
            if (c.best_bid !== '') top.bid = Number(c.best_bid);
            if (c.best_ask !== '') top.ask = Number(c.best_ask);
            if (after < before) drains.set(`${c.asset_id}|${c.side}|${price}`, { best, drop: Math.round((before - after) * 100) / 100 });
            if (after === 0) side.delete(price);
            else side.set(price, after);
          }
        } else if (msg.event_type === 'last_trade_price' && books.has(msg.asset_id)) {
          prints++;
          // A BUY taker took from the asks (the SELL side of the book), a SELL taker from the bids.
          const drain = drains.get(`${msg.asset_id}|${msg.side === 'BUY' ? 'SELL' : 'BUY'}|${Number(msg.price)}`);
          expect(drain, `print ${JSON.stringify(msg)}`).toEqual({ best: true, drop: Number(msg.size) });
          expect(msg.transaction_hash).toMatch(/^0x[0-9a-f]{64}$/);
          const same = hashes.get(msg.transaction_hash!) ?? new Set();
          same.add(msg.asset_id);
          hashes.set(msg.transaction_hash!, same);
        }
      }
      for (const tokens of hashes.values()) expect(tokens.size).toBe(2);
    }
    expect(prints).toBeGreaterThan(100);
  }, 30_000);
});
