import type { Redis } from 'ioredis';
import type { z } from 'zod';
import type { HistoryRange } from '@pm/shared/snapshots';
import { redisKeys, type SnapshotName } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import { sleep } from '@pm/shared/wait';
import { ApiError } from '../http/errors.js';
import type { EventLookup, KnownEvent, KnownMarket } from '../pages/event-lookup.js';
import type { HeldSnapshot, SnapshotStore } from './snapshot-store.js';

/**
 * Snapshots of events Postgres knows but Redis does not hold, built on request (docs/design.md "The
 * read path"). A closed event's keys are retired a day after it closed (docs/redis-keys.md "Closed
 * events"), yet the closed list names it for good: its page, its markets' histories and its call
 * lists must still answer. The API does not build them (the worker is the one builder): it asks the
 * worker the way the ingestor does, by marking them in the sets the worker's builds drain (the event
 * in `dirty:events`, markets in `dirty:history:backfilled`, called markets in `dirty:records`; the
 * worker's sweep turns a non-empty set into a build within a few hundred ms), and waits for the
 * snapshot to be announced, up to WAIT_MS. For a closed event everything retired with it is asked
 * for at once (a client that opened the page follows to a history or the calls next); for an open
 * one (a page not built yet), only what was missing. The worker writes a closed event's snapshots
 * with an expiry (services/worker/src/retire/closed-expiry.ts), so Redis stays bounded.
 *
 * Abuse: an unknown slug or id costs one index probe (pages/event-lookup.ts) and asks for nothing;
 * a known event is asked for at most once per WAIT_MS per process, whatever the requests for it;
 * and at most MAX_ASKED events are being asked for at once per process (more is a 503 with
 * Retry-After), so a crawl of the closed list cannot make the worker rebuild more than that many
 * events per wait.
 */

/** How long a request waits for the worker to build a snapshot it asked for. */
export const WAIT_MS = 2_000;
/** Between looks at the snapshot store (what it holds is answered from memory; an announcement swaps it). */
const POLL_MS = 20;
/** Events asked for at once (within WAIT_MS of their request) per process at most. */
const MAX_ASKED = 100;
const RETRY_AFTER_SECONDS = 1;
const NOT_BUILT = 'this event is being built again from the records; please try again in a second';
const UNAVAILABLE = 'market data is unavailable right now; please try again shortly';

/** A snapshot of one event's, named by what it is of. */
export type EventPart =
  | { of: 'event'; slug: string }
  | { of: 'history'; marketId: string; range: HistoryRange }
  | { of: 'calls'; marketId: string };

export interface OnDemandBuilds {
  /**
   * The snapshot `part` names, which the store did not hold: when Postgres knows its event and the
   * worker writes such a snapshot for it, the worker is asked for the event's snapshots and the
   * snapshot is returned once built. null: no such event, or a snapshot the worker never writes
   * for it (a market nobody called has no call list); nothing is asked then. A 503 with Retry-After
   * when it is not built within WAIT_MS.
   */
  read<T>(part: EventPart, schema: z.ZodType<T>): Promise<HeldSnapshot<T> | null>;
  /** The events of these market ids that Postgres knows (market id → event slug), for a market index entry that is gone. */
  slugsOf(marketIds: readonly string[]): Promise<Map<string, string>>;
}

export interface OnDemandDeps {
  redis: Redis;
  prefix: string;
  store: Pick<SnapshotStore, 'read'>;
  lookup: EventLookup;
  logger: Logger;
  clock?: () => number;
  /** Default WAIT_MS. */
  waitMs?: number;
}

/** The snapshot's name. */
export const partName = (part: EventPart): SnapshotName =>
  part.of === 'event' ? `event:${part.slug}` : part.of === 'history' ? `history:${part.marketId}:${part.range}` : `calls:market:${part.marketId}`;

export function createOnDemandBuilds(deps: OnDemandDeps): OnDemandBuilds {
  const keys = redisKeys(deps.prefix);
  const clock = deps.clock ?? Date.now;
  const waitMs = deps.waitMs ?? WAIT_MS;
  /** What this process asked the worker for (a closed event's id, or an open event's snapshot name) → when. */
  const asked = new Map<string, number>();

  const notBuilt = () => new ApiError('unavailable', NOT_BUILT, { retryAfterSeconds: RETRY_AFTER_SECONDS });

  /** Marks the snapshots for the worker (see the module comment), unless this process did within the wait. */
  async function ask(event: KnownEvent, part: EventPart): Promise<void> {
    const now = clock();
    for (const [key, at] of asked) if (now - at >= waitMs) asked.delete(key);
    const key = event.closed ? event.id : partName(part);
    if (asked.has(key)) return;
    if (asked.size >= MAX_ASKED) throw notBuilt();
    asked.set(key, now);
    // A closed event: its page and all its markets' histories and call lists; an open one: the part asked.
    const all = event.closed;
    const markets = all ? event.markets : event.markets.filter((m) => part.of !== 'event' && m.id === part.marketId);
    const histories = all || part.of === 'history' ? markets.filter((m) => m.hasOutcome).map((m) => m.id) : [];
    const called = all || part.of === 'calls' ? markets.filter((m) => m.called).map((m) => `market:${m.id}`) : [];
    const tx = deps.redis.multi();
    if (all || part.of === 'event') tx.sadd(keys.dirtyEvents, event.id);
    if (histories.length > 0) tx.sadd(keys.backfilledHistory, ...histories);
    if (called.length > 0) tx.sadd(keys.dirtyRecords, ...called);
    try {
      const results = await tx.exec();
      for (const [err] of results ?? []) if (err) throw err;
    } catch (err) {
      asked.delete(key);
      deps.logger.warn({ err }, 'redis unavailable');
      throw new ApiError('unavailable', UNAVAILABLE, { cause: err });
    }
    deps.logger.info({ event: event.slug, closed: event.closed, snapshot: event.closed ? undefined : partName(part) }, 'snapshots Redis does not hold requested from the worker');
  }

  /** Whether the worker writes this snapshot for the event (a market of it, with a first outcome or called). */
  function written(part: EventPart, event: KnownEvent): boolean {
    if (part.of === 'event') return true;
    const market: KnownMarket | undefined = event.markets.find((m) => m.id === part.marketId);
    return market !== undefined && (part.of === 'history' ? market.hasOutcome : market.called);
  }

  return {
    async read<T>(part: EventPart, schema: z.ZodType<T>) {
      const event = part.of === 'event' ? await deps.lookup.bySlug(part.slug) : ((await deps.lookup.byMarkets([part.marketId])).get(part.marketId) ?? null);
      if (event === null || !written(part, event)) return null;
      const name = partName(part);
      const deadline = clock() + waitMs;
      await ask(event, part);
      for (;;) {
        const snapshot = await deps.store.read(name, schema);
        if (snapshot !== null) return snapshot;
        if (clock() >= deadline) throw notBuilt();
        await sleep(POLL_MS);
      }
    },
    async slugsOf(marketIds) {
      const events = await deps.lookup.byMarkets(marketIds);
      return new Map([...events].map(([id, e]) => [id, e.slug]));
    },
  };
}
