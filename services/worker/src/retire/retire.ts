import type { Redis } from 'ioredis';
import { sql, type Db } from '@pm/shared/db';
import type { Logger } from '@pm/shared/logger';
import { HISTORY_RANGES } from '@pm/shared/snapshots';
import { redisKeys } from '@pm/shared/redis';

/**
 * Retirement of closed events' Redis state. The exchange opens thousands of markets a day and each
 * leaves keys behind: its event's page, four history snapshots and a calls list per market, and a
 * field per token in the chance hashes and per market in the market index. Nothing else removes
 * them, so without this Redis grows with every market ever seen (docs/redis-keys.md).
 *
 * An event is retired `retentionMs` after it closed (its `updated_at` once `closed`: the catalog
 * bumps it only when a column changed, and closing is the last change). Each pass, every minute:
 * - the event's snapshot keys that have no expiry get PEXPIREAT closed-at + retention (idempotent; a
 *   time already past deletes them), so a worker that is down when the time comes does not keep them:
 *   Redis drops them. A key a builder wrote for a closed event carries its own expiry, never earlier
 *   (closed-expiry.ts), which stands: the API has the snapshots of a retired event built again on
 *   request, kept REBUILT_KEEP_MS (the retention, if shorter);
 * - the hash fields (chances and their times, the market index) cannot expire one by one, so they are
 *   deleted once the time has passed.
 * The first pass looks at every closed event (a stack that ran without this, or was stopped for
 * longer than the window); later passes at those closed within `retentionMs + WINDOW_MS`. Until
 * then a closed event's page, history and calls are served from these keys; afterwards they are
 * built again when asked for (services/api/src/snapshots/on-demand.ts). Markets closed inside an event that
 * is still open stay with it: their page shows them.
 */

export interface RetirementDeps {
  db: Pick<Db, 'query'>;
  redis: Redis;
  prefix: string;
  logger: Logger;
  /** How long a closed event's pages are kept. */
  retentionMs: number;
  /** Between passes. Default 60 s. */
  everyMs?: number;
  clock?: () => number;
  /** Told of the markets whose state was deleted, so in-memory copies can forget them too. */
  onRetired?: (retired: { eventIds: string[]; marketIds: string[]; tokenIds: string[] }) => void;
}

export interface PassStats {
  /** Closed events whose keys were given their expiry this pass. */
  expiring: number;
  /** Closed events whose retention ended since the last pass (their hash fields deleted). */
  retired: number;
}

export interface Retirement {
  start(): void;
  stop(): Promise<void>;
  pass(): Promise<PassStats>;
}

/** How far behind the retention a later pass still looks: a worker stopped for less than this misses nothing. */
const WINDOW_MS = 6 * 3_600_000;
/** Events per Redis pipeline. */
const BATCH = 200;

interface ClosedEvent {
  id: string;
  slug: string;
  closed_at: number;
  markets: string[] | null;
  tokens: string[] | null;
}

export function createRetirement(deps: RetirementDeps): Retirement {
  const keys = redisKeys(deps.prefix);
  const clock = deps.clock ?? (() => Date.now());
  const everyMs = deps.everyMs ?? 60_000;
  let first = true;
  let lastPassAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<PassStats> | undefined;

  /** inputs: the earliest close to look at (null: all). outputs: closed events with their markets and tokens. */
  async function closedEvents(since: Date | null): Promise<ClosedEvent[]> {
    const after = since === null ? sql`` : sql`and e.updated_at >= ${since}`;
    return deps.db.query(sql`
      select e.id, e.slug, (extract(epoch from e.updated_at) * 1000)::float8 as closed_at,
             array_agg(distinct m.id) filter (where m.id is not null) as markets,
             array_agg(distinct o.token_id) filter (where o.token_id is not null) as tokens
      from events e
      left join markets m on m.event_id = e.id
      left join outcomes o on o.market_id = m.id
      where e.closed ${after}
      group by e.id
    `);
  }

  async function pass(): Promise<PassStats> {
    const now = clock();
    const since = first ? null : new Date(now - deps.retentionMs - WINDOW_MS);
    const events = await closedEvents(since);
    let retired = 0;
    const gone = { eventIds: [] as string[], marketIds: [] as string[], tokenIds: [] as string[] };
    for (let i = 0; i < events.length; i += BATCH) {
      const pipe = deps.redis.pipeline();
      for (const e of events.slice(i, i + BATCH)) {
        const at = Math.round(e.closed_at + deps.retentionMs);
        const markets = e.markets ?? [];
        // NX: a key that has an expiry got it from this pass or from the builder that wrote it
        // (closed-expiry.ts: never earlier than this one), and a rebuilt key must not lose its keep.
        pipe.pexpireat(keys.snapshot(`event:${e.slug}`), at, 'NX');
        for (const m of markets) {
          for (const range of HISTORY_RANGES) pipe.pexpireat(keys.snapshot(`history:${m}:${range}`), at, 'NX');
          pipe.pexpireat(keys.snapshot(`calls:market:${m}`), at, 'NX');
        }
        if (at <= now) {
          if (first || at > lastPassAt) retired++;
          const tokens = e.tokens ?? [];
          if (tokens.length) pipe.hdel(keys.chances, ...tokens).hdel(keys.chanceAt, ...tokens).hdel(keys.quotes, ...tokens);
          if (markets.length) pipe.hdel(keys.marketEvents, ...markets);
          gone.eventIds.push(e.id);
          gone.marketIds.push(...markets);
          gone.tokenIds.push(...tokens);
        }
      }
      const results = (await pipe.exec()) ?? [];
      const failed = results.find(([err]) => err);
      if (failed) throw failed[0];
    }
    first = false;
    lastPassAt = now;
    if (gone.eventIds.length) deps.onRetired?.(gone);
    if (retired > 0) deps.logger.info({ retired, expiring: events.length }, 'closed events retired from Redis');
    return { expiring: events.length, retired };
  }

  function run(): Promise<PassStats> {
    running ??= pass()
      .catch((err: unknown) => {
        deps.logger.warn({ err }, 'retirement pass failed; the next one retries');
        return { expiring: 0, retired: 0 };
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  return {
    start() {
      void run();
      timer = setInterval(() => void run(), everyMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
    pass: run,
  };
}
