import type { z } from 'zod';
import type { Event } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { HandlerContext } from '../app/handler.js';
import { eventSnapshotSchema } from '../snapshots/snapshot-schemas.js';
import { partName, type EventPart } from '../snapshots/on-demand.js';
import type { HeldSnapshot } from '../snapshots/snapshot-store.js';

type Ctx = Pick<HandlerContext, 'snapshots' | 'onDemand'>;

/**
 * A snapshot of an event's (its page, a market's history or call list): as held, or, when Redis has
 * none, built by the worker on request for an event Postgres knows (a closed event's keys are
 * retired a day after it closed: docs/redis-keys.md "Closed events"). null: no such event, or no
 * such snapshot for it. Read through `ctx.snapshots` last, so the answer's version is noted.
 */
export async function eventPart<T>(ctx: Ctx, part: EventPart, schema: z.ZodType<T>): Promise<HeldSnapshot<T> | null> {
  const name = partName(part);
  const held = await ctx.snapshots.read(name, schema);
  if (held) return held;
  const built = await ctx.onDemand.read(part, schema);
  if (built === null) return null;
  return (await ctx.snapshots.read(name, schema)) ?? built;
}

/** An event's page from its `event:<slug>` snapshot (built on request when Redis has none); a 404 naming the slug when there is no such event. */
export async function eventOf(ctx: Ctx, eventSlug: string): Promise<Event> {
  const snapshot = await eventPart(ctx, { of: 'event', slug: eventSlug }, eventSnapshotSchema);
  if (!snapshot) throw new ApiError('not_found', `no event with slug ${eventSlug}`);
  return snapshot.data.event;
}

/**
 * The market a per-market read of an event names (`market`, default the event's first) with its
 * event: a 404 for an unknown event, a market not of that event, or an event without markets.
 */
export async function eventMarket(ctx: Ctx, eventSlug: string, market: string | undefined): Promise<{ event: Event; market: Event['markets'][number] }> {
  const event = await eventOf(ctx, eventSlug);
  const marketId = market?.trim();
  const found = marketId ? event.markets.find((m) => m.id === marketId) : event.markets[0];
  if (!found) throw new ApiError('not_found', marketId ? `no market ${marketId} in event ${event.slug}` : `event ${event.slug} has no markets`);
  return { event, market: found };
}
