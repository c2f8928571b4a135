import path from 'node:path';
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { createSnapshotTrigger, type SnapshotTrigger } from '@pm/shared/queues';
import { duplicateRedis, redisKeys } from '@pm/shared/redis';
import type { Config } from '@pm/shared/config';
import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import { startQueueWorkers, type QueueWorkers } from './jobs.js';
import { createSnapshotBuilder, type Clock } from './market-snapshots/builder.js';
import { createBuildSnapshotsProcessor } from './market-snapshots/processor.js';
import { createHistoryBuilder, startHistoryLoop, type HistoryLoop } from './market-snapshots/history.js';
import { createRecordSnapshotBuilder } from './record-snapshots/builder.js';
import { createBuildRecordSnapshotsProcessor } from './record-snapshots/processor.js';
import { createRecordsTrigger, type RecordsTrigger } from '@pm/shared/records';
import { createSettleMarketProcessor } from './settlement/processor.js';
import { createStreamWriter } from '@pm/shared/stream';
import { createWindowUpkeepProcessor, createProjectUsersProcessor, createRebuildAllProcessor } from './projections/processor.js';
import { requestRebuildIfStale, scheduleWeekRollover, scheduleWindowUpkeep } from './projections/schedule.js';
import { createOutboxRelay, type OutboxRelay } from './outbox/relay.js';
import { createHistoryRollupProcessor, scheduleHistoryRollup } from './history/rollup-job.js';
import { createArchiveDayProcessor, createArchivePlanProcessor, scheduleArchivePlan } from './archive/archive-job.js';
import { createReconciler, type Reconciler, type RepairKind } from './outbox/reconciler.js';
import { createRetirement, type Retirement } from './retire/retire.js';

/**
 * The worker service as a factory, so tests and the launcher run it in-process and main.ts only wires.
 *
 * Snapshots: a full build at start, then `build-snapshots` jobs, one at a time, each started as
 * soon as the previous one finished when changes came meanwhile (see shared/src/queues/snapshot-trigger.ts),
 * and a sweep every interval, the safety net, that requests a job when the dirty set still holds
 * ids (a trigger call dropped during a Redis blip), when the catalog version moved past the last
 * build's, or when the periodic full build is due.
 *
 * The change channel: the outbox relay turns outbox rows (written by every change in its own
 * transaction) into jobs, and the reconciler re-derives from Postgres whatever Redis lost
 * (services/worker/src/outbox). Both run in every worker process; several at once are safe.
 */

export interface WorkerDeps {
  /** Without ARCHIVE_DIR the archive's jobs are neither scheduled nor taken (tests of other parts). */
  config: Pick<Config, 'REDIS_PREFIX' | 'PUBLIC_WEB_URL' | 'SNAPSHOT_INTERVAL_MS'> & Partial<Pick<Config, 'CLOSED_RETENTION_HOURS' | 'TRADES_RETENTION_DAYS' | 'ARCHIVE_DIR'>>;
  db: Db;
  /** The service's connection (`maxRetriesPerRequest: null`); the factory duplicates it for BullMQ. */
  redis: Redis;
  logger: Logger;
  clock?: Clock;
  /** Period of the safety sweep. Default max(SNAPSHOT_INTERVAL_MS, 250 ms). */
  sweepEveryMs?: number;
  /** Period of the full safety build. Default 30 s. */
  fullBuildEveryMs?: number;
  /** Told of each BullMQ Worker once started (the metrics attach to its events). */
  onQueueWorker?: (worker: Worker) => void;
  /** A queue's worker took no job while jobs waited and was replaced (jobs.ts, `StallGuard`). */
  onQueueWorkerReplaced?: (queue: string) => void;
  /** DATABASE_URL, for the outbox relay's LISTEN connection; without it the relay polls only. */
  databaseUrl?: string;
  /** Period of the reconciler's passes. Default 15 s. */
  reconcileEveryMs?: number;
  /** Told of each repair the reconciler made (the metrics count them). */
  onRepair?: (kind: RepairKind, n: number) => void;
  /** Period of the archive's plan. Default 10 minutes. */
  archivePlanEveryMs?: number;
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
  // How long a closed event's keys stay: the retirement pass and every builder that writes them (retire/closed-expiry.ts).
  const retentionMs = (config.CLOSED_RETENTION_HOURS ?? 24) * 3_600_000;
  const archiveDir = config.ARCHIVE_DIR === undefined ? undefined : path.resolve(config.ARCHIVE_DIR);
  // Both snapshot families read the same Postgres and write under the same prefix.
  const source = { db: deps.db, redis: deps.redis, prefix: config.REDIS_PREFIX, webUrl: config.PUBLIC_WEB_URL, clock, retentionMs };
  const builder = createSnapshotBuilder({
    ...source,
    logger: logger.child({ part: 'snapshots' }),
    // The API is waiting for a retired event's snapshots: its histories are built now, not at the next tick.
    onRetiredBuilt: () => historyLoop?.nudge(),
    ...(deps.fullBuildEveryMs === undefined ? {} : { fullEveryMs: deps.fullBuildEveryMs }),
  });
  // Record snapshots (calls, users, leaderboard, combos): built from the dirty set `dirty:records`.
  const records = createRecordSnapshotBuilder({ ...source, logger: logger.child({ part: 'record-snapshots' }) });
  let trigger: SnapshotTrigger | undefined;
  let bullConnection: Redis | undefined;
  let recordsTrigger: RecordsTrigger | undefined;
  let queueWorkers: QueueWorkers | undefined;
  let relay: OutboxRelay | undefined;
  let reconciler: Reconciler | undefined;
  let retirement: Retirement | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping = false;
  // Price history snapshots (`history:<marketId>:<range>`): their own throttled loop.
  const history = createHistoryBuilder({ db: deps.db, redis: deps.redis, prefix: config.REDIS_PREFIX, clock, retentionMs, logger: logger.child({ part: 'history' }) });
  let historyLoop: HistoryLoop | undefined;
  // Settlements for `GET /api/v1/stream` (shared/src/stream).
  const stream = createStreamWriter({ redis: deps.redis, prefix: config.REDIS_PREFIX, logger });

  let recordsBuilding = false;
  /**
   * Records left dirty by a deduplicated job, or the periodic (and first) full build: built here
   * directly, one at a time, without blocking the market sweep.
   */
  async function sweepRecords(): Promise<void> {
    if (recordsBuilding) return;
    recordsBuilding = true; // before the first await: the start-up call and the sweep may overlap
    let full: boolean;
    try {
      full = await records.fullBuildDue();
      if (!full && (await records.pending()) === 0) {
        recordsBuilding = false;
        return;
      }
    } catch (err) {
      recordsBuilding = false;
      throw err;
    }
    void records
      .build({ full, reason: full ? 'periodic' : 'sweep' })
      .catch((err: unknown) => logger.warn({ err }, 'record snapshot build failed'))
      .finally(() => {
        recordsBuilding = false;
      });
  }

  async function sweep(sweeper: SnapshotTrigger): Promise<void> {
    if (sweeping) return; // a slow Redis must not pile sweeps up
    sweeping = true;
    try {
      const [dirty, version] = await Promise.all([deps.redis.scard(keys.dirtyEvents), deps.redis.get(keys.catalogVersion)]);
      // A change whose trigger call did not get through (Redis blip) left only its trace: ids in
      // the dirty set, or a catalog version newer than the last build.
      if (dirty > 0) await sweeper.requestBuild('sweep');
      else if ((version ?? '0') !== builder.builtVersion()) await sweeper.requestBuild('catalog-sweep');
      else if (builder.fullBuildDue()) await sweeper.requestBuild('periodic');
      await sweepRecords();
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
      bullConnection = duplicateRedis(deps.redis, { maxRetriesPerRequest: null });
      // Settlement and projections request their follow-up work (projections, record snapshots) through it.
      recordsTrigger = createRecordsTrigger({ redis: bullConnection, prefix: config.REDIS_PREFIX, intervalMs: config.SNAPSHOT_INTERVAL_MS });
      const sweeper = createSnapshotTrigger({ redis: deps.redis, prefix: config.REDIS_PREFIX, logger });
      trigger = sweeper;
      const projectionDeps = { db: deps.db, redis: deps.redis, prefix: config.REDIS_PREFIX, trigger: recordsTrigger, snapshots: sweeper, logger: logger.child({ part: 'projections' }) };
      queueWorkers = startQueueWorkers({
        registry: {
          snapshots: { 'build-snapshots': createBuildSnapshotsProcessor(builder) },
          records: { 'build-record-snapshots': createBuildRecordSnapshotsProcessor(records) },
          settlement: {
            'settle-market': createSettleMarketProcessor({
              db: deps.db,
              logger: logger.child({ part: 'settlement' }),
              stream,
              records: recordsTrigger,
              buildRecords: () => records.build({ reason: 'settlement' }),
            }),
          },
          projections: {
            'project-users': createProjectUsersProcessor(projectionDeps),
            'rebuild-all': createRebuildAllProcessor(projectionDeps),
            'window-upkeep': createWindowUpkeepProcessor(projectionDeps),
          },
          history: {
            'history-rollup': createHistoryRollupProcessor({ db: deps.db, logger: logger.child({ part: 'history-rollup' }), clock, tradesRetentionDays: config.TRADES_RETENTION_DAYS ?? 30 }),
          },
          archive: {
            'archive-plan': createArchivePlanProcessor({ db: deps.db, connection: bullConnection, prefix: config.REDIS_PREFIX, logger: logger.child({ part: 'archive' }), clock }),
            'archive-day': createArchiveDayProcessor({ db: deps.db, dir: archiveDir ?? '', logger: logger.child({ part: 'archive' }) }),
          },
        },
        consume: [
          { queue: 'snapshots', concurrency: 1 },
          // Record builds run beside market builds, never in front of them (the builder chains its own).
          { queue: 'records', concurrency: 1 },
          // Markets settle independently (each locks its own row); batches of projections serialise anyway.
          { queue: 'settlement', concurrency: 2 },
          { queue: 'projections', concurrency: 1 },
          { queue: 'history', concurrency: 1 },
          // One day's file at a time per process: the export's memory is bounded per writer.
          ...(archiveDir === undefined ? [] : [{ queue: 'archive' as const, concurrency: 1 }]),
        ],
        connection: bullConnection,
        prefix: config.REDIS_PREFIX,
        logger,
        ...(deps.onQueueWorker === undefined ? {} : { onWorker: deps.onQueueWorker }),
        guard: { ...(deps.onQueueWorkerReplaced === undefined ? {} : { onReplaced: deps.onQueueWorkerReplaced }) },
      });
      await scheduleWeekRollover(bullConnection, config.REDIS_PREFIX);
      await scheduleWindowUpkeep(bullConnection, config.REDIS_PREFIX);
      await scheduleHistoryRollup(bullConnection, config.REDIS_PREFIX);
      if (archiveDir !== undefined) await scheduleArchivePlan(bullConnection, config.REDIS_PREFIX, deps.archivePlanEveryMs);
      if (await requestRebuildIfStale(deps.db, bullConnection, config.REDIS_PREFIX)) logger.info('projections missing or of another version: rebuild queued');
      // Changes never wait for it (they request their own build); it catches what a blip dropped.
      const every = deps.sweepEveryMs ?? Math.max(config.SNAPSHOT_INTERVAL_MS, 250);
      // The full record build at start, in the background: over a big history it may be long.
      void sweepRecords().catch((err: unknown) => logger.warn({ err }, 'record snapshot build failed'));
      sweepTimer = setInterval(() => void sweep(sweeper), every);
      sweepTimer.unref();
      historyLoop = startHistoryLoop(history, { logger });
      relay = createOutboxRelay({
        db: deps.db,
        ...(deps.databaseUrl === undefined ? {} : { databaseUrl: deps.databaseUrl }),
        connection: bullConnection,
        prefix: config.REDIS_PREFIX,
        records: recordsTrigger,
        snapshots: sweeper,
        logger,
      });
      relay.start();
      reconciler = createReconciler({
        db: deps.db,
        redis: deps.redis,
        connection: bullConnection,
        prefix: config.REDIS_PREFIX,
        records: recordsTrigger,
        rebuildMarketSnapshots: () => {
          history.rebuildAll();
          return builder.build({ full: true, reason: 'reconcile' });
        },
        // Before this process's first full build has completed (the one at start, over a big history
        // minutes long) `calls:latest` is missing because that build writes the lists last: a second
        // full build behind it would only repeat it. After it, a lost `calls:latest` is also caught by
        // the sweep (fullBuildDue).
        rebuildRecordSnapshots: async () => (records.hasFullBuild() ? records.build({ full: true, reason: 'reconcile' }) : undefined),
        logger,
        ...(deps.onRepair === undefined ? {} : { onRepair: deps.onRepair }),
        ...(deps.reconcileEveryMs === undefined ? {} : { everyMs: deps.reconcileEveryMs }),
      });
      reconciler.start();
      // Closed events' keys expire a while after they closed (docs/redis-keys.md).
      retirement = createRetirement({
        db: deps.db,
        redis: deps.redis,
        prefix: config.REDIS_PREFIX,
        logger: logger.child({ part: 'retire' }),
        retentionMs,
      });
      retirement.start();
    },
    async stop() {
      clearInterval(sweepTimer);
      sweepTimer = undefined;
      await relay?.stop();
      relay = undefined;
      await reconciler?.stop();
      reconciler = undefined;
      await retirement?.stop();
      retirement = undefined;
      await historyLoop?.stop();
      historyLoop = undefined;
      await queueWorkers?.close();
      queueWorkers = undefined;
      await stream.flush();
      await recordsTrigger?.close();
      recordsTrigger = undefined;
      await builder.idle();
      await records.idle();
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
