/**
 * A local order book for one token (asset) of the market channel (docs/protocol.md §1).
 *
 * `book` messages replace it, `price_change` edits one level at a time, `last_trade_price` sets the
 * last trade. Every update is idempotent (a level holds the exchange's new total, never a delta),
 * because the feed repeats messages. The best bid and ask are cached and only recomputed, by one
 * scan, after the best level itself is removed: books hold hundreds of levels and the ingestor
 * handles thousands of frames a second, so nothing is sorted per message.
 */

/** One price level as the exchange sends it: decimal strings. */
export interface BookLevelInput {
  price: string;
  size: string;
}

/** Side of a `price_change`: BUY edits a bid, SELL edits an ask. */
export type BookSide = 'BUY' | 'SELL';

const DECIMAL_PATTERN = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Parses an exchange decimal (`"0.52"`, `"150.5"`) to a number. Finite numbers pass through.
 * Returns null for `""` (the exchange's "missing"), whitespace, garbage, hex, `"Infinity"`, `NaN`,
 * and any non-string non-number — where `Number()` would quietly turn `""` into 0.
 */
export function parseDecimal(s: unknown): number | null {
  if (typeof s === 'number') return Number.isFinite(s) ? s : null;
  if (typeof s !== 'string') return null;
  const trimmed = s.trim();
  if (!DECIMAL_PATTERN.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : null;
}

/** A price a level or trade can sit at: above 0 (nobody trades at 0) and at most 1. */
function parsePrice(s: unknown): number | null {
  const price = parseDecimal(s);
  return price !== null && price > 0 && price <= 1 ? price : null;
}

function parseSize(s: unknown): number | null {
  const size = parseDecimal(s);
  return size !== null && size >= 0 ? size : null;
}

/** One side of the book: price → size, with a lazily recomputed best price. */
class BookSideLevels {
  private readonly levels = new Map<number, number>();
  /** The best price when `stale` is false; null for an empty side. */
  private best: number | null = null;
  private stale = false;

  /** @param better true when price `a` is better than `b` on this side. */
  constructor(private readonly better: (a: number, b: number) => boolean) {}

  get count(): number {
    return this.levels.size;
  }

  clear(): void {
    this.levels.clear();
    this.best = null;
    this.stale = false;
  }

  /** Sets the total size at a price; 0 removes the level. */
  set(price: number, size: number): void {
    if (size === 0) {
      if (!this.levels.delete(price)) return;
      if (!this.stale && this.best === price) this.stale = true;
      return;
    }
    this.levels.set(price, size);
    if (!this.stale && (this.best === null || this.better(price, this.best))) this.best = price;
  }

  /** The `n` best levels, best first. */
  top(n: number): Array<{ price: number; size: number }> {
    return [...this.levels]
      .sort(([a], [b]) => (this.better(a, b) ? -1 : this.better(b, a) ? 1 : 0))
      .slice(0, n)
      .map(([price, size]) => ({ price, size }));
  }

  bestPrice(): number | null {
    if (this.stale) {
      let best: number | null = null;
      for (const price of this.levels.keys()) {
        if (best === null || this.better(price, best)) best = price;
      }
      this.best = best;
      this.stale = false;
    }
    return this.best;
  }
}

/** The order book of one token, fed by the market channel. */
export class OrderBook {
  private readonly bids = new BookSideLevels((a, b) => a > b);
  private readonly asks = new BookSideLevels((a, b) => a < b);
  private snapshotTime = 0;
  private snapshotApplied = false;
  private lastTradePrice: number | null = null;
  private lastTradeTime = Number.NEGATIVE_INFINITY;

  /** @param tokenId the asset id (a 70–78 digit decimal string; kept as text). */
  constructor(readonly tokenId: string) {}

  /**
   * Replaces the whole book with a `book` message. Levels may come in any order (real captures list
   * bids ascending, some docs descending), so the best is taken as max bid / min ask, never index 0.
   * Invalid levels are skipped; zero-size levels are not stored. A non-finite timestamp (the
   * exchange's `""`) still replaces the book, in wire order, but leaves {@link snapshotAt} as it was.
   */
  applySnapshot(bids: BookLevelInput[], asks: BookLevelInput[], timestampMs: number): void {
    this.bids.clear();
    this.asks.clear();
    for (const level of bids) this.setLevel(this.bids, level.price, level.size);
    for (const level of asks) this.setLevel(this.asks, level.price, level.size);
    if (Number.isFinite(timestampMs)) this.snapshotTime = timestampMs;
    this.snapshotApplied = true;
  }

  /**
   * Applies one level of a `price_change`: `size` is the new total at `price` ("0" removes it);
   * BUY edits the bids, SELL the asks.
   *
   * Returns false and changes nothing when the delta is older than the last snapshot (docs/protocol.md:
   * there are no sequence numbers, so a delta from before the book it would edit is dropped), or
   * when the side, price or size is not valid (garbage, `""`, negative, price outside (0, 1]).
   * A delta without a usable timestamp cannot be proven stale and is applied in wire order.
   * Returns true when the level was applied, including a repeat that changes nothing.
   */
  applyLevel(side: BookSide, price: string, size: string, timestampMs: number): boolean {
    if (timestampMs < this.snapshotTime) return false;
    const target = side === 'BUY' ? this.bids : side === 'SELL' ? this.asks : null;
    if (target === null) return false;
    return this.setLevel(target, price, size);
  }

  /**
   * Records a `last_trade_price`. An invalid price, or a trade older than the one already held
   * (a replayed or reordered message), is ignored.
   */
  setLastTrade(price: string, timestampMs: number): void {
    const parsed = parsePrice(price);
    if (parsed === null) return;
    const at = Number.isFinite(timestampMs) ? timestampMs : this.lastTradeTime;
    if (at < this.lastTradeTime) return;
    this.lastTradePrice = parsed;
    this.lastTradeTime = at;
  }

  /** Highest bid price, or null when there are no bids. */
  bestBid(): number | null {
    return this.bids.bestPrice();
  }

  /** Lowest ask price, or null when there are no asks. */
  bestAsk(): number | null {
    return this.asks.bestPrice();
  }

  /** Price of the last trade seen, or null before any. */
  get lastTrade(): number | null {
    return this.lastTradePrice;
  }

  /** Exchange time (Unix ms) of the last snapshot applied; 0 before any. */
  get snapshotAt(): number {
    return this.snapshotTime;
  }

  /** True once a `book` snapshot has been applied (deltas alone do not make a trustworthy book). */
  get hasSnapshot(): boolean {
    return this.snapshotApplied;
  }

  /** The `n` best levels of each side: bids high to low, asks low to high. */
  depth(n: number): { bids: Array<{ price: number; size: number }>; asks: Array<{ price: number; size: number }> } {
    return { bids: this.bids.top(n), asks: this.asks.top(n) };
  }

  /** Number of price levels on each side. */
  levels(): { bids: number; asks: number } {
    return { bids: this.bids.count, asks: this.asks.count };
  }

  private setLevel(target: BookSideLevels, rawPrice: unknown, rawSize: unknown): boolean {
    const price = parsePrice(rawPrice);
    const size = parseSize(rawSize);
    if (price === null || size === null) return false;
    target.set(price, size);
    return true;
  }
}
