import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { errorBodySchema, oddsResponseSchema } from '@pm/shared/api';
import { apiRedis, startApp, type RunningApp } from '../testing/fixtures.js';

/**
 * The rate limit at its configured default (120 a minute per IP), in a prefix of its own so its
 * counters disturb no other test.
 */

let testRedis: TestRedis;
let redis: Redis;
let api: RunningApp;

beforeAll(async () => {
  testRedis = await createTestRedis('api_rl');
  redis = await apiRedis(testRedis.url);
  api = await startApp({ redis, env: { REDIS_PREFIX: testRedis.prefix, TRUST_PROXY: '0' } });
});

afterAll(async () => {
  await api?.close();
  redis?.disconnect();
  await testRedis?.cleanup();
});

function limitHeaders(res: Response) {
  return {
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    reset: res.headers.get('x-ratelimit-reset'),
  };
}

describe('rate limit', () => {
  it('counts every request, answers the 121st with 429, and ignores X-Forwarded-For', async () => {
    expect(api.config.RATE_LIMIT_PER_MINUTE).toBe(120);
    const startedSeconds = Math.floor(Date.now() / 1000);

    const ok = await fetch(`${api.base}/api/v1/odds?chance=0.5`);
    // The window is counted from when Redis saw the request: between these two instants.
    const answeredSeconds = Math.ceil(Date.now() / 1000);
    expect(ok.status).toBe(200);
    oddsResponseSchema.parse(await ok.json());
    const first = limitHeaders(ok);
    expect(first.limit).toBe('120');
    expect(first.remaining).toBe('119');
    // Unix seconds when the window resets: about a minute from now.
    const reset = Number(first.reset);
    expect(reset).toBeGreaterThanOrEqual(startedSeconds + 59);
    expect(reset).toBeLessThanOrEqual(answeredSeconds + 60);

    const notFound = await fetch(`${api.base}/api/v1/nope`);
    expect(notFound.status).toBe(404);
    expect(limitHeaders(notFound)).toMatchObject({ limit: '120', remaining: '118' });
    // The reset is computed from Redis' PTTL per request; allow for a second boundary in between.
    expect(Math.abs(Number(limitHeaders(notFound).reset) - reset)).toBeLessThanOrEqual(1);

    const refused = await fetch(`${api.base}/api/v1/odds`, { method: 'POST' });
    expect(refused.status).toBe(405);
    expect(limitHeaders(refused).remaining).toBe('117');

    const bad = await fetch(`${api.base}/api/v1/odds?chance=2`);
    expect(bad.status).toBe(400);
    expect(limitHeaders(bad).remaining).toBe('116');

    // A browser's preflight is not counted.
    const preflight = await fetch(`${api.base}/api/v1/odds`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);

    // Requests 5 to 120, some claiming other addresses: all still allowed.
    const statuses: number[] = [];
    for (let batch = 0; batch < 4; batch++) {
      const responses = await Promise.all(
        Array.from({ length: 29 }, (_, i) =>
          fetch(`${api.base}/api/v1/odds?chance=0.5`, { headers: i % 2 ? { 'x-forwarded-for': `10.0.${batch}.${i}` } : {} }),
        ),
      );
      for (const r of responses) {
        statuses.push(r.status);
        await r.arrayBuffer();
      }
    }
    expect(statuses).toHaveLength(116);
    expect(statuses.every((s) => s === 200)).toBe(true);

    const limited = await fetch(`${api.base}/api/v1/odds?chance=0.5`);
    expect(limited.status).toBe(429);
    const errorBody = errorBodySchema.parse(await limited.json());
    expect(errorBody.error.code).toBe('rate_limited');
    expect(limitHeaders(limited)).toMatchObject({ limit: '120', remaining: '0' });
    expect(Math.abs(Number(limitHeaders(limited).reset) - reset)).toBeLessThanOrEqual(1);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('cache-control')).toBe('no-store');

    // TRUST_PROXY=0: a made-up X-Forwarded-For is not a new client.
    const spoofed = await fetch(`${api.base}/api/v1/odds?chance=0.5`, { headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(spoofed.status).toBe(429);
    await spoofed.arrayBuffer();

    // Everything is limited alike, the description and unknown paths included.
    expect((await fetch(`${api.base}/api/v1/openapi.json`)).status).toBe(429);
    const unknown = await fetch(`${api.base}/nope`);
    expect(unknown.status).toBe(429);
    expect(limitHeaders(unknown).remaining).toBe('0');
  });

  it('trusts X-Forwarded-For for the configured number of proxy hops', async () => {
    const proxyRedis = await createTestRedis('api_rl_proxy');
    const behindProxy = await startApp({
      redis,
      env: { REDIS_PREFIX: proxyRedis.prefix, TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: '1' },
    });
    try {
      const a1 = await fetch(`${behindProxy.base}/api/v1/odds?chance=0.5`, { headers: { 'x-forwarded-for': '198.51.100.1' } });
      const a2 = await fetch(`${behindProxy.base}/api/v1/odds?chance=0.5`, { headers: { 'x-forwarded-for': '198.51.100.1' } });
      const b1 = await fetch(`${behindProxy.base}/api/v1/odds?chance=0.5`, { headers: { 'x-forwarded-for': '198.51.100.2' } });
      expect([a1.status, a2.status, b1.status]).toEqual([200, 429, 200]);
    } finally {
      await behindProxy.close();
      await proxyRedis.cleanup();
    }
  });
});
