import { beforeEach, describe, expect, it } from 'vitest';
import { useHarness } from '../testing/harness.js';
import { gammaEvent, waitFor, type FakeMarketSocket } from '../testing/fake-exchange.js';
import type { Ingestor } from '../ingestor.js';

/**
 * What the real exchange does to a feed: garbage frames, dropped sockets whose initial dump misses
 * books. The ingestor must skip and count the garbage without touching a book, and fill books the
 * dump missed from `GET /book` after a reconnect.
 */
const tok = (n: number) => `3000000000000000000000000000000000000000000000000000000000000000000000${String(n).padStart(3, '0')}`;
const A = tok(1);
const B = tok(2);
const C = tok(3);
const D = tok(4);

const book = (asset: string, bid: string, ask: string, ts: number) => ({
  event_type: 'book',
  asset_id: asset,
  market: '0xm1',
  bids: [{ price: bid, size: '100' }, { price: String(Number(bid) - 0.05), size: '40' }],
  asks: [{ price: ask, size: '100' }],
  timestamp: String(ts),
  hash: `h${ts}`,
});

const h = useHarness('ingestor_robust');
let ingestor: Ingestor;

const subscribeOf = (s: FakeMarketSocket) =>
  s.received.find((m): m is { assets_ids: string[] } => typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'market');
const chance = (token: string) => h.redis.redis.hget(h.keys.chances, token);

// Each test: a new ingestor on the same two markets, with books for A and B in the first dump only.
beforeEach(async () => {
  h.fake.events.push(gammaEvent('e1', [{ id: 'm1', tokens: [A, B], prices: ['0.6', '0.4'] }, { id: 'm2', tokens: [C, D], prices: ['0.3', '0.7'] }]));
  h.fake.initialBooks.set(A, book(A, '0.50', '0.54', 1_000));
  h.fake.initialBooks.set(B, book(B, '0.46', '0.50', 1_000));
  ingestor = h.ingestor({ resyncDelayMs: 150, resyncPaceMs: 5 });
  await ingestor.start();
  await waitFor(async () => (await chance(A)) === '0.52', 3000, 'first book of A');
});

function bookState(token: string) {
  const b = ingestor.book(token);
  return b && { bestBid: b.bestBid(), bestAsk: b.bestAsk(), lastTrade: b.lastTrade, levels: b.levels() };
}

describe('malformed frames', () => {
  it('are skipped and counted, and leave the book exactly as it was', async () => {
    const before = bookState(A);
    expect(before).toEqual({ bestBid: 0.5, bestAsk: 0.54, lastTrade: null, levels: { bids: 2, asks: 1 } });
    const stats0 = ingestor.stats().market;
    const garbage: unknown[] = [
      'garbage{',
      '[{"event_type":"book",',
      '\u0000\u0001',
      [1, 2, 3],
      null,
      42,
      { event_type: 42 },
      { no_type: true, asset_id: A },
      { event_type: 'book', asset_id: A, bids: 'wipe me', asks: 'wipe me' },
      { event_type: 'book', asset_id: A },
      { event_type: 'book', bids: [], asks: [] },
      { event_type: 'price_change', market: '0xm1', timestamp: '5000', price_changes: 'nope' },
      { event_type: 'price_change', market: '0xm1', timestamp: '5000', price_changes: [{ asset_id: A, price: 'abc', size: '1', side: 'BUY' }] },
      { event_type: 'price_change', market: '0xm1', timestamp: '5000', price_changes: [{ asset_id: A, price: '0.51', size: '1', side: 'SIDEWAYS' }] },
      { event_type: 'price_change', market: '0xm1', timestamp: '5000', price_changes: [{ asset_id: A, price: '2', size: '1', side: 'BUY' }] },
      { event_type: 'price_change', market: '0xm1', timestamp: '5000', price_changes: [{ asset_id: A, price: '0.51', size: '-3', side: 'BUY' }] },
      { event_type: 'price_change', asset_id: A, market: '0xm1', timestamp: '5000', changes: [{ price: '', size: '', side: '' }] },
      { event_type: 'last_trade_price', asset_id: A, price: 'NaN', timestamp: '5000' },
      { event_type: 'last_trade_price', asset_id: A, price: '-1', timestamp: '5000' },
      [{ event_type: 'book' }, 'x', { event_type: 'totally_new_type', asset_id: A }],
    ];
    for (const g of garbage) h.fake.broadcastMarket(g);
    // A good frame after the garbage proves the socket survived and everything before it was handled.
    h.fake.broadcastMarket(book(C, '0.20', '0.24', 1_000));
    await waitFor(async () => (await chance(C)) === '0.22', 3000, 'good frame after the garbage');
    await ingestor.flush();

    expect(bookState(A)).toEqual(before);
    expect(await chance(A)).toBe('0.52');
    const stats = ingestor.stats().market;
    expect(stats.textFrames - stats0.textFrames).toBe(3);
    // Everything that is JSON but not a usable message: 3+1+1+1+1+1+1+1+1+1 elements, plus the
    // invalid level inside the current-shape price_change with a bad price (parsed, then dropped).
    expect(stats.malformed - stats0.malformed).toBeGreaterThanOrEqual(12);
    expect(stats.unknown - stats0.unknown).toBe(1);
    expect(ingestor.stats().market.sockets.reconnects).toBe(0);
  });
});

describe('reconnect', () => {
  it('the first subscribe trusts the initial dump: no REST book requests', async () => {
    // C and D got no book from the first dump, yet no resync waits for its grace or has run: one
    // scheduled at the first subscribe would show in `waiting` (or in `resyncs` once it ran).
    expect(ingestor.stats().market.sockets.subscribed).toBe(4);
    expect(ingestor.stats().market.resync).toEqual({ waiting: 0, resyncs: 0, fetched: 0, failed: 0 });
    expect(h.fake.requests.filter((r) => r.startsWith('/book'))).toEqual([]);
  });

  it('resubscribes, fills books the initial dump missed from GET /book, and keeps ws books over REST ones', async () => {
    // After the drop the dump re-sends A (moved) but not B, C or D; REST knows B and C.
    h.fake.initialBooks.set(A, book(A, '0.60', '0.64', 2_000));
    h.fake.restBooks.set(B, { market: '0xm1', asset_id: B, bids: [{ price: '0.36', size: '5' }], asks: [{ price: '0.40', size: '5' }], timestamp: '2000', hash: 'r', tick_size: '0.01' });
    h.fake.restBooks.set(C, { market: '0xm2', asset_id: C, bids: [{ price: '0.30', size: '5' }], asks: [{ price: '0.32', size: '5' }], timestamp: '2000', hash: 'r' });
    h.fake.initialBooks.delete(B);
    const sockets = h.fake.marketSockets.length;
    const requests = h.fake.requests.length;
    h.fake.marketSockets[sockets - 1]!.ws.terminate();

    const fresh = await waitFor(() => {
      const s = h.fake.marketSockets[sockets];
      return s && subscribeOf(s) ? s : undefined;
    }, 5000, 'resubscribe');
    expect(subscribeOf(fresh)!.assets_ids.sort()).toEqual([A, B, C, D].sort());
    await waitFor(async () => (await chance(A)) === '0.62', 3000, 'A from the dump');
    await waitFor(async () => (await chance(B)) === '0.38', 3000, 'B from REST');
    await waitFor(async () => (await chance(C)) === '0.31', 3000, 'C from REST');

    // The requests go one at a time in subscription order: D's may still be on its way after B and C show.
    await waitFor(() => ingestor.stats().market.resync.failed >= 1 || undefined, 3000, 'D asked for over REST');
    const bookRequests = h.fake.requests.slice(requests).filter((r) => r.startsWith('/book'));
    // A had its book from the dump: not fetched. D has no REST book (404): fetched, counted as failed, and left alone.
    expect(bookRequests.sort()).toEqual([B, C, D].map((t) => `/book?token_id=${t}`).sort());
    const resync = ingestor.stats().market.resync;
    expect(resync).toMatchObject({ fetched: 2, failed: 1 });
    await ingestor.flush();
    expect(await chance(D)).toBe('0.7');

    // Deltas after the REST book apply on top of it.
    h.fake.broadcastMarket({ event_type: 'price_change', market: '0xm1', timestamp: '2001', price_changes: [{ asset_id: B, price: '0.38', size: '9', side: 'BUY', hash: 'x', best_bid: '', best_ask: '0.40' }] });
    await waitFor(async () => (await chance(B)) === '0.39', 3000, 'delta on the REST book');
  });
});
