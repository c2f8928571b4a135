import type { Config } from '@pm/shared/config';
import { createReadPool, type ReadPool } from '@pm/shared/db';

export type { ReadPool, ReadQueryable } from '@pm/shared/db';
import type { Logger } from '@pm/shared/logger';
import type { ServiceMetrics } from '@pm/shared/metrics';

/**
 * The API's read pool: THE way any read-only Postgres statement of the API gets a connection (the
 * page reader, and any other read path: build it on the `ReadPool` this returns, held in the handler
 * context as `readDb`). Its statements go to DATABASE_READ_URL's streaming replica while that one is
 * fresh, else to DATABASE_URL (shared/src/db/read-pool.ts); without DATABASE_READ_URL, all to
 * DATABASE_URL. Writes never go through it.
 */

/** Connections of each pool (replica, primary) per API process. */
const POOL_SIZE = 8;
export const READ_STATEMENT_TIMEOUT_MS = 2_000;

export function createApiReadPool(config: Config, logger: Logger, metrics?: ServiceMetrics<'api'>): ReadPool {
  const pool = createReadPool({
    primaryUrl: config.DATABASE_URL,
    ...(config.DATABASE_READ_URL === undefined ? {} : { replicaUrl: config.DATABASE_READ_URL }),
    maxLagMs: config.DATABASE_READ_MAX_LAG_MS,
    poolSize: POOL_SIZE,
    statementTimeoutMs: READ_STATEMENT_TIMEOUT_MS,
    logger,
    ...(metrics ? { onRead: (server) => metrics.metric.dbReads.inc({ server }) } : {}),
  });
  if (metrics && config.DATABASE_READ_URL !== undefined) {
    metrics.beforeScrape('db_replica_lag', () => {
      const { lagMs } = pool.state();
      if (lagMs === null) metrics.metric.dbReplicaLag.reset();
      else metrics.metric.dbReplicaLag.set(lagMs / 1000);
    });
  }
  return pool;
}
