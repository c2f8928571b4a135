import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queuePrefix, type JobData } from '../queues/names.js';
import { redisKeyBase, redisKeys } from '../redis/keys.js';

/**
 * The producer side of everything that follows a change to people's records: projection work
 * (queue `projections`, job `project-users`) and record snapshot rebuilds (queue `records`, job
 * `build-record-snapshots`). Used by the write path, the settlement worker and the projection worker.
 *
 * Both are coalesced the same way: the ids go into a Redis set first, then one job is added with
 * BullMQ deduplication (throttle, `ttl` = the interval) and a delay slightly LONGER than the ttl.
 * An add that is deduplicated away therefore happened inside the window, after its SADD, and the
 * job — which cannot start before the window closed — sees those ids; an add after the window
 * makes a job of its own. So a burst of thousands of calls makes one job per interval and no
 * change waits for a sweep.
 *
 * Members of the record snapshot dirty set (`recordsDirtyKey`), for the snapshot builder:
 *   `call:<callId>`     a call was made, updated (thesis) or settled
 *   `user:<userId>`     written by earlier versions for a person's record and lists, which the API
 *                       now reads from Postgres: accepted (old outbox rows) and needs nothing
 *   `market:<marketId>` the calls on a market, or its platform_split, changed
 *   `combos`            a combo was made or settled
 *   `leaderboard`       the leaderboard rows were re-ranked
 */

/** Set of record snapshot items to rebuild (members listed above). */
export const recordsDirtyKey = (prefix: string) => redisKeys(prefix).dirtyRecords;
/** Set of user ids whose user_records row is stale. */
export const projectionUsersDirtyKey = (prefix: string) => `${redisKeyBase(prefix)}:dirty:projection-users`;
/** Set of market ids whose market_splits rows are stale. */
export const projectionMarketsDirtyKey = (prefix: string) => `${redisKeyBase(prefix)}:dirty:projection-markets`;

export const PROJECT_USERS_DEDUP_ID = 'project-users';
export const RECORD_SNAPSHOTS_DEDUP_ID = 'build-record-snapshots';

export type RecordsDirtyMember = `call:${string}` | `user:${string | number}` | `market:${string}` | 'combos' | 'leaderboard';

export interface RecordsTrigger {
  /** Recompute these users' records and these markets' splits (then their snapshots). */
  projectionStale(change: { userIds: Iterable<string | number>; marketIds?: Iterable<string> }): Promise<void>;
  /** Rebuild these record snapshot items. */
  snapshotsDirty(members: Iterable<RecordsDirtyMember>): Promise<void>;
  /** Request a full rebuild of every record snapshot (after `npm run rebuild`). */
  requestFullSnapshotBuild(): Promise<void>;
  close(): Promise<void>;
}

export interface RecordsTriggerOptions {
  /** A connection to the stack's Redis; BullMQ shares it (it is not closed by `close()`). */
  redis: Redis;
  /** REDIS_PREFIX. */
  prefix: string;
  /** Coalescing window (ms): at most one job of each kind per window. Default 250. */
  intervalMs?: number;
}

/** How much later than the deduplication window a job starts, so the window has surely closed. */
const START_AFTER_WINDOW_MS = 50;

export function createRecordsTrigger(opts: RecordsTriggerOptions): RecordsTrigger {
  const intervalMs = opts.intervalMs ?? 250;
  const prefix = queuePrefix(opts.prefix);
  const projections = new Queue<JobData['project-users'], void, 'project-users'>('projections', { connection: opts.redis, prefix });
  const snapshots = new Queue<JobData['build-record-snapshots'], void, 'build-record-snapshots'>('records', {
    connection: opts.redis,
    prefix,
  });
  const coalesced = (id: string) => ({
    deduplication: { id, ttl: intervalMs },
    delay: intervalMs + START_AFTER_WINDOW_MS,
    attempts: 5,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: 50,
    // Failed jobs stay visible (the set is capped so a long outage cannot grow it without bound).
    removeOnFail: 1000,
  });

  return {
    async projectionStale(change) {
      const userIds = [...new Set([...change.userIds].map(String))];
      const marketIds = [...new Set(change.marketIds ?? [])];
      if (userIds.length === 0 && marketIds.length === 0) return;
      // SADD before the job: whichever job runs next sees these ids.
      if (userIds.length > 0) await opts.redis.sadd(projectionUsersDirtyKey(opts.prefix), ...userIds);
      if (marketIds.length > 0) await opts.redis.sadd(projectionMarketsDirtyKey(opts.prefix), ...marketIds);
      // The ids also ride in the job, so ids added while a job is running are not lost if that job
      // clears them from the set after it read them (see the projection processor).
      await projections.add('project-users', { userIds, marketIds }, coalesced(PROJECT_USERS_DEDUP_ID));
    },
    async snapshotsDirty(members) {
      const list = [...new Set(members)];
      if (list.length === 0) return;
      await opts.redis.sadd(recordsDirtyKey(opts.prefix), ...list);
      await snapshots.add('build-record-snapshots', {}, coalesced(RECORD_SNAPSHOTS_DEDUP_ID));
    },
    async requestFullSnapshotBuild() {
      await snapshots.add('build-record-snapshots', { full: true }, { attempts: 5, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: 50, removeOnFail: 1000 });
    },
    async close() {
      await Promise.all([projections.close(), snapshots.close()]);
    },
  };
}
