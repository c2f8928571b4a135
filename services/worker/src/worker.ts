import type { Redis } from 'ioredis';
import { createSnapshotTrigger, redisKeys, type Config, type Logger, type SnapshotTrigger } from '@pm/shared';
import type { Db } from '@pm/shared/db';
import { startQueueWorkers, type QueueWorkers } from './jobs.js';
import { createSnapshotBuilder, type Clock } from './snapshots/builder.js';
import { createBuildSnapshotsProcessor } from './snapshots/processor.js';

/**
 * The worker service as a factory, so tests and the launcher run it in-process and main.ts only wires.
 *
 * Snapshots: a full build at start, then `build-snapshots` jobs (one per interval however many
 * changes; see shared/src/snapshot-trigger.ts), and a sweep every interval that requests a job when
 * the dirty set still holds ids (changes that arrived while a job was running, inside the
 * deduplication window, made no job of their own), when the catalog version moved past the last
 * build's, or when the periodic full build is due.
 */

export interface WorkerDeps {
  config: Pick<Config, 'REDIS_PREFIX' | 'PUBLIC_WEB_URL' | 'SNAPSHOT_INTERVAL_MS'>;
  db: Db;
  /** The service's connection (`maxRetriesPerRequest: null`); the factory duplicates it for BullMQ. */
  redis: Redis;
  logger: Logger;
  clock?: Clock;
  /** Period of the dirty-set sweep. Default max(SNAPSHOT_INTERVAL_MS, 250 ms). */
  sweepEveryMs?: number;
  /** Period of the full safety build. Default 30 s. */
  fullBuildEveryMs?: number;
}

export interface WorkerService {
  /** Full snapshot build, then start consuming jobs and sweeping. */
  start(): Promise<void>;
  /** Stop sweeping and taking jobs; the running job finishes (its writes land whole or not at all). */
  stop(): Promise<void>;
  /** Rebuild every snapshot now (waits for a running build first). */
  buildAll(): Promise<{ events: number; lists: number; ms: number }>;
}

export function createWorker(deps: WorkerDeps): WorkerService {
  const { config, logger } = deps;
  const clock = deps.clock ?? { now: () => Date.now() };
  const keys = redisKeys(config.REDIS_PREFIX);
  const builder = createSnapshotBuilder({
    db: deps.db,
    redis: deps.redis,
    prefix: config.REDIS_PREFIX,
    webUrl: config.PUBLIC_WEB_URL,
    logger: logger.child({ part: 'snapshots' }),
    clock,
    ...(deps.fullBuildEveryMs === undefined ? {} : { fullEveryMs: deps.fullBuildEveryMs }),
  });
  let trigger: SnapshotTrigger | undefined;
  let bullConnection: Redis | undefined;
  let queueWorkers: QueueWorkers | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping = false;

  async function sweep(sweeper: SnapshotTrigger): Promise<void> {
    if (sweeping) return; // a slow Redis must not pile sweeps up
    sweeping = true;
    try {
      const [dirty, version] = await Promise.all([deps.redis.scard(keys.dirtyEvents), deps.redis.get(keys.catalogVersion)]);
      // A change whose job add was deduplicated (it arrived while a job ran, inside the window)
      // left only its trace: ids in the dirty set, or a catalog version newer than the last build.
      if (dirty > 0) await sweeper.requestBuild('sweep');
      else if ((version ?? '0') !== builder.builtVersion()) await sweeper.requestBuild('catalog-sweep');
      else if (builder.fullBuildDue()) await sweeper.requestBuild('periodic');
    } catch (err) {
      logger.warn({ err }, 'snapshot sweep failed');
    } finally {
      sweeping = false;
    }
  }

  return {
    async start() {
      const stats = await builder.build({ full: true, reason: 'start' });
      logger.info(stats, 'initial snapshots built');
      bullConnection = deps.redis.duplicate({ maxRetriesPerRequest: null });
      queueWorkers = startQueueWorkers({
        registry: { snapshots: { 'build-snapshots': createBuildSnapshotsProcessor(builder) } },
        consume: [{ queue: 'snapshots', concurrency: 1 }],
        connection: bullConnection,
        prefix: config.REDIS_PREFIX,
        logger,
      });
      const sweeper = createSnapshotTrigger({
        redis: deps.redis,
        prefix: config.REDIS_PREFIX,
        intervalMs: config.SNAPSHOT_INTERVAL_MS,
        logger,
      });
      trigger = sweeper;
      // As often as builds may run, so a change whose job was deduplicated waits about one interval.
      const every = deps.sweepEveryMs ?? Math.max(config.SNAPSHOT_INTERVAL_MS, 250);
      sweepTimer = setInterval(() => void sweep(sweeper), every);
      sweepTimer.unref();
    },
    async stop() {
      clearInterval(sweepTimer);
      sweepTimer = undefined;
      await queueWorkers?.close();
      queueWorkers = undefined;
      await builder.idle();
      await trigger?.close();
      trigger = undefined;
      bullConnection?.disconnect();
      bullConnection = undefined;
    },
    async buildAll() {
      const { events, lists, ms } = await builder.build({ full: true, reason: 'buildAll' });
      return { events, lists, ms };
    },
  };
}
