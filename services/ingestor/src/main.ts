import { createLogger } from '@pm/shared/logger';
import { loadConfig } from '@pm/shared/config';
import { onShutdown, redisCheck, startedCheck, startOpsServer } from '@pm/shared/ops';
import { createDb, migrate, postgresCheck } from '@pm/shared/db';
import { createRedis } from '@pm/shared/redis';
import { createIngestor } from './ingestor.js';
import { createIngestorMetrics } from './ops.js';
import { startSharedLoop, type SharedLoop } from './sharing/run-shared.js';
import { createWorkShare, defaultOwnerId } from './sharing/work-share.js';

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

  // Several ingestors split the markets by leases (sharing/); one alone serves everything.
  let sharedLoop: SharedLoop | undefined;
  const share = config.INGESTOR_LEASES
    ? createWorkShare({
        redis,
        prefix: config.REDIS_PREFIX,
        owner: config.INGESTOR_ID ?? defaultOwnerId(config.INGESTOR_PORT),
        ttlMs: config.INGESTOR_LEASE_SECONDS * 1000,
        logger,
        // From the first tick on (before the feed starts, reassign does nothing: start subscribes the share).
        onChange: () => {
          ingestor.reassign();
          sharedLoop?.changed();
        },
      })
    : undefined;
  const ingestor = createIngestor({
    config,
    db,
    redis,
    logger,
    share,
    tuning: { marketSilenceMs: config.MARKET_WATCHDOG_SECONDS * 1000, pingIntervalMs: config.MARKET_PING_SECONDS * 1000, periodicSync: share === undefined },
  });

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
      await sharedLoop?.stop();
      await share?.stop();
      await ingestor.stop();
      await ops.close();
      await db.dispose();
      await redis.quit();
    },
    { logger },
  );

  await share?.start();
  await ingestor.start();
  if (share) sharedLoop = startSharedLoop({ ingestor, share, redis, prefix: config.REDIS_PREFIX, syncMs: config.CATALOG_SYNC_SECONDS * 1000, logger });
  started = true;
  logger.info('ingestor running');
}

main().catch((err: unknown) => {
  process.stderr.write(`ingestor failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
