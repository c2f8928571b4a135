import { afterAll, beforeAll, beforeEach } from 'vitest';
import { pino } from 'pino';
import { parseConfig, type Config } from '@pm/shared/config';
import { redisKeys, type RedisKeys } from '@pm/shared/redis';
import { createTestDatabase, createTestRedisPrefixes, resetDatabase, type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import { createIngestor, type Ingestor, type IngestorTuning } from '../ingestor.js';
import { startFakeExchange, type FakeExchange } from './fake-exchange.js';

/** One test file's world: its own database, Redis prefix and fake exchange. */
export interface Harness {
  fake: FakeExchange;
  database: TestDatabase;
  redis: TestRedisPrefix;
  config: Config;
  keys: RedisKeys;
  /** Ingestors made here are stopped by `fresh` and `cleanup`. */
  ingestor(tuning?: IngestorTuning): Ingestor;
  /**
   * A clean start for the next test: the ingestors made so far stopped, the database emptied, a new
   * Redis prefix (with `config` and `keys` for it), and a fake exchange with no events, requests,
   * failures, books or sockets.
   */
  fresh(): Promise<void>;
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
  const [fake, database, prefixes] = await Promise.all([startFakeExchange(), createTestDatabase(label), createTestRedisPrefixes(label)]);
  const configFor = (redis: TestRedisPrefix) =>
    parseConfig({
      GAMMA_URL: fake.httpUrl,
      CLOB_URL: fake.httpUrl,
      CLOB_WS_URL: fake.wsUrl,
      SPORTS_WS_URL: fake.wsUrl,
      REDIS_PREFIX: redis.prefix,
      SNAPSHOT_INTERVAL_MS: '50',
      LOG_LEVEL: 'silent',
    });
  const made: Ingestor[] = [];
  const redis = prefixes.next();
  const h: Harness = {
    fake,
    database,
    redis,
    config: configFor(redis),
    keys: redisKeys(redis.prefix),
    ingestor(tuning) {
      const ing = createIngestor({
        config: h.config,
        db: database.db,
        redis: h.redis.redis,
        logger: quietLogger,
        tuning: { ...TEST_TUNING, ...tuning },
      });
      made.push(ing);
      return ing;
    },
    async fresh() {
      await Promise.all(made.splice(0).map((i) => i.stop()));
      await resetDatabase(database.db);
      h.redis = prefixes.next();
      h.config = configFor(h.redis);
      h.keys = redisKeys(h.redis.prefix);
      fake.events.length = 0;
      fake.unlisted.clear();
      fake.sports = null;
      fake.requests.length = 0;
      fake.failNext(0);
      fake.silent = false;
      fake.initialBooks.clear();
      fake.restBooks.clear();
      fake.marketSockets.length = 0;
      fake.sportsSockets.length = 0;
    },
    async cleanup() {
      await Promise.all(made.map((i) => i.stop()));
      await fake.close();
      await prefixes.cleanup();
      await database.drop();
    },
  };
  return h;
}

/**
 * Registers the hooks that give each test of the file a clean world: one harness for the file
 * (`createHarness`), made `fresh` before each test and cleaned up after the file. The harness it
 * returns stands for that one; read it inside tests and hooks (the file's own `beforeEach` runs after
 * `fresh`).
 */
export function useHarness(label: string): Harness {
  let made: Harness | undefined;
  const h = () => {
    if (!made) throw new Error('useHarness: no harness yet (read it in a test or hook)');
    return made;
  };
  beforeAll(async () => {
    made = await createHarness(label);
  });
  afterAll(async () => {
    await made?.cleanup();
  });
  beforeEach(async () => {
    await h().fresh();
  });
  return {
    get fake() {
      return h().fake;
    },
    get database() {
      return h().database;
    },
    get redis() {
      return h().redis;
    },
    get config() {
      return h().config;
    },
    get keys() {
      return h().keys;
    },
    ingestor: (tuning) => h().ingestor(tuning),
    fresh: () => h().fresh(),
    cleanup: () => h().cleanup(),
  };
}
