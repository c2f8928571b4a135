import { pathToFileURL } from 'node:url';
import { openStores, postgresCheck } from '@pm/shared/db';
import { redisCheck, runService } from '@pm/shared/ops';
import { createWorkerMetrics } from './ops.js';
import { createWorker } from './worker.js';

export { createWorker, type WorkerDeps, type WorkerService } from './worker.js';

/** Composition root: Postgres and Redis, migrations, then the worker (service.ts does the rest). */
// Run only as the entry point (its bundle, services/worker/dist/main.mjs, or `tsx services/worker/src/main.ts`), not when imported by a launcher or test.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runService('worker', async ({ config, logger }) => {
    const { db, redis, close } = await openStores(config, logger);
    const jobMetrics = createWorkerMetrics({ db, redis, redisPrefix: config.REDIS_PREFIX });
    const worker = createWorker({
      config,
      db,
      redis,
      logger,
      databaseUrl: config.DATABASE_URL,
      onQueueWorker: (w) => jobMetrics.observe(w),
      onRepair: (kind, n) => jobMetrics.metrics.metric.reconcilerRepairs.inc({ kind }, n),
      onQueueWorkerReplaced: (queue) => jobMetrics.metrics.metric.queueWorkersReplaced.inc({ queue }),
    });
    return {
      ops: {
        port: config.WORKER_PORT,
        metrics: jobMetrics.metrics,
        readiness: { postgres: postgresCheck(db, config.DATABASE_URL), redis: redisCheck(redis) },
      },
      start: () => worker.start(),
      stop: () => worker.stop(),
      close: [() => jobMetrics.close(), ...close],
    };
  });
}
