import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { redisKeys } from '@pm/shared/redis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { apiRedis, event, listSnapshot, startApp, writeSnapshot, type RunningApp } from '../testing/fixtures.js';

/**
 * The API's operations surface against a real Redis: /healthz, /readyz (Redis and the trending
 * snapshot), and /metrics with request durations by route template, 429s and snapshot ages. The ops
 * paths are outside the rate limit, so a scraper never sees a 429.
 */

let testRedis: TestRedis;
let redis: Redis;
let api: RunningApp;
const now = Date.now();

/** The value of one series in a Prometheus text scrape, or undefined when it is absent. */
function series(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matches = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (matches) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function scrape(): Promise<string> {
  const res = await fetch(`${api.base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
}

beforeAll(async () => {
  testRedis = await createTestRedis('api_ops');
  redis = await apiRedis(testRedis.url);
  api = await startApp({
    redis,
    env: { REDIS_PREFIX: testRedis.prefix, RATE_LIMIT_PER_MINUTE: '3' },
    clock: () => now,
  });
});

afterAll(async () => {
  await api?.close();
  redis?.disconnect();
  await testRedis?.cleanup();
});

describe('health and readiness', () => {
  it('is alive, and not ready until the worker has written the market list, the latest calls and the default board', async () => {
    const alive = await fetch(`${api.base}/healthz`);
    expect(alive.status).toBe(200);
    expect(await alive.json()).toMatchObject({ ok: true, service: 'api' });

    const notReady = await fetch(`${api.base}/readyz`);
    expect(notReady.status).toBe(503);
    const report = (await notReady.json()) as { ok: boolean; checks: Record<string, { ok: boolean; error?: string }> };
    expect(report.ok).toBe(false);
    expect(report.checks['redis']?.ok).toBe(true);
    expect(report.checks['snapshots']).toMatchObject({ ok: false, error: expect.stringContaining('markets:trending') });

    await writeSnapshot(testRedis.redis, testRedis.prefix, 'markets:trending', listSnapshot([event('a', 'A', 'Crypto', ['A?'])]), '"t1"');
    // The list alone is not enough: the first record build (latest calls, the default board) is still to come.
    const listOnly = await fetch(`${api.base}/readyz`);
    expect(listOnly.status).toBe(503);
    const listOnlyReport = (await listOnly.json()) as { checks: Record<string, { ok: boolean; error?: string }> };
    expect(listOnlyReport.checks['snapshots']?.error).toBe('snapshots calls:latest, leaderboard:profit not built yet');
    await writeSnapshot(testRedis.redis, testRedis.prefix, 'calls:latest', { calls: [] }, '"c1"');
    await writeSnapshot(testRedis.redis, testRedis.prefix, 'leaderboard:profit', { rows: [] }, '"l1"');
    const ready = await fetch(`${api.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ok: true, checks: { redis: { ok: true }, snapshots: { ok: true } } });
  });
});

describe('/metrics', () => {
  it('times requests by route template and status, and counts 429s', async () => {
    // Limit 3 a minute: two odds, one unknown path, then a refused one.
    expect((await fetch(`${api.base}/api/v1/odds?chance=0.25`)).status).toBe(200);
    expect((await fetch(`${api.base}/api/v1/odds?chance=2`)).status).toBe(400);
    expect((await fetch(`${api.base}/nowhere/at/all`)).status).toBe(404);
    expect((await fetch(`${api.base}/api/v1/markets/some-slug`)).status).toBe(429);

    const text = await scrape();
    expect(series(text, 'http_request_duration_seconds_count', { route: '/api/v1/odds', method: 'GET', status: '200' })).toBe(1);
    expect(series(text, 'http_request_duration_seconds_count', { route: '/api/v1/odds', status: '400' })).toBe(1);
    expect(series(text, 'http_request_duration_seconds_count', { route: 'unmatched', status: '404' })).toBe(1);
    // Refused before reaching its endpoint, yet still labelled with the template, never the raw slug.
    expect(series(text, 'http_request_duration_seconds_count', { route: '/api/v1/markets/{eventSlug}', status: '429' })).toBe(1);
    expect(text).not.toContain('some-slug');
    expect(series(text, 'http_rate_limited_total', {})).toBe(1);
    // Default process metrics, labelled with the service.
    expect(series(text, 'process_cpu_user_seconds_total', { service: 'api' })).toBeGreaterThanOrEqual(0);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds\{service="api"\}/m);
  });

  it('is never rate limited and does not time itself', async () => {
    for (let i = 0; i < 5; i++) await scrape();
    const text = await scrape();
    expect(text).not.toContain('route="/metrics"');
    expect(series(text, 'http_request_duration_seconds_count', { route: 'unmatched', status: '429' })).toBeUndefined();
  });

  it('exports the age of every snapshot family, from its newest write', async () => {
    const p = testRedis.prefix;
    await writeSnapshot(testRedis.redis, p, 'event:age-probe', { event: event('age-probe', 'Age probe', 'Tech', ['Q?']) }, '"age-1"');
    await writeSnapshot(testRedis.redis, p, 'leaderboard:week', { rows: [] }, '"week-1"');
    await redis.hset(redisKeys(p).snapshotBuiltAt, 'markets:trending', String(now - 42_000));
    const text = await scrape();
    expect(series(text, 'snapshot_age_seconds', { snapshot: 'markets:trending' })).toBe(42);
    for (const family of ['event', 'leaderboard']) {
      expect(series(text, 'snapshot_age_seconds', { snapshot: family }), family).toBeGreaterThanOrEqual(0);
    }
    // Never built: no series rather than a made-up age.
    expect(series(text, 'snapshot_age_seconds', { snapshot: 'markets:search' })).toBeUndefined();
    expect(series(text, 'snapshot_age_seconds', { snapshot: 'combos' })).toBeUndefined();
  });

  it('passes promtool check metrics', async (ctx) => {
    const text = await scrape();
    const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (probe.error) {
      console.warn('\n*** promtool is not installed (Debian package "prometheus"): the exposition format was NOT checked ***\n');
      ctx.skip();
    }
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
