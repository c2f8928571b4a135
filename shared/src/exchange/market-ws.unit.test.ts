import { describe, expect, it } from 'vitest';
import { parseMarketFrame, parseRestBook, type MarketMessage } from './market-ws.js';

const A = '111';
const B = '222';

function messages(raw: unknown): { messages: MarketMessage[]; malformed: number; unknown: Record<string, number> } {
  const f = parseMarketFrame(typeof raw === 'string' ? raw : JSON.stringify(raw));
  if (f.kind !== 'messages') throw new Error(`expected messages, got text ${f.text}`);
  return f;
}

describe('parseMarketFrame', () => {
  it('reports non-JSON text frames as text', () => {
    expect(parseMarketFrame('PONG')).toEqual({ kind: 'text', text: 'PONG' });
    expect(parseMarketFrame('NO NEW ASSETS')).toEqual({ kind: 'text', text: 'NO NEW ASSETS' });
  });

  it('reads a book with decimal-string levels and the timestamp as ms', () => {
    const { messages: [m] } = messages({
      event_type: 'book',
      asset_id: A,
      market: '0xm',
      bids: [{ price: '0.48', size: '30' }],
      asks: [{ price: '0.52', size: '25' }],
      timestamp: '1700000000123',
      hash: 'h',
    });
    expect(m).toMatchObject({ type: 'book', assetId: A, bids: [{ price: '0.48', size: '30' }], asks: [{ price: '0.52', size: '25' }], timestamp: 1700000000123 });
  });

  it('reads the current price_change shape (asset per change)', () => {
    const { messages: [m] } = messages({
      event_type: 'price_change',
      market: '0xm',
      timestamp: '1700000000200',
      price_changes: [
        { asset_id: A, price: '0.5', size: '10', side: 'BUY', hash: 'x', best_bid: '0.5', best_ask: '' },
        { asset_id: B, price: '0.5', size: '0', side: 'sell', hash: 'y', best_bid: '', best_ask: '' },
      ],
    });
    expect(m).toEqual({
      type: 'price_change',
      market: '0xm',
      timestamp: 1700000000200,
      changes: [
        // The exchange's top of book is kept (authoritative); `""` is unknown, not 0.
        { assetId: A, price: '0.5', size: '10', side: 'BUY', bestBid: 0.5, bestAsk: null },
        { assetId: B, price: '0.5', size: '0', side: 'SELL', bestBid: null, bestAsk: null },
      ],
    });
  });

  it('reads the older price_change shape (asset_id + changes)', () => {
    const { messages: [m] } = messages({
      event_type: 'price_change',
      asset_id: A,
      market: '0xm',
      timestamp: '1700000000300',
      changes: [{ price: '0.47', side: 'BUY', size: '5' }],
    });
    expect(m).toEqual({ type: 'price_change', market: '0xm', timestamp: 1700000000300, changes: [{ assetId: A, price: '0.47', size: '5', side: 'BUY', bestBid: null, bestAsk: null }] });
  });

  it('dispatches every element of an array frame', () => {
    const { messages: ms } = messages([
      { event_type: 'last_trade_price', asset_id: A, market: '0xm', price: '0.51', size: '1', side: 'BUY', timestamp: '1' },
      { event_type: 'tick_size_change', asset_id: A, market: '0xm', old_tick_size: '0.01', new_tick_size: '0.001', timestamp: '2' },
      { event_type: 'best_bid_ask', asset_id: A, market: '0xm', best_bid: '0.5', best_ask: '', spread: '', timestamp: '3' },
    ]);
    expect(ms.map((m) => m.type)).toEqual(['last_trade_price', 'tick_size_change', 'best_bid_ask']);
    expect(ms[2]).toMatchObject({ bestBid: 0.5, bestAsk: null });
  });

  it('skips an unknown event type on its own and counts it', () => {
    const f = messages([{ event_type: 'mystery', x: 1 }, { event_type: 'last_trade_price', asset_id: A, price: '0.4', timestamp: '9' }]);
    expect(f.unknown).toEqual({ mystery: 1 });
    expect(f.messages).toHaveLength(1);
    expect(f.malformed).toBe(0);
  });

  it('skips a malformed element, keeping the rest of the frame', () => {
    const f = messages([
      { event_type: 'book', market: '0xm', bids: [], asks: [] }, // no asset_id
      42,
      { no_type: true },
      { event_type: 'price_change', market: '0xm' }, // neither shape
      { event_type: 'book', asset_id: B, bids: [{ price: '0.3', size: '1' }], asks: [], timestamp: '5' },
    ]);
    expect(f.malformed).toBe(4);
    expect(f.messages).toEqual([expect.objectContaining({ type: 'book', assetId: B })]);
  });

  it('skips a malformed change inside a price_change, keeping the good ones', () => {
    const f = messages({
      event_type: 'price_change',
      market: '0xm',
      timestamp: '7',
      price_changes: [{ asset_id: A, price: 'abc', size: '1', side: 'BUY' }, { asset_id: A, price: '0.4', size: '1', side: 'SIDEWAYS' }, { asset_id: A, price: '0.4', size: '2', side: 'BUY' }],
    });
    expect(f.malformed).toBe(2);
    expect(f.messages[0]).toMatchObject({ changes: [{ price: '0.4', size: '2' }] });
  });

  it('reads market_resolved and new_market', () => {
    const f = messages([
      { event_type: 'market_resolved', id: '501', market: '0xm', assets_ids: [A, B], winning_asset_id: A, winning_outcome: 'Yes', timestamp: '10' },
      { event_type: 'new_market', id: '502', market: '0xn', slug: 's', assets_ids: [A], outcomes: ['Yes', 'No'], event_message: { id: '9001', slug: 'ev', title: 'E' }, timestamp: '11' },
    ]);
    expect(f.messages[0]).toMatchObject({ type: 'market_resolved', marketId: '501', winningAssetId: A, assetIds: [A, B] });
    expect(f.messages[1]).toMatchObject({ type: 'new_market', eventId: '9001', eventSlug: 'ev' });
  });

  it('counts JSON that is not an object as malformed, never throws', () => {
    expect(messages('null').malformed).toBe(1);
    expect(messages('"hello"').malformed).toBe(1);
    expect(messages('[]').messages).toEqual([]);
  });
});

describe('a book that would wipe the local one', () => {
  it('is malformed without both sides as arrays, but an empty book with [] sides is a real book', () => {
    const r = messages([
      { event_type: 'book', asset_id: A, bids: 'x', asks: [] },
      { event_type: 'book', asset_id: A, asks: [] },
      { event_type: 'book', asset_id: A, timestamp: '1' },
      { event_type: 'book', asset_id: B, bids: [], asks: [], timestamp: '2' },
      { event_type: 'book', asset_id: B, buys: [{ price: '0.4', size: '1' }], sells: [], timestamp: '3' },
    ]);
    expect(r.malformed).toBe(3);
    expect(r.messages).toEqual([
      expect.objectContaining({ type: 'book', assetId: B, bids: [], asks: [], timestamp: 2 }),
      expect.objectContaining({ type: 'book', assetId: B, bids: [{ price: '0.4', size: '1' }], timestamp: 3 }),
    ]);
  });
});

describe('parseRestBook', () => {
  const body = {
    market: '0xm', asset_id: A, timestamp: '1700000000000', hash: 'h', min_order_size: '5', tick_size: '0.01', neg_risk: false,
    bids: [{ price: '0.45', size: '10' }], asks: [{ price: '0.55', size: '12' }], last_trade_price: '0.5',
  };

  it('reads GET /book (the ws book without event_type)', () => {
    expect(parseRestBook(body, A)).toEqual({
      type: 'book', assetId: A, market: '0xm', bids: [{ price: '0.45', size: '10' }], asks: [{ price: '0.55', size: '12' }],
      timestamp: 1700000000000, lastTradePrice: '0.5', tickSize: '0.01',
    });
  });

  it('refuses another token\'s book, an error body and garbage', () => {
    expect(parseRestBook(body, B)).toBeNull();
    expect(parseRestBook({ error: 'No orderbook exists for the requested token id' }, A)).toBeNull();
    expect(parseRestBook('<html>', A)).toBeNull();
    expect(parseRestBook(null, A)).toBeNull();
  });
});
