import { describe, expect, it } from 'vitest';
import { OrderBook, parseDecimal } from './orderbook.js';

const TOKEN = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
const lv = (price: string, size: string) => ({ price, size });

function bookWith(bids: Array<[string, string]>, asks: Array<[string, string]>, at = 1_000): OrderBook {
  const book = new OrderBook(TOKEN);
  book.applySnapshot(bids.map(([p, s]) => lv(p, s)), asks.map(([p, s]) => lv(p, s)), at);
  return book;
}

/** The book's best bid and ask (null: that side is empty), and how many levels each side holds. */
function expectBook(book: OrderBook, top: { bid: number | null; ask: number | null; bids: number; asks: number }): void {
  expect({ bid: book.bestBid(), ask: book.bestAsk(), ...book.levels() }).toEqual(top);
}

describe('parseDecimal', () => {
  it('given exchange decimal strings, when parsed, then numbers', () => {
    expect(parseDecimal('0.52')).toBe(0.52);
    expect(parseDecimal('150.5')).toBe(150.5);
    expect(parseDecimal('0')).toBe(0);
    expect(parseDecimal('.5')).toBe(0.5);
    expect(parseDecimal(' 1 ')).toBe(1);
    expect(parseDecimal(0.25)).toBe(0.25);
  });

  it('given "" or garbage, when parsed, then null (never the 0 that Number("") gives)', () => {
    for (const bad of ['', '   ', 'abc', '0x10', '1,5', 'Infinity', 'NaN', '1.2.3', null, undefined, {}, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(parseDecimal(bad)).toBeNull();
    }
  });
});

describe('OrderBook', () => {
  it('given a new book, when read, then empty with no snapshot', () => {
    const book = new OrderBook(TOKEN);
    expect(book.tokenId).toBe(TOKEN);
    expect(book.bestBid()).toBeNull();
    expect(book.bestAsk()).toBeNull();
    expect(book.lastTrade).toBeNull();
    expect(book.snapshotAt).toBe(0);
    expect(book.hasSnapshot).toBe(false);
    expect(book.levels()).toEqual({ bids: 0, asks: 0 });
  });

  it('given bids ascending and asks descending (real captures), when snapshotted, then best is max bid / min ask', () => {
    const book = bookWith(
      [['0.01', '100'], ['0.45', '10'], ['0.48', '5']],
      [['0.99', '100'], ['0.60', '10'], ['0.52', '5']],
      1_700_000_000_000,
    );
    expect(book.bestBid()).toBe(0.48);
    expect(book.bestAsk()).toBe(0.52);
    expect(book.snapshotAt).toBe(1_700_000_000_000);
    expect(book.hasSnapshot).toBe(true);
    expect(book.levels()).toEqual({ bids: 3, asks: 3 });
  });

  it('given levels in no order at all, when snapshotted, then best is still max bid / min ask', () => {
    const book = bookWith([['0.30', '1'], ['0.48', '1'], ['0.10', '1']], [['0.70', '1'], ['0.52', '1'], ['0.90', '1']]);
    expect(book.bestBid()).toBe(0.48);
    expect(book.bestAsk()).toBe(0.52);
  });

  it('given an existing book, when a new snapshot arrives, then it replaces every level', () => {
    const book = bookWith([['0.48', '5'], ['0.47', '5']], [['0.52', '5']]);
    book.applySnapshot([lv('0.30', '1')], [], 2_000);
    expectBook(book, { bid: 0.3, ask: null, bids: 1, asks: 0 });
    expect(book.snapshotAt).toBe(2_000);
  });

  it('given a snapshot with garbage and zero-size levels, when applied, then they are skipped', () => {
    const book = bookWith([['0.48', '5'], ['', '5'], ['abc', '1'], ['0.49', '0'], ['1.5', '3'], ['0.47', '-1']], [['0.52', '']]);
    expectBook(book, { bid: 0.48, ask: null, bids: 1, asks: 0 });
  });

  it('given a BUY delta above the best bid, when applied, then it becomes the best bid', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']]);
    expect(book.applyLevel('BUY', '0.50', '3', 1_001)).toBe(true);
    expect(book.bestBid()).toBe(0.5);
    expect(book.bestAsk()).toBe(0.52);
  });

  it('given a SELL delta below the best ask, when applied, then it becomes the best ask', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']]);
    expect(book.applyLevel('SELL', '0.51', '3', 1_001)).toBe(true);
    expect(book.bestAsk()).toBe(0.51);
    expect(book.bestBid()).toBe(0.48);
  });

  it('given size "0" at the best level, when applied, then the next level becomes best', () => {
    const book = bookWith([['0.40', '1'], ['0.48', '5'], ['0.45', '2']], [['0.60', '1'], ['0.52', '5'], ['0.55', '2']]);
    expect(book.applyLevel('BUY', '0.48', '0', 1_001)).toBe(true);
    expect(book.applyLevel('SELL', '0.52', '0', 1_001)).toBe(true);
    expectBook(book, { bid: 0.45, ask: 0.55, bids: 2, asks: 2 });
  });

  it('given the best level removed and a better one added before reading, when read, then the new best is right', () => {
    const book = bookWith([['0.48', '5'], ['0.45', '2']], [['0.52', '5']]);
    book.applyLevel('BUY', '0.48', '0', 1_001);
    book.applyLevel('BUY', '0.46', '1', 1_002);
    book.applyLevel('BUY', '0.44', '1', 1_003);
    expect(book.bestBid()).toBe(0.46);
  });

  it('given the last level on a side removed, when read, then that side is empty (one-sided book)', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']]);
    book.applyLevel('SELL', '0.52', '0', 1_001);
    expect(book.bestAsk()).toBeNull();
    expect(book.bestBid()).toBe(0.48);
  });

  it('given a size change at a non-best level, when applied, then best is unchanged and the level is updated not added', () => {
    const book = bookWith([['0.48', '5'], ['0.45', '2']], []);
    book.applyLevel('BUY', '0.45', '9', 1_001);
    expect(book.bestBid()).toBe(0.48);
    expect(book.levels().bids).toBe(2);
  });

  it('given "0.5" and "0.50", when applied, then they are the same level', () => {
    const book = bookWith([['0.50', '5']], []);
    book.applyLevel('BUY', '0.5', '0', 1_001);
    expect(book.levels().bids).toBe(0);
    expect(book.bestBid()).toBeNull();
  });

  it('given a delta older than the last snapshot, when applied, then it is dropped and nothing changes', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']], 5_000);
    expect(book.applyLevel('BUY', '0.50', '3', 4_999)).toBe(false);
    expect(book.applyLevel('SELL', '0.52', '0', 4_000)).toBe(false);
    expectBook(book, { bid: 0.48, ask: 0.52, bids: 1, asks: 1 });
  });

  it('given a delta stamped the same ms as the snapshot, when applied, then it applies (not older)', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']], 5_000);
    expect(book.applyLevel('BUY', '0.49', '1', 5_000)).toBe(true);
    expect(book.bestBid()).toBe(0.49);
  });

  it('given a delta without a usable timestamp, when applied, then it applies in wire order (cannot be proven stale)', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']], 5_000);
    expect(book.applyLevel('BUY', '0.49', '1', Number.NaN)).toBe(true);
    expect(book.bestBid()).toBe(0.49);
  });

  it('given a snapshot without a usable timestamp, when applied, then it replaces the book but keeps snapshotAt', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']], 5_000);
    book.applySnapshot([lv('0.40', '1')], [lv('0.60', '1')], Number.NaN);
    expect(book.bestBid()).toBe(0.4);
    expect(book.snapshotAt).toBe(5_000);
  });

  it('given the same message twice, when applied, then the book is as after once', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']]);
    const once = (): void => {
      book.applyLevel('BUY', '0.49', '7', 1_001);
      book.applyLevel('SELL', '0.52', '0', 1_001);
      book.applyLevel('SELL', '0.53', '4', 1_001);
    };
    once();
    const after = { bid: book.bestBid(), ask: book.bestAsk(), levels: book.levels() };
    once();
    expect({ bid: book.bestBid(), ask: book.bestAsk(), levels: book.levels() }).toEqual(after);
    expect(after).toEqual({ bid: 0.49, ask: 0.53, levels: { bids: 2, asks: 1 } });
  });

  it('given the same snapshot twice, when applied, then the book is unchanged', () => {
    const book = bookWith([['0.48', '5'], ['0.47', '1']], [['0.52', '5']], 3_000);
    book.applySnapshot([lv('0.48', '5'), lv('0.47', '1')], [lv('0.52', '5')], 3_000);
    expect(book.levels()).toEqual({ bids: 2, asks: 1 });
    expect(book.bestBid()).toBe(0.48);
    expect(book.snapshotAt).toBe(3_000);
  });

  it('given garbage in a delta, when applied, then it returns false and the book is untouched', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']]);
    const bad: Array<[string, string]> = [
      ['', '5'], ['abc', '5'], ['0.50', ''], ['0.50', 'x'], ['0.50', '-1'], ['-0.1', '5'], ['1.01', '5'], ['0', '5'],
    ];
    for (const [price, size] of bad) expect(book.applyLevel('BUY', price, size, 1_001)).toBe(false);
    expect(book.applyLevel('HOLD' as 'BUY', '0.50', '5', 1_001)).toBe(false);
    expectBook(book, { bid: 0.48, ask: 0.52, bids: 1, asks: 1 });
  });

  it('given a transiently crossed book, when read, then it is kept as is (not fatal)', () => {
    const book = bookWith([['0.48', '5']], [['0.52', '5']]);
    book.applyLevel('BUY', '0.55', '1', 1_001);
    expect(book.bestBid()).toBe(0.55);
    expect(book.bestAsk()).toBe(0.52);
  });

  it('given trades, when recorded, then the newest is kept and invalid or older ones are ignored', () => {
    const book = new OrderBook(TOKEN);
    book.setLastTrade('0.51', 1_000);
    expect(book.lastTrade).toBe(0.51);
    book.setLastTrade('0.53', 2_000);
    expect(book.lastTrade).toBe(0.53);
    book.setLastTrade('0.40', 1_500);
    expect(book.lastTrade).toBe(0.53);
    book.setLastTrade('', 3_000);
    book.setLastTrade('2', 3_000);
    expect(book.lastTrade).toBe(0.53);
    book.setLastTrade('0.53', 2_000);
    expect(book.lastTrade).toBe(0.53);
  });

  it('given hundreds of levels and many removals of the best, when read, then best stays correct', () => {
    const book = new OrderBook(TOKEN);
    const bids = Array.from({ length: 500 }, (_, i) => lv(((i + 1) / 1000).toFixed(3), '10'));
    book.applySnapshot(bids.reverse(), [], 1);
    for (let i = 500; i > 250; i -= 1) {
      book.applyLevel('BUY', (i / 1000).toFixed(3), '0', 2);
      expect(book.bestBid()).toBe((i - 1) / 1000);
    }
    expect(book.levels().bids).toBe(250);
  });
});
