import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_FRESH_MS, redisKeys } from '@pm/shared/redis';
import { startOwnRedis, type OwnRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { createIngestor, type Ingestor } from '../ingestor.js';
import { createHarness, quietLogger, TEST_TUNING, type Harness } from '../testing/harness.js';
import { gammaEvent } from '../testing/fake-exchange.js';

/**
 * `live` follows the feed's real state within 5 s of a recovery. The ingestor runs against
 * a Redis of its own (a throwaway redis-server without persistence, like the run line's), which is
 * killed for a while and started again EMPTY; the feed itself stays healthy (PONGs every 100 ms).
 * `live` is read from the feed hash with the API's rule: connected = "1" and the last sign of life
 * younger than FEED_FRESH_MS. Prints the seconds it took.
 */
const T = (n: number) => `8132104567925221259462638553270691275033272857194253228963137931245558399${String(n).padStart(4, '0')}`;

let h: Harness;
let own: OwnRedis;
let redis: Redis;
let ingestor: Ingestor;

/** The API's rule on the feed hash, read from the throwaway Redis with a client of its own. */
async function live(): Promise<boolean> {
  const reader = new Redis({ port: own.port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  try {
    await reader.connect();
    const [connected, lastAt] = await reader.hmget(redisKeys(h.config.REDIS_PREFIX).feed, 'market_connected', 'market_last_at');
    return connected === '1' && Date.now() - Number(lastAt) < FEED_FRESH_MS;
  } catch {
    return false;
  } finally {
    reader.disconnect();
  }
}

/** How long until `check` holds (ms). */
async function waitFor(label: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  await until(label, check, { timeoutMs, everyMs: 50 });
  return Date.now() - started;
}

beforeAll(async () => {
  h = await createHarness('ingestor_feed_health');
  h.fake.events.push(gammaEvent('e1', [{ id: 'm1', tokens: [T(1), T(2)], prices: ['0.4', '0.6'] }]));
  own = await startOwnRedis();
  // As the ingestor's main makes it: commands wait through an outage instead of failing.
  redis = new Redis({ port: own.port, host: '127.0.0.1', maxRetriesPerRequest: null, retryStrategy: (n) => Math.min(50 * n, 500) });
  redis.on('error', () => {}); // refused connections during the outage are the point
  ingestor = createIngestor({
    config: h.config,
    db: h.database.db,
    redis,
    logger: quietLogger,
    tuning: { ...TEST_TUNING, pingIntervalMs: 100, marketSilenceMs: 10_000 },
  });
  await ingestor.start();
});

afterAll(async () => {
  await ingestor?.stop().catch(() => {});
  redis?.disconnect();
  await own?.stop();
  await h?.cleanup();
});

describe('feed health through a Redis outage', () => {
  it('live is true within 5 s after Redis comes back empty, though nothing about the feed changed', { timeout: 60_000 }, async () => {
    await waitFor('live at start', live, 10_000);
    await own.stop();
    // The run line's Redis after an outage has lost everything: it comes back empty once the
    // ingestor's connection has seen it go.
    await until('the ingestor to lose Redis', async () => redis.status !== 'ready', { timeoutMs: 5_000, everyMs: 20 });
    await own.start();
    const tookMs = await waitFor('live again after the outage', live, 15_000);
    console.log(`Redis back empty after an outage: live again after ${(tookMs / 1000).toFixed(2)} s`);
    expect(tookMs).toBeLessThan(5_000);
  });

  it('live is true within 5 s after a market feed cut ends', { timeout: 60_000 }, async () => {
    await waitFor('live before the cut', live, 10_000);
    for (const s of h.fake.marketSockets) s.ws.terminate();
    await waitFor('live false during the cut', async () => !(await live()), 5_000);
    const tookMs = await waitFor('live again after the cut', live, 15_000);
    console.log(`market sockets cut: live again after ${(tookMs / 1000).toFixed(2)} s`);
    expect(tookMs).toBeLessThan(5_000);
  });
});
