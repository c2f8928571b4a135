import { openStores, postgresCheck } from '@pm/shared/db';
import { redisCheck, runService } from '@pm/shared/ops';
import { createIngestor } from './ingestor.js';
import { createIngestorMetrics } from './ops.js';
import { startSharedLoop, type SharedLoop } from './sharing/run-shared.js';
import { createWorkShare, defaultOwnerId } from './sharing/work-share.js';

/**
 * Composition root of the ingestor: Postgres and Redis, the market share when several ingestors
 * split the markets, then the ingestor (service.ts does the configuration, logger, ops port and
 * signals). Migrations normally run from the launcher; running them here too is safe. SIGTERM/SIGINT
 * stop it within 10 s: sockets closed, pending writes flushed, pools closed.
 */
runService('ingestor', async ({ config, logger }) => {
  const { db, redis, close } = await openStores(config, logger);

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

  return {
    ops: {
      port: config.INGESTOR_PORT,
      metrics: createIngestorMetrics({ stats: () => ingestor.stats(), redis, prefix: config.REDIS_PREFIX }),
      readiness: { postgres: postgresCheck(db, config.DATABASE_URL), redis: redisCheck(redis) },
    },
    async start() {
      await share?.start();
      await ingestor.start();
      if (share) sharedLoop = startSharedLoop({ ingestor, share, redis, prefix: config.REDIS_PREFIX, syncMs: config.CATALOG_SYNC_SECONDS * 1000, logger });
    },
    async stop() {
      await sharedLoop?.stop();
      await share?.stop();
      await ingestor.stop();
    },
    close,
  };
});
