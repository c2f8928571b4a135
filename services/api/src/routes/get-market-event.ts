import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { eventSnapshotSchema } from '../snapshots/snapshot-schemas.js';

/** GET /api/v1/markets/{eventSlug}: one event with all its markets, from its `event:<slug>` snapshot. */
export const getMarketEvent: Handler<'/api/v1/markets/{eventSlug}'> = async (params, ctx) => {
  const snapshot = await ctx.snapshots.read(`event:${params.eventSlug}`, eventSnapshotSchema);
  if (!snapshot) throw new ApiError('not_found', `no event with slug ${params.eventSlug}`);
  return { data: { live: ctx.live(), event: snapshot.data.event } };
};
