import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { eventSnapshotSchema } from '../snapshots/snapshot-schemas.js';

/**
 * GET /api/v1/markets/by-id/{marketId}: the event holding a market (docs/design.md "Links"), the same
 * body as /markets/{eventSlug}. The worker's market index (Redis hash market id → event slug) says
 * which event; its `event:<slug>` snapshot is the body, and must list the market (an index entry
 * older than the page is not trusted).
 */
export const getMarketById: Handler<'/api/v1/markets/by-id/{marketId}'> = async (params, ctx) => {
  const notFound = () => new ApiError('not_found', `no market with id ${params.marketId}`);
  const slug = await ctx.marketEvent(params.marketId);
  if (slug === null) throw notFound();
  const snapshot = await ctx.snapshots.read(`event:${slug}`, eventSnapshotSchema);
  if (!snapshot || !snapshot.data.event.markets.some((m) => m.id === params.marketId)) throw notFound();
  return { data: { live: ctx.live(), event: snapshot.data.event } };
};
