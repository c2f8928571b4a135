import type { Event } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { HandlerContext } from '../app/handler.js';
import { eventSnapshotSchema } from '../snapshots/snapshot-schemas.js';

/** An event's page from its `event:<slug>` snapshot; a 404 naming the slug when there is none. */
export async function eventOf(ctx: Pick<HandlerContext, 'snapshots'>, eventSlug: string): Promise<Event> {
  const snapshot = await ctx.snapshots.read(`event:${eventSlug}`, eventSnapshotSchema);
  if (!snapshot) throw new ApiError('not_found', `no event with slug ${eventSlug}`);
  return snapshot.data.event;
}

/**
 * The market a per-market read of an event names (`market`, default the event's first) with its
 * event: a 404 for an unknown event, a market not of that event, or an event without markets.
 */
export async function eventMarket(
  ctx: Pick<HandlerContext, 'snapshots'>,
  eventSlug: string,
  market: string | undefined,
): Promise<{ event: Event; market: Event['markets'][number] }> {
  const event = await eventOf(ctx, eventSlug);
  const marketId = market?.trim();
  const found = marketId ? event.markets.find((m) => m.id === marketId) : event.markets[0];
  if (!found) throw new ApiError('not_found', marketId ? `no market ${marketId} in event ${event.slug}` : `event ${event.slug} has no markets`);
  return { event, market: found };
}
