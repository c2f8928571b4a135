import { pino } from 'pino';
import { afterEach, expect, it, vi } from 'vitest';
import type { EventSnapshot } from '@pm/shared/snapshots';
import type { StreamEntry } from '@pm/shared/stream';
import { createLivePrices, type LivePrices } from './live-prices.js';

/**
 * The overlay's own bookkeeping, on a clock the test moves: a price is held for `holdMs` from its
 * newest message (a replaced price does not expire with the message it replaced), and an entry
 * that is not a well-formed price changes nothing.
 */

let now = 0;
let prices: LivePrices | undefined;
afterEach(() => {
  prices?.stop();
  vi.useRealTimers();
});

const logger = pino({ level: 'silent' });
let seq = 0;
function price(marketId: string, outcome_index: number, chance: unknown, event = 'ev'): StreamEntry {
  const data = JSON.stringify({ event, market_id: marketId, outcome_index, outcome: 'Yes', chance, at: new Date(now).toISOString() });
  return { id: `${++seq}-0`, topic: 'price', event, market: marketId, data };
}

/** A one-market event page at chance 0.5 whose market can be moved (it has a day-ago basis). */
const page = {
  event: { markets: [{ id: 'm1', outcomes: [{ name: 'Yes', chance: 0.5, odds: {} }, { name: 'No', chance: 0.5, odds: {} }], change_24h: 0 }] },
  overlay: { m1: { day_ago: 0.5 } },
} as unknown as EventSnapshot;
const shown = (p: LivePrices) => (p.apply('event:ev', page) as EventSnapshot).event.markets[0]?.outcomes[0]?.chance;

it('holds a price for holdMs after its newest message, not after one it replaced', () => {
  // The sweep's timer is faked: each check below follows sweeps that have certainly run.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  prices = createLivePrices({ clock: () => now, logger, holdMs: 10_000, sweepMs: 5 });
  now = 1_000;
  prices.offer([price('m1', 0, 0.6)]);
  expect(shown(prices)).toBe(0.6);
  now = 6_000;
  prices.offer([price('m1', 0, 0.7)]);
  // The first message's hold is over; the price it set was replaced and is held until 16,000.
  now = 11_500;
  vi.advanceTimersByTime(30);
  expect(prices.size()).toBe(1);
  expect(shown(prices)).toBe(0.7);
  now = 16_500;
  vi.advanceTimersByTime(30);
  expect(prices.size()).toBe(0);
  expect(shown(prices)).toBe(0.5);
});

it('lays nothing over a page for entries that are not well-formed prices', () => {
  prices = createLivePrices({ clock: () => now, logger, holdMs: 10_000 });
  now = 1_000;
  const bad: StreamEntry[] = [
    { id: '1-0', topic: 'price', event: 'ev', market: 'm1', data: '{not json' },
    price('m1', 0, 1.5),
    price('m1', 0, '0.6'),
    price('m1', -1, 0.6),
    price('m1', 0.5, 0.6),
    price('m1', 0, 0.6, ''),
    { id: '2-0', topic: 'price', event: 'ev', market: 'm1', data: 'null' },
    { ...price('m1', 0, 0.6), topic: 'score' },
  ];
  prices.offer(bad);
  expect(prices.size()).toBe(0);
  expect(shown(prices)).toBe(0.5);
});
