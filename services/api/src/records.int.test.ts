import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import type { SnapshotName } from '@pm/shared/redis';
import {
  callListResponseSchema,
  callResponseSchema,
  comboListResponseSchema,
  errorBodySchema,
  leaderboardResponseSchema,
  userCallsResponseSchema,
  userResponseSchema,
  type Call,
  type CallListSnapshot,
  type CallSnapshot,
  type ComboListSnapshot,
  type ErrorBody,
  type LeaderboardSnapshot,
  type MarketCallsSnapshot,
  type UserCallsSnapshot,
  type UserRecord,
  type UserSnapshot,
} from '@pm/shared/api';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { apiRedis, combo, leaderboardRow as row, startApp, writeSnapshot, type RunningApp } from './testing/fixtures.js';

/**
 * Endpoints 5–10 against a real Redis: record snapshots are seeded in the worker's documented format
 * (shared/src/api/records-resources.ts) and every body is checked against the endpoint table's
 * response schema (or the Error schema).
 */

const WEB = 'http://localhost:3000';
let testRedis: TestRedis;
let emptyRedis: TestRedis;
let redis: Redis;
let emptyClient: Redis;
let api: RunningApp;
let emptyApi: RunningApp;

function call(i: number, over: Partial<Call> = {}): Call {
  return {
    id: `c${i}`,
    user: { handle: 'Alice', avatar: null },
    market_id: 'm1',
    event: 'ars-che',
    question: 'Will Arsenal win?',
    outcome: 'Yes',
    outcome_index: 0,
    chance_at_call: 0.4,
    thesis: `thesis ${i}`,
    copied_from: null,
    is_fade: false,
    status: 'open',
    profit_on_10: null,
    made_at: new Date(Date.UTC(2026, 10, 20, 12, 60 - i)).toISOString(),
    settled_at: null,
    url: `${WEB}/c/c${i}`,
    ...over,
  };
}

/** 30 calls, newest first, as the worker stores them. */
const latest = Array.from({ length: 30 }, (_, i) => call(i));
const user: UserRecord = {
  handle: 'Alice',
  display_name: 'Alice A.',
  avatar: 'https://img.example/a.png',
  calls: 30,
  settled: 6,
  won: 4,
  right_pct: 80,
  profit_on_10: 50.5,
  profit_7d: 12.25,
  xp: 256,
  streak: 2,
  followers: 3,
  following: 1,
  copies: 2,
  bio: 'Reads the table.',
  interests: ['Football', 'Football: EPL'],
  joined_at: '2026-01-01T00:00:00.000Z',
  url: `${WEB}/u/Alice`,
};
async function seed(name: SnapshotName, payload: unknown): Promise<void> {
  await writeSnapshot(testRedis.redis, testRedis.prefix, name, payload, `"${name.replace(/[^a-z0-9]/gi, '')}-1"`);
}

beforeAll(async () => {
  [testRedis, emptyRedis] = await Promise.all([createTestRedis('api_records'), createTestRedis('api_records_empty')]);
  [redis, emptyClient] = await Promise.all([apiRedis(testRedis.url), apiRedis(emptyRedis.url)]);
  await seed('calls:latest', { calls: latest } satisfies CallListSnapshot);
  await seed('calls:market:m1', { platform_split: [3, 1], calls: latest.slice(0, 3) } satisfies MarketCallsSnapshot);
  await seed('call:c1', {
    call: {
      id: 'c1',
      user: { handle: 'Alice' },
      question: 'Will Arsenal win?',
      outcome: 'Yes',
      chance_at_call: 0.4,
      status: 'won',
      profit_on_10: 15,
      thesis: 'thesis 1',
      thesis_updates: [{ body: 'Saka starts', at: '2026-11-20T12:30:00.000Z' }],
      url: `${WEB}/c/c1`,
    },
  } satisfies CallSnapshot);
  await seed('user:alice', { user } satisfies UserSnapshot);
  await seed('user-calls:alice:all', { handle: 'Alice', calls: latest } satisfies UserCallsSnapshot);
  await seed('user-calls:alice:won', { handle: 'Alice', calls: [call(1, { status: 'won', profit_on_10: 15, settled_at: '2026-11-20T13:00:00.000Z' })] } satisfies UserCallsSnapshot);
  // `bob` exists but his lists are not built yet.
  await seed('user:bob', { user: { ...user, handle: 'bob', url: `${WEB}/u/bob` } } satisfies UserSnapshot);
  for (const sort of ['profit', 'right', 'xp', 'week'] as const) {
    const rows = sort === 'right' ? [row(1, 'Alice')] : Array.from({ length: 30 }, (_, i) => row(i + 1, `p${i + 1}`));
    await seed(`leaderboard:${sort}`, { rows } satisfies LeaderboardSnapshot);
  }
  await seed('combos:open', { combos: Array.from({ length: 25 }, (_, i) => combo(`k${i}`, 'open')) } satisfies ComboListSnapshot);
  await seed('combos:won', { combos: [combo('kw', 'won')] } satisfies ComboListSnapshot);
  await seed('combos:lost', { combos: [] } satisfies ComboListSnapshot);
  await seed('combos:void', { combos: [] } satisfies ComboListSnapshot);
  api = await startApp({ redis, env: { REDIS_PREFIX: testRedis.prefix, RATE_LIMIT_PER_MINUTE: '100000' } });
  emptyApi = await startApp({ redis: emptyClient, env: { REDIS_PREFIX: emptyRedis.prefix, RATE_LIMIT_PER_MINUTE: '100000' } });
});

afterAll(async () => {
  await api?.close();
  await emptyApi?.close();
  redis?.disconnect();
  emptyClient?.disconnect();
  await testRedis?.cleanup();
  await emptyRedis?.cleanup();
});

const get = (path: string, init?: RequestInit) => fetch(`${api.base}${path}`, init);

async function ok<S extends z.ZodType>(path: string, schema: S, maxAge: number): Promise<z.output<S>> {
  const res = await get(path);
  expect(res.status, path).toBe(200);
  expect(res.headers.get('cache-control')).toBe(`public, max-age=${maxAge}`);
  return schema.parse(await res.json());
}

async function error(res: Response, status: number, code: ErrorBody['error']['code']): Promise<string> {
  expect(res.status).toBe(status);
  const body = errorBodySchema.parse(await res.json());
  expect(body.error.code).toBe(code);
  return body.error.message;
}

describe('GET /api/v1/calls', () => {
  it('gives the 25 newest calls by default, newest first, without platform_split', async () => {
    const body = await ok('/api/v1/calls', callListResponseSchema, 15);
    expect(body.count).toBe(25);
    expect(body.calls.map((c) => c.id)).toEqual(latest.slice(0, 25).map((c) => c.id));
    expect('platform_split' in body).toBe(false);
    expect((await ok('/api/v1/calls?limit=100', callListResponseSchema, 15)).count).toBe(30);
    expect((await ok('/api/v1/calls?limit=2', callListResponseSchema, 15)).calls.map((c) => c.id)).toEqual(['c0', 'c1']);
  });

  it('filters by market and adds its platform split; a market nobody called is an empty list', async () => {
    const m1 = await ok('/api/v1/calls?market=m1', callListResponseSchema, 15);
    expect(m1).toMatchObject({ count: 3, platform_split: [3, 1] });
    const none = await ok('/api/v1/calls?market=no-such-market', callListResponseSchema, 15);
    expect(none).toEqual({ ok: true, count: 0, platform_split: [], calls: [], next_cursor: null });
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'limit=-1', 'limit=1&limit=2', `market=${'x'.repeat(101)}`])('refuses %s with a 400 naming the parameter', async (query) => {
    const message = await error(await get(`/api/v1/calls?${query}`), 400, 'bad_request');
    expect(message).toMatch(/^(limit|market) /);
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await get('/api/v1/calls?limit=5');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"/);
    const again = await get('/api/v1/calls?limit=5', { headers: { 'if-none-match': etag ?? '' } });
    expect(again.status).toBe(304);
  });
});

describe('GET /api/v1/calls/{id}', () => {
  it('gives the call subset with its thesis updates', async () => {
    const body = await ok('/api/v1/calls/c1', callResponseSchema, 30);
    expect(body.call).toMatchObject({ id: 'c1', status: 'won', profit_on_10: 15, thesis_updates: [{ body: 'Saka starts' }] });
    expect(Object.keys(body.call).sort()).toEqual(['chance_at_call', 'id', 'outcome', 'profit_on_10', 'question', 'status', 'thesis', 'thesis_updates', 'url', 'user']);
  });

  it('is a 404 for an unknown id, and a 400 for an over-long one', async () => {
    expect(await error(await get('/api/v1/calls/nope'), 404, 'not_found')).toContain('nope');
    await error(await get(`/api/v1/calls/${'x'.repeat(65)}`), 400, 'bad_request');
  });
});

describe('GET /api/v1/users/{handle}', () => {
  it.each(['alice', 'Alice', 'ALICE', '@alice', '@Alice', '%40ALICE'])('finds the record as %s', async (handle) => {
    const body = await ok(`/api/v1/users/${handle}`, userResponseSchema, 30);
    expect(body.user).toEqual(user);
  });

  it('is a 404 for an unknown handle and a 400 for a bare @ or an over-long handle', async () => {
    await error(await get('/api/v1/users/nobody'), 404, 'not_found');
    expect(await error(await get('/api/v1/users/@'), 400, 'bad_request')).toMatch(/^handle /);
    expect(await error(await get(`/api/v1/users/${'a'.repeat(52)}`), 400, 'bad_request')).toMatch(/^handle /);
  });
});

describe('GET /api/v1/users/{handle}/calls', () => {
  it("gives the person's calls newest first, spelled as they spell their handle", async () => {
    const body = await ok('/api/v1/users/@ALICE/calls', userCallsResponseSchema, 30);
    expect(body).toMatchObject({ handle: 'Alice', count: 25 });
    expect(body.calls[0]?.id).toBe('c0');
    const won = await ok('/api/v1/users/alice/calls?status=Won&limit=100', userCallsResponseSchema, 30);
    expect(won.calls.map((c) => [c.id, c.status])).toEqual([['c1', 'won']]);
  });

  it.each(['status=maybe', 'limit=0', 'limit=101', 'limit=x'])('refuses %s with a 400', async (query) => {
    expect(await error(await get(`/api/v1/users/alice/calls?${query}`), 400, 'bad_request')).toMatch(/^(status|limit) /);
  });

  it('is a 404 for an unknown person and a 503 for a known one whose lists are not built yet', async () => {
    await error(await get('/api/v1/users/nobody/calls'), 404, 'not_found');
    await error(await get('/api/v1/users/bob/calls'), 503, 'unavailable');
  });
});

describe('GET /api/v1/leaderboard', () => {
  it('sorts by profit by default and echoes the sort', async () => {
    const body = await ok('/api/v1/leaderboard', leaderboardResponseSchema, 30);
    expect(body).toMatchObject({ sort: 'profit', count: 25 });
    expect(body.rows.map((r) => r.rank)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    const right = await ok('/api/v1/leaderboard?sort=RIGHT&limit=100', leaderboardResponseSchema, 30);
    expect(right).toMatchObject({ sort: 'right', count: 1, rows: [{ handle: 'Alice', settled: 5 }] });
  });

  it.each(['sort=best', 'limit=0', 'limit=101', 'limit=2.0'])('refuses %s with a 400', async (query) => {
    expect(await error(await get(`/api/v1/leaderboard?${query}`), 400, 'bad_request')).toMatch(/^(sort|limit) /);
  });
});

describe('GET /api/v1/combos', () => {
  it('gives open combos by default, 20 of them, and echoes the applied status', async () => {
    const body = await ok('/api/v1/combos', comboListResponseSchema, 15);
    expect(body).toMatchObject({ status: 'open', count: 20 });
    const won = await ok('/api/v1/combos?status=won', comboListResponseSchema, 15);
    expect(won).toMatchObject({ status: 'won', count: 1, combos: [{ id: 'kw', xp_awarded: 200 }] });
    expect((await ok('/api/v1/combos?status=void', comboListResponseSchema, 15)).combos).toEqual([]);
    expect((await ok('/api/v1/combos?limit=50', comboListResponseSchema, 15)).count).toBe(25);
  });

  it.each(['status=pending', 'limit=0', 'limit=51', 'limit=ten'])('refuses %s with a 400', async (query) => {
    expect(await error(await get(`/api/v1/combos?${query}`), 400, 'bad_request')).toMatch(/^(status|limit) /);
  });
});

describe('before the worker has built any record', () => {
  it.each(['/api/v1/calls', '/api/v1/calls?market=m1', '/api/v1/leaderboard', '/api/v1/combos'])('%s is a 503', async (path) => {
    const res = await fetch(`${emptyApi.base}${path}`);
    await error(res, 503, 'unavailable');
  });

  it.each(['/api/v1/calls/c1', '/api/v1/users/alice', '/api/v1/users/alice/calls'])('%s is a 404', async (path) => {
    await error(await fetch(`${emptyApi.base}${path}`), 404, 'not_found');
  });
});
