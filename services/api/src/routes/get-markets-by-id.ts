import type { Event, Market } from '@pm/shared/api';
import type { Handler } from '../app/handler.js';
import { eventSnapshotSchema, marketSearchSnapshotSchema } from '../snapshots/snapshot-schemas.js';
import { eventPart } from './event-market.js';

/**
 * GET /api/v1/markets/by-id?ids=a,b,…: many markets in one answer, in the order asked. Each id goes
 * through the worker's market index (market id → event slug), as the single by-id does, and its
 * market is taken from that event's snapshot (held in memory: an event asked for many times is read
 * once). An id whose event snapshot does not list it is missing, as the single by-id's 404. Ids the
 * index does not hold (a closed event's entries are retired a day after it closed) are looked up in
 * Postgres at once, and their events' pages built on request (event-market.ts `eventPart`).
 *
 * Why `markets:search` is read when some id is missing: the response's version is made of the
 * snapshots read (adapter.ts), and a missing id reads none. The search snapshot changes whenever an
 * event comes or goes, so "missing" is not served from memory after the market appeared.
 */
export const getMarketsById: Handler<'/api/v1/markets/by-id'> = async ({ ids }, ctx) => {
  const events = new Map<string, Promise<Event | null>>();
  const eventOf = (slug: string) => {
    let event = events.get(slug);
    if (event === undefined) {
      event = eventPart(ctx, { of: 'event', slug }, eventSnapshotSchema).then((s) => s?.data.event ?? null);
      events.set(slug, event);
    }
    return event;
  };
  const indexed = await Promise.all(ids.map((id) => ctx.marketEvent(id)));
  const unindexed = ids.filter((_, i) => indexed[i] === null);
  const looked = unindexed.length === 0 ? new Map<string, string>() : await ctx.onDemand.slugsOf(unindexed);
  const found = await Promise.all(
    ids.map(async (id, i): Promise<{ event: string; market: Market } | null> => {
      const slug = indexed[i] ?? looked.get(id);
      if (slug === undefined) return null;
      const market = (await eventOf(slug))?.markets.find((m) => m.id === id);
      return market === undefined ? null : { event: slug, market };
    }),
  );
  const markets = found.filter((f) => f !== null);
  const missing = ids.filter((_, i) => found[i] === null);
  if (missing.length > 0) await ctx.snapshots.read('markets:search', marketSearchSnapshotSchema);
  return { data: { live: ctx.live(), count: markets.length, markets, missing } };
};
