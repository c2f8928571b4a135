import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { eventSnapshotSchema } from '../snapshots/snapshot-schemas.js';
import { eventPart } from './event-market.js';

/**
 * GET /api/v1/markets/by-id/{marketId}: the event holding a market (docs/design.md "Links"), the same
 * body as /markets/{eventSlug}. The worker's market index (Redis hash market id → event slug) says
 * which event; its `event:<slug>` snapshot is the body, and must list the market (an index entry
 * older than the page is not trusted). A closed event's index entries and page are retired a day
 * after it closed: then Postgres says which event, and its page is built on request (event-market.ts).
 */
export const getMarketById: Handler<'/api/v1/markets/by-id/{marketId}'> = async (params, ctx) => {
  const notFound = () => new ApiError('not_found', `no market with id ${params.marketId}`);
  const slug = (await ctx.marketEvent(params.marketId)) ?? (await ctx.onDemand.slugsOf([params.marketId])).get(params.marketId);
  if (slug === undefined) throw notFound();
  const snapshot = await eventPart(ctx, { of: 'event', slug }, eventSnapshotSchema);
  if (!snapshot || !snapshot.data.event.markets.some((m) => m.id === params.marketId)) throw notFound();
  return { data: { live: ctx.live(), event: snapshot.data.event } };
};
