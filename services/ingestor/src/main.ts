import { createLogger } from '@pm/shared/logger';
import { loadConfig } from '@pm/shared/config';
import { onShutdown, redisCheck, startedCheck, startOpsServer } from '@pm/shared/ops';
import { createDb, migrate, postgresCheck } from '@pm/shared/db';
import { createRedis } from '@pm/shared/redis';
import { createIngestor } from './ingestor.js';
import { createIngestorMetrics } from './ops.js';

/**
 * Composition root of the ingestor: configuration, logger, Postgres, Redis, then the ingestor.
 * Migrations normally run from the launcher; running them here too is safe (idempotent, locked).
 * SIGTERM/SIGINT stop it gracefully within 10 s: sockets closed, pending writes flushed, pools closed.
 */

async function main() {
  const config = loadConfig();
  const logger = createLogger('ingestor', config);
  await migrate(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL);
  // BullMQ needs maxRetriesPerRequest: null on the connection it is given.
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: null });
  redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis error'));

  const ingestor = createIngestor({ config, db, redis, logger, tuning: { marketSilenceMs: config.MARKET_WATCHDOG_SECONDS * 1000, pingIntervalMs: config.MARKET_PING_SECONDS * 1000 } });

  // Up before the initial catalog sync, so /healthz answers while it runs and /readyz says why not yet.
  let started = false;
  const ops = await startOpsServer({
    host: config.OPS_HOST,
    port: config.INGESTOR_PORT,
    metrics: createIngestorMetrics({ stats: () => ingestor.stats(), redis, prefix: config.REDIS_PREFIX }),
    readiness: { postgres: postgresCheck(db, config.DATABASE_URL), redis: redisCheck(redis), started: startedCheck(() => started, 'the ingestor') },
    logger,
  });

  onShutdown(
    async () => {
      await ingestor.stop();
      await ops.close();
      await db.dispose();
      await redis.quit();
    },
    { logger },
  );

  await ingestor.start();
  started = true;
  logger.info('ingestor running');
}

main().catch((err: unknown) => {
  process.stderr.write(`ingestor failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
