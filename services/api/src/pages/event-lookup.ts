import { sql, type ReadQueryable } from '@pm/shared/db';
import type { Logger } from '@pm/shared/logger';
import { ApiError } from '../http/errors.js';

/**
 * Which event Postgres knows under a slug or a market id, for a snapshot the API did not find
 * (snapshots/on-demand.ts): a closed event's keys are retired from Redis a day after it closed, and
 * its pages are then built again on request. A key probe on `events.slug` (unique) or `markets`'
 * primary key, and one on `calls_market_newest` per market: an unknown slug costs one index probe
 * and nothing else. Read-only, on the API's read pool (read-pool.ts).
 */

export interface KnownMarket {
  id: string;
  /** It has a first outcome: the worker writes a history for it (possibly with no points). */
  hasOutcome: boolean;
  /** Someone called it: the worker writes its call list. */
  called: boolean;
}

export interface KnownEvent {
  id: string;
  slug: string;
  /** Closed: its keys are retired from Redis a day after it closed. */
  closed: boolean;
  /** Its markets, in catalog order. */
  markets: KnownMarket[];
}

export interface EventLookup {
  /** The event with this slug; null when Postgres has none. */
  bySlug(slug: string): Promise<KnownEvent | null>;
  /** Each market id's event (ids of no market are absent). */
  byMarkets(marketIds: readonly string[]): Promise<Map<string, KnownEvent>>;
}

const UNAVAILABLE = 'market data is unavailable right now; please try again shortly';

interface Row {
  id: string;
  slug: string;
  closed: boolean;
  markets: KnownMarket[] | null;
}

export function createEventLookup(deps: { db: Pick<ReadQueryable, 'query'>; logger: Logger }): EventLookup {
  /**
   * inputs: which events (a fragment over `e`). outputs: per event, its id, slug, whether it is
   * closed and its markets (id, whether it has a first outcome, whether anyone called it), in
   * catalog order.
   */
  async function events(where: ReturnType<typeof sql>): Promise<KnownEvent[]> {
    let rows: Row[];
    try {
      rows = await deps.db.query(sql`
        select e.id, e.slug, e.closed,
               (select json_agg(json_build_object(
                         'id', m.id,
                         'hasOutcome', exists (select 1 from outcomes o where o.market_id = m.id and o.outcome_index = 0),
                         'called', exists (select 1 from calls c where c.market_id = m.id))
                       order by m.position, m.id)
                from markets m where m.event_id = e.id) as markets
        from events e
        where ${where}
      `);
    } catch (err) {
      deps.logger.warn({ err }, 'event lookup failed');
      throw new ApiError('unavailable', UNAVAILABLE, { cause: err });
    }
    return rows.map((r) => ({ id: r.id, slug: r.slug, closed: r.closed, markets: r.markets ?? [] }));
  }

  return {
    async bySlug(slug) {
      return (await events(sql`e.slug = ${slug}`))[0] ?? null;
    },
    async byMarkets(marketIds) {
      const out = new Map<string, KnownEvent>();
      if (marketIds.length === 0) return out;
      const ids = new Set(marketIds);
      for (const event of await events(sql`e.id in (select event_id from markets where id = any(${[...ids]}::text[]))`)) {
        for (const m of event.markets) if (ids.has(m.id)) out.set(m.id, event);
      }
      return out;
    },
  };
}
