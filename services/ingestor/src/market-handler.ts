import { OrderBook, displayChance } from '@pm/shared/domain';
import type { Logger } from '@pm/shared';
import {
  parseMarketFrame,
  type BookMessage,
  type LastTradeMessage,
  type MarketMessage,
  type MarketResolvedMessage,
  type NewMarketMessage,
  type PriceChangeMessage,
} from '@pm/shared/exchange';
import type { OutcomeDirectory } from './outcome-directory.js';
import type { ChancePublisher } from './chance-publisher.js';
import type { SettleMarket } from './settlement.js';
import type { Clock } from './clock.js';

/**
 * What market-channel messages do (DESIGN.md "The flow" 2): `book` replaces a local book,
 * `price_change` edits levels (deltas older than the book are dropped), `last_trade_price` sets
 * the last trade. After each change the token's displayed chance is recomputed and offered to the
 * publisher, which writes only when it moved; a moved chance marks the token's event dirty.
 * `new_market` asks for a catalog refresh, `market_resolved` becomes a settlement.
 */

export interface MarketHandlerOptions {
  outcomes: OutcomeDirectory;
  publisher: ChancePublisher;
  markDirty: (eventId: string) => void;
  resolve: (r: SettleMarket) => void;
  requestRefresh: (ref: { id?: string | null; slug?: string | null }) => void;
  clock: Clock;
  logger: Logger;
}

export interface MarketHandlerStats {
  frames: number;
  /** Messages applied, by `event_type`. */
  messages: Record<string, number>;
  /** Non-JSON text frames (PONG, NO NEW ASSETS, …). */
  textFrames: number;
  /** Elements (or changes) that could not be parsed and were skipped. */
  malformed: number;
  /** Elements of an `event_type` we do not handle, skipped. */
  unknown: number;
  /** Deltas dropped: older than the book, invalid, or for a token without a book. */
  droppedDeltas: number;
  books: number;
}

export interface MarketHandler {
  handleFrame(text: string): void;
  /** Recompute a token's chance (after its catalog price changed). */
  recompute(tokenId: string): void;
  forget(tokenId: string): void;
  book(tokenId: string): OrderBook | undefined;
  /** Apply a book fetched over REST (`GET /book`, the resync after a reconnect) like a ws `book`. */
  applyBook(m: BookMessage): void;
  /** Clock time (ms) the token's last book was applied, ws or REST; undefined before any. */
  lastBookAt(tokenId: string): number | undefined;
  stats(): MarketHandlerStats;
}

export function createMarketHandler(opts: MarketHandlerOptions): MarketHandler {
  const books = new Map<string, OrderBook>();
  const tickSizes = new Map<string, string>();
  const bookAt = new Map<string, number>();
  const stats = { frames: 0, messages: {} as Record<string, number>, textFrames: 0, malformed: 0, unknown: 0, droppedDeltas: 0 };

  /** The message's own time orders it per asset; a missing one (`""`) cannot be proven stale. */
  const ts = (t: number | null) => (t === null ? Number.NaN : t);

  function bookFor(tokenId: string): OrderBook {
    let b = books.get(tokenId);
    if (!b) {
      b = new OrderBook(tokenId);
      books.set(tokenId, b);
    }
    return b;
  }

  function recompute(tokenId: string) {
    const book = books.get(tokenId);
    const ref = opts.outcomes.get(tokenId);
    const chance = displayChance({
      bestBid: book?.bestBid() ?? null,
      bestAsk: book?.bestAsk() ?? null,
      lastTrade: book?.lastTrade ?? null,
      catalogPrice: ref?.catalogPrice ?? null,
    });
    if (opts.publisher.publish(tokenId, chance) && ref) opts.markDirty(ref.eventId);
  }

  function onBook(m: BookMessage) {
    const book = bookFor(m.assetId);
    book.applySnapshot(m.bids, m.asks, ts(m.timestamp));
    bookAt.set(m.assetId, opts.clock.now());
    if (m.lastTradePrice !== null) book.setLastTrade(m.lastTradePrice, ts(m.timestamp));
    if (m.tickSize !== null) tickSizes.set(m.assetId, m.tickSize);
    recompute(m.assetId);
  }

  function onPriceChange(m: PriceChangeMessage) {
    const touched = new Set<string>();
    for (const c of m.changes) {
      const book = books.get(c.assetId);
      // Deltas alone do not make a trustworthy book: wait for the snapshot (initial_dump sends it).
      if (!book?.hasSnapshot) {
        stats.droppedDeltas++;
        continue;
      }
      if (book.applyLevel(c.side, c.price, c.size, ts(m.timestamp))) touched.add(c.assetId);
      else stats.droppedDeltas++;
    }
    for (const t of touched) recompute(t);
  }

  function onLastTrade(m: LastTradeMessage) {
    bookFor(m.assetId).setLastTrade(m.price, ts(m.timestamp));
    recompute(m.assetId);
  }

  function onNewMarket(m: NewMarketMessage) {
    opts.requestRefresh({ id: m.eventId, slug: m.eventSlug });
  }

  function onResolved(m: MarketResolvedMessage) {
    // The winning token names market and outcome; failing that, any of the market's tokens plus
    // the winning outcome's name. A message we cannot place is left to the catalog to confirm.
    const winner = m.winningAssetId ? opts.outcomes.get(m.winningAssetId) : undefined;
    if (winner) {
      opts.resolve({ marketId: winner.marketId, winningOutcomeIndex: winner.outcomeIndex, voided: false, source: 'ws' });
      return;
    }
    const any = m.assetIds.map((a) => opts.outcomes.get(a)).find((o) => o !== undefined);
    const marketId = any?.marketId ?? (m.marketId && opts.outcomes.market(m.marketId).length > 0 ? m.marketId : null);
    if (marketId && m.winningOutcome) {
      const names = opts.outcomes.market(marketId);
      const byName = names.find((o) => o.name.trim().toLowerCase() === m.winningOutcome?.trim().toLowerCase());
      if (byName) {
        opts.resolve({ marketId, winningOutcomeIndex: byName.outcomeIndex, voided: false, source: 'ws' });
        return;
      }
    }
    opts.logger.warn({ market: m.conditionId, id: m.marketId }, 'market_resolved without a known winner; waiting for the catalog');
  }

  function apply(m: MarketMessage) {
    stats.messages[m.type] = (stats.messages[m.type] ?? 0) + 1;
    switch (m.type) {
      case 'book':
        return onBook(m);
      case 'price_change':
        return onPriceChange(m);
      case 'last_trade_price':
        return onLastTrade(m);
      case 'tick_size_change':
        // Kept for reference only: the book stores exact prices, whatever the tick.
        if (m.newTickSize !== null) tickSizes.set(m.assetId, m.newTickSize);
        return;
      case 'best_bid_ask':
        // A hint computed by the exchange; the local book stays the only source of the chance.
        return;
      case 'new_market':
        return onNewMarket(m);
      case 'market_resolved':
        return onResolved(m);
    }
  }

  return {
    handleFrame(text) {
      stats.frames++;
      const frame = parseMarketFrame(text);
      if (frame.kind === 'text') {
        stats.textFrames++;
        return;
      }
      stats.malformed += frame.malformed;
      for (const n of Object.values(frame.unknown)) stats.unknown += n;
      for (const m of frame.messages) {
        try {
          apply(m);
        } catch (err) {
          stats.malformed++;
          opts.logger.error({ err, type: m.type }, 'applying a market message failed');
        }
      }
    },
    recompute,
    forget(tokenId) {
      books.delete(tokenId);
      tickSizes.delete(tokenId);
      bookAt.delete(tokenId);
    },
    book: (tokenId) => books.get(tokenId),
    applyBook(m) {
      stats.messages.book = (stats.messages.book ?? 0) + 1;
      onBook(m);
    },
    lastBookAt: (tokenId) => bookAt.get(tokenId),
    stats: () => ({ ...stats, messages: { ...stats.messages }, books: books.size }),
  };
}
