import type { Redis } from 'ioredis';
import { createRedis } from '../redis/connection.js';
import type { Config } from '../config.js';
import { createDb, type Db } from './connection.js';
import { migrate } from './migrate.js';
import type { Logger } from '../logger.js';

/**
 * Postgres and Redis as the ingestor and the worker open them: migrations first (idempotent and
 * locked, so services starting together are safe), one pool, and a Redis connection (a Cluster client
 * when REDIS_URL names one) BullMQ can be
 * given (`maxRetriesPerRequest: null`) that logs its errors instead of crashing the process.
 * `close` is in the order a shutdown closes them (service.ts).
 */
export async function openStores(
  config: Pick<Config, 'DATABASE_URL' | 'REDIS_URL'>,
  logger: Logger,
): Promise<{ db: Db; redis: Redis; close: Array<() => Promise<unknown>> }> {
  const { applied } = await migrate(config.DATABASE_URL);
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  const db = createDb(config.DATABASE_URL);
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: null });
  redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis error'));
  return { db, redis, close: [() => db.dispose(), () => redis.quit()] };
}
