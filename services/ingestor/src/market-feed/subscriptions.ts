import type { CatalogRows } from '../catalog/catalog-map.js';
import type { OutcomeRef } from '../catalog/catalog-db.js';
import type { OutcomeDirectory } from '../catalog/outcome-directory.js';
import type { MarketFeed } from './market-feed.js';
import type { MarketHandler } from './market-handler.js';

/**
 * Which tokens the market sockets hold: every open outcome the catalog knows. Before `start` the
 * catalog's rows only fill the outcome directory (the initial sync runs before any socket opens);
 * from `start` on, a token seen for the first time is subscribed and a closed one dropped.
 *
 * With `owns` (ingestors sharing the markets, ../sharing), "every open outcome" means every open
 * outcome of a market this ingestor owns; `reassign` follows a change of what it owns.
 */
export interface MarketSubscriptions {
  /** A catalog page's rows were written: keep the outcomes current and the sockets in step. */
  learn(rows: CatalogRows): void;
  /** The catalog no longer knows an event: its tokens are no longer wanted. */
  closeEvent(eventId: string): void;
  /** Subscribe every open outcome and show each one's chance (its catalog price until a book comes). */
  start(): number;
  /** Whether the sockets should hold this token: open, and (with `owns`) of a market owned here. */
  holds(tokenId: string): boolean;
  /** After a change of `owns`: subscribe the tokens gained, drop those lost. */
  reassign(): { gained: number; lost: number };
  /** The catalog as stored in Postgres (an ingestor that does not sync it itself): learn it, then reassign. */
  reload(refs: readonly OutcomeRef[]): void;
}

export function createMarketSubscriptions(deps: {
  outcomes: OutcomeDirectory;
  feed: Pick<MarketFeed, 'subscribe' | 'unsubscribe' | 'isSubscribed'>;
  handler: Pick<MarketHandler, 'recompute' | 'forget'>;
  /** Whether a market is this ingestor's (../sharing); default: every market is. */
  owns?: (marketId: string) => boolean;
}): MarketSubscriptions {
  const { outcomes, feed, handler, owns } = deps;
  let started = false;
  const mine = (tokenId: string) => {
    if (owns === undefined) return true;
    const ref = outcomes.get(tokenId);
    return ref !== undefined && owns(ref.marketId);
  };

  function reassign() {
    if (!started) return { gained: 0, lost: 0 };
    const gained: string[] = [];
    const lost: string[] = [];
    for (const tokenId of outcomes.openTokens()) {
      const wanted = mine(tokenId);
      if (wanted && !feed.isSubscribed(tokenId)) gained.push(tokenId);
      else if (!wanted && feed.isSubscribed(tokenId)) lost.push(tokenId);
    }
    drop(lost);
    if (gained.length > 0) feed.subscribe(gained);
    for (const tokenId of gained) handler.recompute(tokenId);
    return { gained: gained.length, lost: lost.length };
  }

  function drop(tokens: string[]) {
    if (tokens.length === 0) return;
    feed.unsubscribe(tokens);
    for (const tokenId of tokens) handler.forget(tokenId);
  }

  return {
    learn(rows) {
      const closedMarkets = new Set(rows.markets.filter((m) => m.closed).map((m) => m.id));
      const eventOf = new Map(rows.markets.map((m) => [m.id, m.event_id]));
      const slugOf = new Map(rows.events.map((e) => [e.id, e.slug]));
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
          eventSlug: slugOf.get(eventId) ?? outcomes.get(o.token_id)?.eventSlug ?? '',
          outcomeIndex: o.outcome_index,
          name: o.name,
          catalogPrice: o.catalog_price,
          closed,
        });
        if (!closed && (change.isNew || change.closedChanged) && mine(o.token_id)) subscribe.push(o.token_id);
        if (closed && change.closedChanged) unsubscribe.push(o.token_id);
        // A token without a book yet shows its catalog price (the display rule's fallback), so every
        // open outcome has a chance in Redis before its first book arrives.
        if (!closed && started && (change.isNew || change.priceChanged) && mine(o.token_id)) handler.recompute(o.token_id);
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
      const open = outcomes.openTokens().filter(mine);
      feed.subscribe(open);
      for (const tokenId of open) handler.recompute(tokenId);
      return open.length;
    },
    holds: (tokenId) => outcomes.isOpen(tokenId) && mine(tokenId),
    reassign,
    reload(refs) {
      const closedNow: string[] = [];
      for (const ref of refs) {
        const change = outcomes.upsert(ref);
        if (!started) continue;
        if (ref.closed && change.closedChanged && feed.isSubscribed(ref.tokenId)) closedNow.push(ref.tokenId);
        else if (!ref.closed && !change.isNew && change.priceChanged && mine(ref.tokenId)) handler.recompute(ref.tokenId);
      }
      drop(closedNow);
      reassign();
    },
  };
}
