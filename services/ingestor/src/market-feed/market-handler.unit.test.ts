import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createMarketHandler } from './market-handler.js';
import { OutcomeDirectory } from '../catalog/outcome-directory.js';
import { formatChance, type ChancePublisher } from './chance-publisher.js';
import type { MarketResolution } from '../resolution/record-resolution.js';

const A = '1001';
const B = '1002';

/** An in-memory publisher with the real one's "only when it moved" rule. */
function memoryPublisher(): ChancePublisher & { values: Map<string, string>; moves: number } {
  const values = new Map<string, string>();
  const pub = {
    values,
    moves: 0,
    publish(tokenId: string, chance: number | null) {
      if (chance === null) return false;
      const text = formatChance(chance);
      if (values.get(tokenId) === text) return false;
      values.set(tokenId, text);
      pub.moves++;
      return true;
    },
    keepConfirmed: () => {},
    last: (t: string) => values.get(t),
    forget: (t: string) => void values.delete(t),
    flush: async () => true,
    close: async () => {},
    stats: () => ({ published: values.size, writes: 0 }),
  };
  return pub;
}

function setup() {
  const outcomes = new OutcomeDirectory();
  outcomes.upsert({ tokenId: A, marketId: 'm1', eventId: 'e1', eventSlug: 'event-one', outcomeIndex: 0, name: 'Yes', catalogPrice: 0.5, closed: false });
  outcomes.upsert({ tokenId: B, marketId: 'm1', eventId: 'e1', eventSlug: 'event-one', outcomeIndex: 1, name: 'No', catalogPrice: 0.5, closed: false });
  const publisher = memoryPublisher();
  const dirty: string[] = [];
  const resolved: MarketResolution[] = [];
  const refreshes: unknown[] = [];
  const resyncs: string[] = [];
  const handler = createMarketHandler({
    outcomes,
    publisher,
    markDirty: (e) => dirty.push(e),
    resolve: (r) => resolved.push(r),
    clock: { now: () => 0 },
    logger: pino({ level: 'silent' }),
  });
  handler.onNewMarket((ref) => refreshes.push(ref));
  handler.onCrossedBook((t) => resyncs.push(t));
  return { handler, publisher, dirty, resolved, refreshes, resyncs };
}

const book = (asset: string, bid: string, ask: string, ts: number) => ({
  event_type: 'book',
  asset_id: asset,
  market: '0xm',
  bids: [{ price: '0.01', size: '100' }, { price: bid, size: '10' }],
  asks: [{ price: '0.99', size: '100' }, { price: ask, size: '10' }],
  timestamp: String(ts),
  hash: 'h',
});

describe('market handler', () => {
  it('a book sets the midpoint chance and marks the event dirty', () => {
    const { handler, publisher, dirty } = setup();
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 1000)));
    expect(publisher.values.get(A)).toBe('0.42');
    expect(dirty).toEqual(['e1']);
  });

  it('applies the current price_change shape and drops deltas older than the book', () => {
    const { handler, publisher } = setup();
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 1000)));
    handler.handleFrame(JSON.stringify({ event_type: 'price_change', market: '0xm', timestamp: '999', price_changes: [{ asset_id: A, price: '0.43', size: '5', side: 'BUY' }] }));
    expect(publisher.values.get(A)).toBe('0.42');
    expect(handler.stats().droppedDeltas).toBe(1);
    handler.handleFrame(JSON.stringify({ event_type: 'price_change', market: '0xm', timestamp: '1001', price_changes: [{ asset_id: A, price: '0.43', size: '5', side: 'BUY' }] }));
    expect(publisher.values.get(A)).toBe('0.435');
  });

  it('applies the older price_change shape', () => {
    const { handler, publisher } = setup();
    handler.handleFrame(JSON.stringify(book(B, '0.50', '0.60', 1000)));
    handler.handleFrame(JSON.stringify({ event_type: 'price_change', asset_id: B, market: '0xm', timestamp: '1002', changes: [{ price: '0.60', side: 'SELL', size: '0' }, { price: '0.54', side: 'SELL', size: '3' }] }));
    expect(publisher.values.get(B)).toBe('0.52');
  });

  it('a malformed element is skipped while the rest of the frame applies', () => {
    const { handler, publisher } = setup();
    handler.handleFrame(JSON.stringify([{ event_type: 'book', bids: 'nope' }, { event_type: 'who_knows' }, book(A, '0.30', '0.34', 5), book(B, '0.66', '0.70', 5)]));
    expect(publisher.values.get(A)).toBe('0.32');
    expect(publisher.values.get(B)).toBe('0.68');
    expect(handler.stats()).toMatchObject({ malformed: 1, unknown: 1, books: 2 });
  });

  it('ignores text frames and never throws on garbage', () => {
    const { handler, publisher } = setup();
    for (const f of ['PONG', 'NO NEW ASSETS', '{', '[1,2', 'null', '[null]']) handler.handleFrame(f);
    expect(publisher.values.size).toBe(0);
    expect(handler.stats().textFrames).toBe(4);
  });

  it('a duplicate book changes nothing and marks nothing again', () => {
    const { handler, publisher, dirty } = setup();
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 1000)));
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 1000)));
    expect(publisher.moves).toBe(1);
    expect(dirty).toEqual(['e1']);
  });

  it('best_bid_ask states the top of book: the chance follows it, a later book replaces it', () => {
    const { handler, publisher } = setup();
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 1000)));
    handler.handleFrame(JSON.stringify({ event_type: 'best_bid_ask', asset_id: A, market: '0xm', best_bid: '0.46', best_ask: '0.48', spread: '0.02', timestamp: '2000' }));
    expect(publisher.values.get(A)).toBe('0.47');
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 3000)));
    expect(publisher.values.get(A)).toBe('0.42');
  });

  const change = (asset: string, price: string, size: string, side: string, bestBid: string, bestAsk: string, ts: number) => ({
    event_type: 'price_change',
    market: '0xm',
    timestamp: String(ts),
    price_changes: [{ asset_id: asset, price, size, side, hash: 'h', best_bid: bestBid, best_ask: bestAsk }],
  });

  it('a crossed local book shows the exchange\'s top, never its midpoint, and asks a REST resync once', () => {
    const { handler, publisher, resyncs } = setup();
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 1000)));
    // A bid at 0.50 lands while the ask at 0.44 was taken on the exchange but its removal never
    // reached us: locally 0.50/0.44 (crossed); the exchange says 0.50/0.52.
    handler.handleFrame(JSON.stringify(change(A, '0.50', '10', 'BUY', '0.50', '0.52', 1001)));
    expect(publisher.values.get(A)).toBe('0.51');
    expect(resyncs).toEqual([A]);
    handler.handleFrame(JSON.stringify(change(A, '0.49', '10', 'BUY', '0.50', '0.52', 1002)));
    expect(resyncs).toEqual([A]);
    expect(handler.stats().crossedBooks).toBe(1);
    // The REST book arrives: its own top stands, and the next crossing may ask again.
    handler.applyBook({ type: 'book', assetId: A, market: '0xm', bids: [{ price: '0.50', size: '10' }], asks: [{ price: '0.52', size: '5' }], timestamp: 1003, lastTradePrice: null, tickSize: null });
    expect(publisher.values.get(A)).toBe('0.51');
  });

  it('a stated side above the local book\'s other side shows no midpoint and asks a REST resync', () => {
    const { handler, publisher, resyncs } = setup();
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 1000)));
    // The exchange states a bid of 0.46 and no ask: the shown top takes the local ask (0.44), which
    // the exchange's bid says is gone. The local book alone does not cross.
    handler.handleFrame(JSON.stringify({ event_type: 'best_bid_ask', asset_id: A, market: '0xm', best_bid: '0.46', best_ask: '', spread: '', timestamp: '1001' }));
    expect(publisher.values.get(A)).toBe('0.5'); // the catalog price (no trade yet), not 0.45
    expect(resyncs).toEqual([A]);
  });

  it('a crossed book with no stated top shows the last trade, not the midpoint', () => {
    const { handler, publisher, resyncs } = setup();
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 1000)));
    handler.handleFrame(JSON.stringify({ event_type: 'price_change', asset_id: A, market: '0xm', timestamp: '1001', changes: [{ price: '0.50', side: 'BUY', size: '3' }] }));
    expect(publisher.values.get(A)).toBe('0.5'); // the catalog price (no trade yet), not 0.47
    expect(resyncs).toEqual([A]);
  });

  it('a book older than what the held book reflects is not applied (a resync applies fresh books only)', () => {
    const { handler, publisher } = setup();
    handler.handleFrame(JSON.stringify(book(A, '0.40', '0.44', 1000)));
    handler.handleFrame(JSON.stringify(change(A, '0.42', '10', 'BUY', '0.42', '0.44', 1500)));
    handler.handleFrame(JSON.stringify(book(A, '0.20', '0.24', 1200)));
    expect(publisher.values.get(A)).toBe('0.43');
    expect(handler.stats().droppedBooks).toBe(1);
  });

  it('uses the last trade when the spread is wider than 0.10', () => {
    const { handler, publisher } = setup();
    handler.handleFrame(JSON.stringify(book(A, '0.30', '0.60', 1000)));
    handler.handleFrame(JSON.stringify({ event_type: 'last_trade_price', asset_id: A, market: '0xm', price: '0.37', size: '1', side: 'BUY', timestamp: '1001' }));
    expect(publisher.values.get(A)).toBe('0.37');
  });

  it('market_resolved names the market and winner by the winning token; new_market asks for a refresh', () => {
    const { handler, resolved, refreshes } = setup();
    handler.handleFrame(JSON.stringify([
      { event_type: 'market_resolved', id: 'm1', market: '0xm', assets_ids: [A, B], winning_asset_id: B, winning_outcome: 'No', timestamp: '1' },
      { event_type: 'new_market', id: 'm2', market: '0xn', assets_ids: ['9'], event_message: { id: 'e2', slug: 'ev2' }, timestamp: '2' },
    ]));
    expect(resolved).toEqual([{ marketId: 'm1', winningOutcomeIndex: 1, voided: false, source: 'ws' }]);
    expect(refreshes).toEqual([{ id: 'e2', slug: 'ev2' }]);
  });
});
