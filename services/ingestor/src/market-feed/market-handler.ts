import { OrderBook, displayChance, quoteOf } from '@pm/shared/domain';
import type { Logger } from '@pm/shared/logger';
import {
  parseMarketFrame,
  type BestBidAskMessage,
  type BookMessage,
  type LastTradeMessage,
  type MarketMessage,
  type MarketResolvedMessage,
  type NewMarketMessage,
  type PriceChangeMessage,
  type TradePrint,
} from '@pm/shared/exchange';
import { ordinals } from '@pm/shared/trades';
import type { OutcomeDirectory } from '../catalog/outcome-directory.js';
import type { ChancePublisher } from './chance-publisher.js';
import type { MarketResolution } from '../resolution/record-resolution.js';
import type { Clock } from '../common/clock.js';

/**
 * What market-channel messages do (docs/design.md "The flow" 2): `book` replaces a local book,
 * `price_change` edits levels (deltas older than the book are dropped), `last_trade_price` sets
 * the last trade. After each change the token's displayed chance is recomputed and offered to the
 * publisher, which writes only when it moved; a moved chance marks the token's event dirty.
 * `new_market` asks for a catalog refresh, `market_resolved` becomes a settlement.
 *
 * Top of book is the exchange's word (docs/protocol.md §1): the `best_bid`/`best_ask` of a
 * `price_change` entry or a `best_bid_ask` message is the asset's top until the next one (or a
 * fresh book); the local book supplies a side the exchange did not state. A local book that
 * crosses where the exchange's top does not is stale: it is never shown, and the asset is
 * re-fetched from REST `/book`; so is one whose side makes the shown top cross.
 */

export interface MarketHandlerOptions {
  outcomes: OutcomeDirectory;
  publisher: ChancePublisher;
  markDirty: (eventId: string) => void;
  resolve: (r: MarketResolution) => void;
  /** After every change to a token's book or top (the book publisher schedules the market's book). */
  onBookChanged?: (tokenId: string) => void;
  /**
   * Each print of the match feed, in wire order, with its ordinal among identical prints of the same
   * message (the trade tape's identity for prints without a transaction hash).
   */
  onTrade?: (tokenId: string, trade: TradePrint, ordinal: number) => void;
  clock: Clock;
  logger: Logger;
}

/** A `new_market` names the event to read again from the catalog (id or slug, either may be missing). */
export type EventRef = { id?: string | null; slug?: string | null };

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
  /** Times a local book crossed while the exchange's top did not (each asked a REST resync). */
  crossedBooks: number;
  /** Books (ws or REST) older than the book already held, not applied. */
  droppedBooks: number;
  /** `last_trade_price` frames whose print could not be read (size, side, timestamp or price): not on the tape. */
  malformedTrades: number;
}

export interface MarketHandler {
  handleFrame(text: string): void;
  /** Recompute a token's chance (after its catalog price changed). */
  recompute(tokenId: string): void;
  forget(tokenId: string): void;
  book(tokenId: string): OrderBook | undefined;
  /** The top shown for a token: each side as the exchange last stated it, else the local book's. */
  top(tokenId: string): { bid: number | null; ask: number | null };
  /** Apply a book fetched over REST (`GET /book`, the resync after a reconnect) like a ws `book`. */
  applyBook(m: BookMessage): void;
  /** Clock time (ms) the token's last book was applied, ws or REST; undefined before any. */
  lastBookAt(tokenId: string): number | undefined;
  stats(): MarketHandlerStats;
  /**
   * Who hears what the handler asks of stages built after it (the catalog sync, the REST book
   * resync): the composition connects them once they exist. Unconnected, the asks are dropped.
   */
  onNewMarket(ask: (ref: EventRef) => void): void;
  /** Fetch the token's book again over REST (its local book crossed). */
  onCrossedBook(ask: (tokenId: string) => void): void;
}

export function createMarketHandler(opts: MarketHandlerOptions): MarketHandler {
  const books = new Map<string, OrderBook>();
  const tickSizes = new Map<string, string>();
  const bookAt = new Map<string, number>();
  /** The exchange's stated top per asset (null side: not stated); cleared by a fresh book. */
  const tops = new Map<string, { bid: number | null; ask: number | null }>();
  /** Exchange time (ms) of the newest book or delta applied per asset. */
  const latestAt = new Map<string, number>();
  /** Assets whose crossed book was sent for a resync and has not been replaced yet: one request each. */
  const resyncing = new Set<string>();
  let requestRefresh: (ref: EventRef) => void = () => {};
  let resyncBook: (tokenId: string) => void = () => {};
  const stats = {
    frames: 0,
    messages: {} as Record<string, number>,
    textFrames: 0,
    malformed: 0,
    unknown: 0,
    droppedDeltas: 0,
    crossedBooks: 0,
    droppedBooks: 0,
    malformedTrades: 0,
  };

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

  const crossed = (bid: number | null, ask: number | null) => bid !== null && ask !== null && bid >= ask;

  /**
   * A stale local book: ask for it again (once until a book replaces it). Stale when it crosses, or
   * when the top shown (`top`, topOf's) crosses because a side the exchange did not state came from it.
   */
  function checkCrossed(tokenId: string, book: OrderBook | undefined, top: { bid: number | null; ask: number | null }) {
    if (!book || resyncing.has(tokenId)) return;
    if (!crossed(book.bestBid(), book.bestAsk()) && !crossed(top.bid, top.ask)) return;
    // The exchange itself says crossed (transient, docs/protocol.md §1): the local book is not the stale one.
    const stated = tops.get(tokenId);
    if (stated && crossed(stated.bid, stated.ask)) return;
    resyncing.add(tokenId);
    stats.crossedBooks++;
    opts.logger.debug({ tokenId, bid: book.bestBid(), ask: book.bestAsk(), stated }, 'local book crossed; resyncing from REST');
    resyncBook(tokenId);
  }

  /** The top shown: each side as the exchange last stated it, else the local book's. */
  function topOf(tokenId: string): { bid: number | null; ask: number | null } {
    const book = books.get(tokenId);
    const stated = tops.get(tokenId);
    return { bid: stated?.bid ?? book?.bestBid() ?? null, ask: stated?.ask ?? book?.bestAsk() ?? null };
  }

  function recompute(tokenId: string) {
    const book = books.get(tokenId);
    const ref = opts.outcomes.get(tokenId);
    const top = topOf(tokenId);
    checkCrossed(tokenId, book, top);
    const lastTrade = book?.lastTrade ?? null;
    const chance = displayChance({
      bestBid: top.bid,
      bestAsk: top.ask,
      lastTrade,
      catalogPrice: ref?.catalogPrice ?? null,
    });
    // The quotes are the very top the chance came from, so a client can check the display rule.
    if (opts.publisher.publish(tokenId, chance, quoteOf(top.bid, top.ask, lastTrade)) && ref) opts.markDirty(ref.eventId);
    opts.onBookChanged?.(tokenId);
  }

  /** A stated top replaces the previous one; with neither side stated there is nothing to say. */
  function stateTop(tokenId: string, bid: number | null, ask: number | null): boolean {
    if (bid === null && ask === null) return false;
    tops.set(tokenId, { bid, ask });
    return true;
  }

  function onBook(m: BookMessage) {
    const book = bookFor(m.assetId);
    // A book older than what the held book already reflects (a lagging dump or REST answer after
    // a reconnect) would roll it back: a resync applies fresh books only.
    if (book.hasSnapshot && m.timestamp !== null && m.timestamp < (latestAt.get(m.assetId) ?? 0)) {
      stats.droppedBooks++;
      return;
    }
    if (m.timestamp !== null) latestAt.set(m.assetId, m.timestamp);
    book.applySnapshot(m.bids, m.asks, ts(m.timestamp));
    // A whole book is the exchange's full state: its own top replaces any stated one.
    tops.delete(m.assetId);
    resyncing.delete(m.assetId);
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
      if (book.applyLevel(c.side, c.price, c.size, ts(m.timestamp))) {
        touched.add(c.assetId);
        if (m.timestamp !== null && m.timestamp > (latestAt.get(c.assetId) ?? 0)) latestAt.set(c.assetId, m.timestamp);
        // Entries apply in wire order: the last stated top of the message stands.
        stateTop(c.assetId, c.bestBid, c.bestAsk);
      } else stats.droppedDeltas++;
    }
    for (const t of touched) recompute(t);
  }

  function onBestBidAsk(m: BestBidAskMessage) {
    const book = books.get(m.assetId);
    // Older than the book held: the book already says more recent things.
    if (book?.hasSnapshot && m.timestamp !== null && m.timestamp < book.snapshotAt) return;
    if (stateTop(m.assetId, m.bestBid, m.bestAsk)) recompute(m.assetId);
  }

  function onLastTrade(m: LastTradeMessage) {
    bookFor(m.assetId).setLastTrade(m.price, ts(m.timestamp));
    recompute(m.assetId);
  }

  function onNewMarket(m: NewMarketMessage) {
    requestRefresh({ id: m.eventId, slug: m.eventSlug });
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
        return onBestBidAsk(m);
      case 'new_market':
        return onNewMarket(m);
      case 'market_resolved':
        return onResolved(m);
    }
  }

  /** The frame's prints to the tape, each with its ordinal among identical prints of the frame. */
  function tape(messages: readonly MarketMessage[]) {
    const prints: Array<{ assetId: string; trade: TradePrint }> = [];
    for (const m of messages) {
      if (m.type !== 'last_trade_price') continue;
      if (m.trade === null) stats.malformedTrades++;
      else prints.push({ assetId: m.assetId, trade: m.trade });
    }
    if (prints.length === 0 || !opts.onTrade) return;
    const nth = ordinals(prints);
    prints.forEach((p, i) => opts.onTrade?.(p.assetId, p.trade, nth[i] as number));
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
      tape(frame.messages);
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
      tops.delete(tokenId);
      resyncing.delete(tokenId);
      latestAt.delete(tokenId);
      tickSizes.delete(tokenId);
      bookAt.delete(tokenId);
    },
    book: (tokenId) => books.get(tokenId),
    top: topOf,
    applyBook(m) {
      stats.messages.book = (stats.messages.book ?? 0) + 1;
      onBook(m);
    },
    lastBookAt: (tokenId) => bookAt.get(tokenId),
    onNewMarket(ask) {
      requestRefresh = ask;
    },
    onCrossedBook(ask) {
      resyncBook = ask;
    },
    stats: () => ({ ...stats, messages: { ...stats.messages }, books: books.size }),
  };
}
