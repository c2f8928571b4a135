import { pino } from 'pino';
import { parseConfig, type Config } from '@pm/shared/config';
import { redisKeys, type RedisKeys } from '@pm/shared/redis';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { createIngestor, type Ingestor, type IngestorTuning } from '../ingestor.js';
import { startFakeExchange, type FakeExchange } from './fake-exchange.js';

/** One test file's world: its own database, Redis prefix and fake exchange. */
export interface Harness {
  fake: FakeExchange;
  database: TestDatabase;
  redis: TestRedis;
  config: Config;
  keys: RedisKeys;
  /** Ingestors made here are stopped by `cleanup`. */
  ingestor(tuning?: IngestorTuning): Ingestor;
  cleanup(): Promise<void>;
}

export const quietLogger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** Fast settings for tests: nothing periodic unless a test asks, short batching and backoff. */
export const TEST_TUNING: IngestorTuning = {
  periodicSync: false,
  sportsFeed: false,
  catalogPageDelayMs: 0,
  catalogRetryDelayMs: 20,
  catalogRefreshDebounceMs: 20,
  gamesFlushMs: 20,
  reconnectInitialMs: 20,
  reconnectMaxMs: 100,
  marketSilenceMs: 60_000,
};

export async function createHarness(label: string): Promise<Harness> {
  const [fake, database, redis] = await Promise.all([startFakeExchange(), createTestDatabase(label), createTestRedis(label)]);
  const config = parseConfig({
    GAMMA_URL: fake.httpUrl,
    CLOB_URL: fake.httpUrl,
    CLOB_WS_URL: fake.wsUrl,
    SPORTS_WS_URL: fake.wsUrl,
    REDIS_PREFIX: redis.prefix,
    SNAPSHOT_INTERVAL_MS: '50',
    LOG_LEVEL: 'silent',
  });
  const made: Ingestor[] = [];
  return {
    fake,
    database,
    redis,
    config,
    keys: redisKeys(redis.prefix),
    ingestor(tuning) {
      const ing = createIngestor({
        config,
        db: database.db,
        redis: redis.redis,
        logger: quietLogger,
        tuning: { ...TEST_TUNING, ...tuning },
      });
      made.push(ing);
      return ing;
    },
    async cleanup() {
      await Promise.all(made.map((i) => i.stop()));
      await fake.close();
      await redis.cleanup();
      await database.drop();
    },
  };
}
