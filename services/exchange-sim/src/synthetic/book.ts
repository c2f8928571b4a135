import { createHash } from 'node:crypto';
import type { BookLevel, PriceChangeEntry } from '../protocol.js';

/**
 * The order book of a binary market. Only the first outcome's ("Yes") book is stored; the second
 * outcome's book is its mirror (No bid = 1 − Yes ask, No ask = 1 − Yes bid, same sizes), which is
 * how the exchange's two tokens stay consistent. Prices are integer thousandths ("milli") so every
 * tick size the exchange uses (0.01, 0.001) is exact; sizes are integer hundredths.
 */
export type BookSide = 'bid' | 'ask';

/** One edit of the Yes book: `size` 0 removes the level. */
export interface LevelChange {
  side: BookSide;
  price: number;
  size: number;
}

export interface TokenBook {
  /** Ascending, as real captures list them. */
  bids: Array<[number, number]>;
  /** Descending, as real captures list them. */
  asks: Array<[number, number]>;
}

export class BinaryBook {
  readonly bids = new Map<number, number>();
  readonly asks = new Map<number, number>();
  /** Tick size in milli: 10 = 0.01, 1 = 0.001. */
  tick = 10;

  bestBid(): number | null {
    let best: number | null = null;
    for (const p of this.bids.keys()) if (best === null || p > best) best = p;
    return best;
  }

  bestAsk(): number | null {
    let best: number | null = null;
    for (const p of this.asks.keys()) if (best === null || p < best) best = p;
    return best;
  }

  apply(change: LevelChange): void {
    const side = change.side === 'bid' ? this.bids : this.asks;
    if (change.size <= 0) side.delete(change.price);
    else side.set(change.price, change.size);
  }

  clear(): void {
    this.bids.clear();
    this.asks.clear();
  }

  /** Best bid and ask of one outcome's token, in milli. */
  best(outcome: 0 | 1): { bid: number | null; ask: number | null } {
    const bid = this.bestBid();
    const ask = this.bestAsk();
    if (outcome === 0) return { bid, ask };
    return { bid: ask === null ? null : 1000 - ask, ask: bid === null ? null : 1000 - bid };
  }

  view(outcome: 0 | 1): TokenBook {
    const bids = [...this.bids.entries()];
    const asks = [...this.asks.entries()];
    if (outcome === 0) {
      return { bids: bids.sort((a, b) => a[0] - b[0]), asks: asks.sort((a, b) => b[0] - a[0]) };
    }
    const noBids = asks.map(([p, s]): [number, number] => [1000 - p, s]);
    const noAsks = bids.map(([p, s]): [number, number] => [1000 - p, s]);
    return { bids: noBids.sort((a, b) => a[0] - b[0]), asks: noAsks.sort((a, b) => b[0] - a[0]) };
  }
}

export function formatPrice(milli: number): string {
  return String(milli / 1000);
}

export function formatSize(hundredths: number): string {
  return String(hundredths / 100);
}

export function toLevels(levels: Array<[number, number]>): BookLevel[] {
  return levels.map(([p, s]) => ({ price: formatPrice(p), size: formatSize(s) }));
}

/** An opaque change token, as the exchange's `hash` is: stable for the same content. */
export function bookHash(...parts: Array<string | number>): string {
  return createHash('sha1').update(parts.join('|')).digest('hex');
}

/**
 * Apply Yes-book edits and describe them as the current `price_change` entries for both tokens
 * (a Yes bid at p is a No ask at 1 − p). Each entry carries the token's best bid/ask after it.
 */
export function applyChanges(
  book: BinaryBook,
  tokens: readonly [string, string],
  changes: readonly LevelChange[],
  stamp: string,
): PriceChangeEntry[] {
  const entries: PriceChangeEntry[] = [];
  for (const change of changes) {
    book.apply(change);
    for (const outcome of [0, 1] as const) {
      const asset = tokens[outcome];
      const price = outcome === 0 ? change.price : 1000 - change.price;
      const isBid = (change.side === 'bid') === (outcome === 0);
      const best = book.best(outcome);
      entries.push({
        asset_id: asset,
        price: formatPrice(price),
        size: formatSize(Math.max(0, change.size)),
        side: isBid ? 'BUY' : 'SELL',
        hash: bookHash(asset, price, change.size, stamp),
        best_bid: best.bid === null ? '' : formatPrice(best.bid),
        best_ask: best.ask === null ? '' : formatPrice(best.ask),
      });
    }
  }
  return entries;
}
