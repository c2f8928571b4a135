import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startOwnRedis, uniqueSuffix, type OwnRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { RedisRateLimitStore } from './rate-limit-store.js';

/**
 * The rate limiter's Redis store: the requests of one client that arrive together are counted by one
 * script call, each in its own place, and the count is exact across processes (each with a Redis
 * connection of its own). On a Redis of its own, so the script calls can be read from INFO commandstats.
 */

let own: OwnRedis;
let redis: Redis;

beforeAll(async () => {
  own = await startOwnRedis();
  // As the API connects (main.ts): auto-pipelining on.
  redis = new Redis(own.url, { enableAutoPipelining: true });
});

afterAll(async () => {
  redis?.disconnect();
  await own?.stop();
});

/** Script calls Redis has run so far (EVALSHA, and EVAL when the script was not loaded yet). */
async function scriptCalls(): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) calls += Number(m[2]);
  return calls;
}

function storeOn(connection: Redis, prefix: string, options: { windowMs?: number; timeoutMs?: number } = {}): RedisRateLimitStore {
  const store = new RedisRateLimitStore(connection, { prefix, timeoutMs: options.timeoutMs });
  store.init({ windowMs: options.windowMs ?? 60_000 });
  return store;
}

/** Two stores on one prefix, the second with a Redis connection of its own, as two processes would be. */
async function twoProcesses(run: (a: RedisRateLimitStore, b: RedisRateLimitStore) => Promise<void>): Promise<void> {
  const prefix = `rl_${uniqueSuffix()}:`;
  const other = new Redis(own.url, { enableAutoPipelining: true });
  try {
    await run(storeOn(redis, prefix), storeOn(other, prefix));
  } finally {
    other.disconnect();
  }
}

describe('rate-limit store', () => {
  it('counts a burst of one client in one script call, each request in its own place', async () => {
    const store = storeOn(redis, `rl_${uniqueSuffix()}:`);
    const before = await scriptCalls();
    const counts = await Promise.all(Array.from({ length: 15 }, () => store.increment('198.51.100.7')));
    expect(await scriptCalls()).toBe(before + 1);
    // Exactly what 15 separate calls would have said, in arrival order, with one window.
    expect(counts.map((c) => c.totalHits)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    const reset = counts[0]!.resetTime!.getTime();
    expect(reset - Date.now()).toBeGreaterThan(55_000);
    expect(reset - Date.now()).toBeLessThanOrEqual(60_000);
    // Another client has a count of its own.
    expect((await store.increment('198.51.100.8')).totalHits).toBe(1);
  });

  it('keeps the count exact across two processes hit at the same time', async () => {
    await twoProcesses(async (a, b) => {
      const counts = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).increment('203.0.113.9')));
      // Every request has its own place: 1 to 80, each once.
      expect(counts.map((c) => c.totalHits).sort((x, y) => x - y)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
    });
  });

  it('counts a client whose requests alternate between two processes request by request: each answer continues the other', async () => {
    await twoProcesses(async (a, b) => {
      const hits: number[] = [];
      for (let i = 0; i < 130; i++) hits.push((await (i % 2 === 0 ? a : b).increment('203.0.113.40')).totalHits);
      expect(hits).toEqual(Array.from({ length: 130 }, (_, i) => i + 1));
    });
  });

  it('starts a new window once the old one has passed', async () => {
    const store = storeOn(redis, `rl_${uniqueSuffix()}:`, { windowMs: 1_000 });
    await Promise.all([store.increment('192.0.2.1'), store.increment('192.0.2.1')]);
    const fresh = await until('the window to reset', async () => {
      const c = await store.increment('192.0.2.1');
      return c.totalHits === 1 ? c : undefined;
    }, { timeoutMs: 10_000, everyMs: 100 });
    expect(fresh.resetTime!.getTime() - Date.now()).toBeLessThanOrEqual(1_000);
  });

  it('rejects an increment Redis does not answer in time, and counts again after', async () => {
    const store = storeOn(redis, `rl_${uniqueSuffix()}:`, { timeoutMs: 200 });
    const pauser = new Redis(own.url);
    try {
      // Redis holds every other client's commands for a second: the counter does not answer in time.
      await pauser.client('PAUSE', 1_000);
      const during = await Promise.allSettled([store.increment('192.0.2.50'), store.increment('192.0.2.50')]);
      expect(during.map((d) => d.status)).toEqual(['rejected', 'rejected']);
      const after = await until('the counter to answer again', () => store.increment('192.0.2.50').catch(() => undefined), { timeoutMs: 5_000, everyMs: 50 });
      expect(after.totalHits).toBeGreaterThanOrEqual(1);
    } finally {
      pauser.disconnect();
    }
  });
});
