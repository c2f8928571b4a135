import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import { queuePrefix, SNAPSHOT_DEDUP_ID, type JobData } from './names.js';
import { duplicateRedis } from '../redis/connection.js';
import { CATALOG_RELOAD_ALL, redisKeys } from '../redis/keys.js';

/**
 * The producer side of snapshot rebuilds, used by the ingestor's hot path (every order-book change)
 * and by the worker's own sweep.
 *
 * A change SADDs the event ids to the dirty set, then adds a `build-snapshots` job deduplicated
 * with `keepLastIfActive`: while a job waits, further adds are absorbed by it (it pops the whole
 * dirty set when it runs); while a job runs, the next add is kept and becomes a job the moment the
 * running one finishes. So a build starts as soon as the worker is idle, a change that arrives
 * during a build gets the build right after it, and there is never more than one job running and
 * one waiting, across every worker. (Throttle mode, used before, dropped an add that came while a
 * job ran inside its window: that change waited for the worker's sweep.)
 *
 * It fails fast: its own connection has no offline queue and every call has a deadline, so a Redis
 * outage never stalls the caller. A dropped call is logged (at most every 10 s) and otherwise
 * ignored: the next change triggers again and the worker rebuilds everything periodically. A call
 * past its deadline is not cancelled: the caller goes on, and the call is counted as dropped only if
 * it then fails; one that completes late (a Redis busy rather than away, as at a 5,000-event start)
 * is logged as late, so the log does not report lost changes that were not lost.
 */
export interface SnapshotTrigger {
  /** Mark these events' snapshots stale and request a coalesced build. Never throws. */
  markEventsDirty(eventIds: Iterable<string>): Promise<void>;
  /**
   * The catalog rows of these events changed (or, without ids, any row): mark them stale and for a
   * re-read of their rows, bump `catalogVersion` (one MULTI), and request a build. Never throws.
   */
  markCatalogChanged(eventIds?: Iterable<string>): Promise<void>;
  /** Request a coalesced build without marking anything (the worker's sweep). Never throws. */
  requestBuild(reason: string): Promise<void>;
  close(): Promise<void>;
}

export interface SnapshotTriggerOptions {
  /** Any connection to the stack's Redis; the trigger duplicates it with fail-fast options. */
  redis: Redis;
  /** REDIS_PREFIX. */
  prefix: string;
  logger?: Pick<Logger, 'warn'>;
  /** Deadline of one call (ms). Default 1000. */
  timeoutMs?: number;
}

const SNAPSHOTS_QUEUE = 'snapshots';
const BUILD_JOB = 'build-snapshots';
const DROP_LOG_EVERY_MS = 10_000;

class DeadlineError extends Error {
  override name = 'DeadlineError';
}

export function createSnapshotTrigger(opts: SnapshotTriggerOptions): SnapshotTrigger {
  const keys = redisKeys(opts.prefix);
  const timeoutMs = opts.timeoutMs ?? 1000;
  // Own connection so the caller's options (often maxRetriesPerRequest: null, an offline queue) do not
  // make this block: no offline queue, one retry, and a connect timeout below the call deadline.
  const connection = duplicateRedis(opts.redis, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: Math.max(timeoutMs, 500),
    lazyConnect: false,
  });
  const queue = new Queue<JobData['build-snapshots'], void, typeof BUILD_JOB>(SNAPSHOTS_QUEUE, {
    connection,
    prefix: queuePrefix(opts.prefix),
  });

  let closed = false;
  /**
   * A warning logged once per 10 s at most (during an outage every call of the hot path would log
   * otherwise), with how many calls it stood for since the last one (`count`, under `countName`).
   */
  const throttledWarn = (countName: 'dropped' | 'late', message: string) => {
    let count = 0;
    let lastAt = 0;
    return {
      count: () => (count += 1),
      warn: (fields: Record<string, unknown>) => {
        const now = Date.now();
        if (now - lastAt < DROP_LOG_EVERY_MS) return;
        lastAt = now;
        opts.logger?.warn({ ...fields, [countName]: count }, message);
        count = 0;
      },
    };
  };
  const drops = throttledWarn('dropped', 'snapshot trigger: redis unavailable, calls dropped');
  const lates = throttledWarn('late', 'snapshot trigger: redis answered after the deadline; the calls went through late');
  const warn = (what: string, err: unknown) => drops.warn({ err: err instanceof Error ? err.message : String(err), what });
  const noteDrop = (what: string, err: unknown) => {
    drops.count();
    warn(what, err);
  };
  /** A call that missed its deadline and then went through: nothing lost, but Redis answers slowly. */
  const noteLate = (what: string) => {
    lates.count();
    lates.warn({ what, deadlineMs: timeoutMs });
  };
  // Without listeners, an 'error' event from the connection or the queue would crash the caller.
  connection.on('error', (err: Error) => warn('connection', err));
  queue.on('error', (err: Error) => warn('queue', err));

  const jobOptions = {
    deduplication: { id: SNAPSHOT_DEDUP_ID, keepLastIfActive: true },
    removeOnComplete: 20,
    removeOnFail: 50,
  };

  /** Run `op` once the connection is ready, within the deadline; log and drop on any failure. */
  async function failFast(what: string, op: () => Promise<unknown>): Promise<void> {
    if (closed) return;
    const status = connection.status;
    if (status === 'reconnecting' || status === 'close' || status === 'end') {
      // Known to be down: do not wait for a deadline on every call of the hot path.
      noteDrop(what, new Error(`redis ${status}`));
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlineError(`no answer within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    const work = (async () => {
      await queue.waitUntilReady();
      await op();
    })();
    let pastDeadline = false;
    // The work goes on after the deadline: its outcome then says whether the call was lost or late.
    work.then(
      () => {
        if (pastDeadline) noteLate(what);
      },
      (err: unknown) => {
        if (pastDeadline) noteDrop(what, err);
      },
    );
    try {
      await Promise.race([work, deadline]);
    } catch (err) {
      if (err instanceof DeadlineError) pastDeadline = true;
      else noteDrop(what, err);
    } finally {
      clearTimeout(timer);
    }
  }

  const addBuildJob = (reason: string) => queue.add(BUILD_JOB, { reason }, jobOptions);

  return {
    async markEventsDirty(eventIds) {
      const ids = [...new Set(eventIds)];
      if (ids.length === 0) return;
      // SADD before the job, so whichever job runs next sees these ids.
      await failFast('markEventsDirty', async () => {
        await connection.sadd(keys.dirtyEvents, ...ids);
        await addBuildJob('dirty');
      });
    },
    async markCatalogChanged(eventIds = []) {
      const ids = [...new Set(eventIds)];
      await failFast('markCatalogChanged', async () => {
        const tx = connection.multi();
        if (ids.length > 0) tx.sadd(keys.dirtyEvents, ...ids).sadd(keys.catalogDirtyEvents, ...ids);
        else tx.sadd(keys.catalogDirtyEvents, CATALOG_RELOAD_ALL);
        const results = await tx.incr(keys.catalogVersion).exec();
        for (const [err] of results ?? []) if (err) throw err;
        await addBuildJob('catalog');
      });
    },
    async requestBuild(reason) {
      await failFast('requestBuild', () => addBuildJob(reason));
    },
    async close() {
      if (closed) return;
      closed = true;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        queue.close().catch(() => {}),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        }),
      ]);
      clearTimeout(timer);
      connection.disconnect();
    },
  };
}
