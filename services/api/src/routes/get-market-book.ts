import type { Handler } from '../app/handler.js';
import { bookSnapshotSchema } from '../snapshots/snapshot-schemas.js';
import { eventMarket } from './event-market.js';

/**
 * GET /api/v1/markets/{eventSlug}/book. The event snapshot says which markets belong to the event
 * and names their outcomes; the ingestor's `book:<marketId>` snapshot (written a few times a second
 * at most, with a TTL) gives the levels, cut here to `depth`. A market whose book is not held (closed,
 * resolved, never traded) answers with empty sides and `as_of` null rather than a 404: the market
 * exists, it has no book to show.
 */
export const getMarketBook: Handler<'/api/v1/markets/{eventSlug}/book'> = async (params, ctx) => {
  const { market } = await eventMarket(ctx, params.eventSlug, params.market);
  const book = market.closed ? null : await ctx.snapshots.read(`book:${market.id}`, bookSnapshotSchema);
  const { depth } = params;
  return {
    data: {
      market_id: market.id,
      as_of: book?.data.as_of ?? null,
      outcomes: market.outcomes.map((o, i) => {
        const levels = book?.data.outcomes.find((b) => b.index === i);
        return { name: o.name, bids: levels?.bids.slice(0, depth) ?? [], asks: levels?.asks.slice(0, depth) ?? [] };
      }),
    },
  };
};
