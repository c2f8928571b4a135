import { pathToFileURL } from 'node:url';
import { createLogger } from '@pm/shared/logger';
import { loadConfig } from '@pm/shared/config';
import { onShutdown, redisCheck, startedCheck, startOpsServer } from '@pm/shared/ops';
import { createDb, migrate, postgresCheck } from '@pm/shared/db';
import { createRedis } from '@pm/shared/redis';
import { createWorkerMetrics } from './ops.js';
import { createWorker } from './worker.js';

export { createWorker, type WorkerDeps, type WorkerService } from './worker.js';

/** Composition root: configuration, logger, Postgres, Redis, migrations, then the worker. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger('worker', config);
  // Safe to re-run and to run concurrently with the other services' start-up (advisory lock).
  const { applied } = await migrate(config.DATABASE_URL);
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  const db = createDb(config.DATABASE_URL);
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: null });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const jobMetrics = createWorkerMetrics({ db, redis, redisPrefix: config.REDIS_PREFIX });
  const worker = createWorker({
    config,
    db,
    redis,
    logger,
    databaseUrl: config.DATABASE_URL,
    onQueueWorker: (w) => jobMetrics.observe(w),
    onRepair: (kind, n) => jobMetrics.metrics.metric.reconcilerRepairs.inc({ kind }, n),
  });
  // Up before the first snapshot build, so /healthz answers while it runs and /readyz says why not yet.
  let started = false;
  const ops = await startOpsServer({
    host: config.OPS_HOST,
    port: config.WORKER_PORT,
    metrics: jobMetrics.metrics,
    readiness: { postgres: postgresCheck(db, config.DATABASE_URL), redis: redisCheck(redis), started: startedCheck(() => started, 'the worker') },
    logger,
  });

  onShutdown(
    async () => {
      await worker.stop();
      await ops.close();
      await jobMetrics.close();
      await db.dispose();
      await redis.quit();
    },
    { logger },
  );

  await worker.start();
  started = true;
  logger.info('worker started');
}

// Run only as the entry point (`tsx services/worker/src/main.ts`), not when imported by a launcher or test.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`worker failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
