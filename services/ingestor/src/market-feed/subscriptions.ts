import type { CatalogRows } from '../catalog/catalog-map.js';
import type { OutcomeDirectory } from '../catalog/outcome-directory.js';
import type { MarketFeed } from './market-feed.js';
import type { MarketHandler } from './market-handler.js';

/**
 * Which tokens the market sockets hold: every open outcome the catalog knows. Before `start` the
 * catalog's rows only fill the outcome directory (the initial sync runs before any socket opens);
 * from `start` on, a token seen for the first time is subscribed and a closed one dropped.
 */
export interface MarketSubscriptions {
  /** A catalog page's rows were written: keep the outcomes current and the sockets in step. */
  learn(rows: CatalogRows): void;
  /** The catalog no longer knows an event: its tokens are no longer wanted. */
  closeEvent(eventId: string): void;
  /** Subscribe every open outcome and show each one's chance (its catalog price until a book comes). */
  start(): number;
}

export function createMarketSubscriptions(deps: {
  outcomes: OutcomeDirectory;
  feed: Pick<MarketFeed, 'subscribe' | 'unsubscribe'>;
  handler: Pick<MarketHandler, 'recompute' | 'forget'>;
}): MarketSubscriptions {
  const { outcomes, feed, handler } = deps;
  let started = false;

  function drop(tokens: string[]) {
    if (tokens.length === 0) return;
    feed.unsubscribe(tokens);
    for (const tokenId of tokens) handler.forget(tokenId);
  }

  return {
    learn(rows) {
      const closedMarkets = new Set(rows.markets.filter((m) => m.closed).map((m) => m.id));
      const eventOf = new Map(rows.markets.map((m) => [m.id, m.event_id]));
      const subscribe: string[] = [];
      const unsubscribe: string[] = [];
      for (const o of rows.outcomes) {
        const eventId = eventOf.get(o.market_id);
        if (!eventId) continue;
        const closed = closedMarkets.has(o.market_id);
        const change = outcomes.upsert({
          tokenId: o.token_id,
          marketId: o.market_id,
          eventId,
          outcomeIndex: o.outcome_index,
          name: o.name,
          catalogPrice: o.catalog_price,
          closed,
        });
        if (!closed && (change.isNew || change.closedChanged)) subscribe.push(o.token_id);
        if (closed && change.closedChanged) unsubscribe.push(o.token_id);
        // A token without a book yet shows its catalog price (the display rule's fallback), so every
        // open outcome has a chance in Redis before its first book arrives.
        if (!closed && started && (change.isNew || change.priceChanged)) handler.recompute(o.token_id);
      }
      if (!started) return;
      if (subscribe.length > 0) feed.subscribe(subscribe);
      drop(unsubscribe);
    },
    closeEvent(eventId) {
      const tokens = outcomes.closeEvent(eventId);
      if (started) drop(tokens);
    },
    start() {
      started = true;
      const open = outcomes.openTokens();
      feed.subscribe(open);
      for (const tokenId of open) handler.recompute(tokenId);
      return open.length;
    },
  };
}
