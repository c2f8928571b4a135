import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import type { SnapshotName } from '@pm/shared/redis';
import { sql, tables } from '@pm/shared/db';
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
  type CallSubset,
  type ComboListSnapshot,
  type ErrorBody,
  type LeaderboardSnapshot,
  type MarketCallsSnapshot,
  type UserRecord,
  type UserSkill,
} from '@pm/shared/api';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { apiRedis, combo, leaderboardRow as row, startApp, writeSnapshot, type RunningApp } from '../testing/fixtures.js';

/**
 * Endpoints 5–10 against a real Redis and Postgres. The lists of everyone's calls, the leaderboard
 * and combos are record snapshots seeded in the worker's documented format
 * (shared/src/api/records-resources.ts); a call's page and a person's record and call lists are read
 * from Postgres, seeded here with the rows the write path and projections would leave. Every body is
 * checked against the endpoint table's response schema (or the Error schema).
 */

const WEB = 'http://localhost:3000';
const AVATAR = 'https://img.example/a.png';
let testRedis: TestRedis;
let emptyRedis: TestRedis;
let tdb: TestDatabase;
let emptyDb: TestDatabase;
let redis: Redis;
let emptyClient: Redis;
let api: RunningApp;
let emptyApi: RunningApp;

const SETTLED_AT = '2026-11-20T13:00:00.000Z';

function call(i: number, over: Partial<Call> = {}): Call {
  return {
    id: `c${i}`,
    user: { handle: 'Alice', avatar: AVATAR },
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

/** Alice's 30 calls, newest first; c1 is her one settled call (won). */
const latest = Array.from({ length: 30 }, (_, i) => (i === 1 ? call(i, { status: 'won', profit_on_10: 15, settled_at: SETTLED_AT }) : call(i)));
const user: Omit<UserRecord, keyof UserSkill> = {
  handle: 'Alice',
  display_name: 'Alice A.',
  avatar: AVATAR,
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
/** The page of c1 (`GET /calls/c1`): docs/api.md's call subset with its thesis updates. */
const c1Page: CallSubset = {
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
};

/**
 * The rows behind the Postgres-read endpoints, as the write path and the projections would leave
 * them: Alice with her 30 calls (`latest`), a thesis update on c1 and her projected record (`user`);
 * bob, who exists but has made no call and whom the projection has not reached (no user_records row).
 */
async function seedDatabase(): Promise<void> {
  const { db } = tdb;
  await db.query(sql`insert into events (id, slug, title, category, league) values ('e1', 'ars-che', 'Arsenal vs Chelsea', 'Football', 'epl')`);
  await db.query(sql`insert into markets (id, event_id, condition_id, position, question, label) values ('m1', 'e1', '0xm1', 0, 'Will Arsenal win?', 'Arsenal')`);
  await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values ('m1', 0, 'Yes', 't10'), ('m1', 1, 'No', 't11')`);
  const [alice]: Array<{ id: number }> = await db.query(sql`
    insert into users (handle, display_name, avatar, bio, interests, joined_at)
    values (${user.handle}, ${user.display_name}, ${user.avatar}, ${user.bio}, ${user.interests}, ${user.joined_at})
    returning id
  `);
  await db.query(sql`insert into users (handle, display_name, joined_at) values ('bob', 'Bob B.', '2026-02-01T00:00:00Z')`);
  await tables.calls(db).insert(
    ...latest.map((c) => ({
      id: c.id,
      user_id: alice!.id,
      market_id: c.market_id,
      outcome_index: c.outcome_index,
      chance_at_call: String(c.chance_at_call),
      thesis: c.thesis,
      status: c.status,
      profit_on_10: c.profit_on_10 === null ? null : String(c.profit_on_10),
      made_at: new Date(c.made_at),
      settled_at: c.settled_at === null ? null : new Date(c.settled_at),
    })),
  );
  await db.query(sql`insert into thesis_updates (call_id, body, at) values ('c1', 'Saka starts', '2026-11-20T12:30:00Z')`);
  await db.query(sql`
    insert into user_records (user_id, calls, settled, won, lost, right_pct, profit_on_10, profit_7d, xp, streak, followers, following, copies)
    values (${alice!.id}, ${user.calls}, ${user.settled}, ${user.won}, 1, ${user.right_pct}, ${user.profit_on_10}, ${user.profit_7d},
            ${user.xp}, ${user.streak}, ${user.followers}, ${user.following}, ${user.copies})
  `);
}

async function seed(name: SnapshotName, payload: unknown): Promise<void> {
  await writeSnapshot(testRedis.redis, testRedis.prefix, name, payload, `"${name.replace(/[^a-z0-9]/gi, '')}-1"`);
}

beforeAll(async () => {
  [testRedis, emptyRedis] = await Promise.all([createTestRedis('api_records'), createTestRedis('api_records_empty')]);
  [tdb, emptyDb] = await Promise.all([createTestDatabase('api_records'), createTestDatabase('api_records_empty')]);
  [redis, emptyClient] = await Promise.all([apiRedis(testRedis.url), apiRedis(emptyRedis.url)]);
  await seedDatabase();
  await seed('calls:latest', { calls: latest } satisfies CallListSnapshot);
  await seed('calls:market:m1', { platform_split: [3, 1], calls: latest.slice(0, 3) } satisfies MarketCallsSnapshot);
  for (const sort of ['profit', 'right', 'xp', 'week'] as const) {
    const rows = sort === 'right' ? [row(1, 'Alice')] : Array.from({ length: 30 }, (_, i) => row(i + 1, `p${i + 1}`));
    await seed(`leaderboard:${sort}`, { rows } satisfies LeaderboardSnapshot);
  }
  await seed('combos:open', { combos: Array.from({ length: 25 }, (_, i) => combo(`k${i}`, 'open')) } satisfies ComboListSnapshot);
  await seed('combos:won', { combos: [combo('kw', 'won')] } satisfies ComboListSnapshot);
  await seed('combos:lost', { combos: [] } satisfies ComboListSnapshot);
  await seed('combos:void', { combos: [] } satisfies ComboListSnapshot);
  const env = { RATE_LIMIT_PER_MINUTE: '100000' };
  api = await startApp({ redis, env: { ...env, REDIS_PREFIX: testRedis.prefix, DATABASE_URL: tdb.url } });
  emptyApi = await startApp({ redis: emptyClient, env: { ...env, REDIS_PREFIX: emptyRedis.prefix, DATABASE_URL: emptyDb.url } });
});

afterAll(async () => {
  // The apps first: each closes its page reader's pool before its database is dropped.
  await api?.close();
  await emptyApi?.close();
  redis?.disconnect();
  emptyClient?.disconnect();
  await testRedis?.cleanup();
  await emptyRedis?.cleanup();
  await tdb?.drop();
  await emptyDb?.drop();
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
    expect(body.call).toEqual(c1Page);
    expect(Object.keys(body.call).sort()).toEqual(['chance_at_call', 'id', 'outcome', 'profit_on_10', 'question', 'status', 'thesis', 'thesis_updates', 'url', 'user']);
    // A call without thesis updates has an empty list; an open one no profit yet.
    expect((await ok('/api/v1/calls/c0', callResponseSchema, 30)).call).toMatchObject({ id: 'c0', status: 'open', profit_on_10: null, thesis_updates: [] });
  });

  it('is a 404 for an unknown id, and a 400 for an over-long one', async () => {
    expect(await error(await get('/api/v1/calls/nope'), 404, 'not_found')).toContain('nope');
    await error(await get(`/api/v1/calls/${'x'.repeat(65)}`), 400, 'bad_request');
  });
});

describe('GET /api/v1/users/{handle}', () => {
  it.each(['alice', 'Alice', 'ALICE', '@alice', '@Alice', '%40ALICE'])('finds the record as %s', async (handle) => {
    const body = await ok(`/api/v1/users/${handle}`, userResponseSchema, 30);
    // Her record's skill: one decided call in the data (c1, won at 0.4; her row's sums are zeros),
    // ranked first of the one person with a record on the boards she qualifies for.
    const calibration: UserSkill['calibration'] = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, calls: 0, predicted: null, won_pct: null }));
    calibration[4] = { from: 0.4, to: 0.5, calls: 1, predicted: 0.4, won_pct: 100 };
    expect(body.user).toEqual({ ...user, brier: 0, clv: null, calibration, ranks: { profit: 1, right: 1, xp: 1, week: null, clv: null, brier: null } });
    expect(body.category).toBeNull();
  });

  it('gives zeros for a person the projection has not reached yet', async () => {
    const body = await ok('/api/v1/users/BOB', userResponseSchema, 30);
    expect(body.user).toEqual({
      handle: 'bob',
      display_name: 'Bob B.',
      avatar: null,
      calls: 0,
      settled: 0,
      won: 0,
      right_pct: 0,
      profit_on_10: 0,
      profit_7d: 0,
      xp: 0,
      streak: 0,
      followers: 0,
      following: 0,
      copies: 0,
      bio: '',
      interests: [],
      joined_at: '2026-02-01T00:00:00.000Z',
      url: `${WEB}/u/bob`,
      brier: null,
      clv: null,
      calibration: Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, calls: 0, predicted: null, won_pct: null })),
      ranks: { profit: null, right: null, xp: null, week: null, clv: null, brier: null },
    });
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
    expect(body.calls).toEqual(latest.slice(0, 25));
    const won = await ok('/api/v1/users/alice/calls?status=Won&limit=100', userCallsResponseSchema, 30);
    expect(won.calls.map((c) => [c.id, c.status])).toEqual([['c1', 'won']]);
    expect(won.next_cursor).toBeNull();
  });

  it('leads from the first page through next_cursor to the rest, each call exactly once', async () => {
    const first = await ok('/api/v1/users/alice/calls', userCallsResponseSchema, 30);
    expect(first.next_cursor).toEqual(expect.any(String));
    const rest = await ok(`/api/v1/users/alice/calls?cursor=${encodeURIComponent(first.next_cursor!)}`, userCallsResponseSchema, 30);
    expect(rest).toMatchObject({ handle: 'Alice', count: 5, next_cursor: null });
    expect([...first.calls, ...rest.calls]).toEqual(latest);

    // Pages of 7 (the last one short), and a filter's walk stays in its filter.
    const ids: string[] = [];
    let path: string | null = '/api/v1/users/ALICE/calls?limit=7';
    while (path !== null) {
      const page: z.output<typeof userCallsResponseSchema> = await ok(path, userCallsResponseSchema, 30);
      ids.push(...page.calls.map((c) => c.id));
      expect(ids.length, 'walk ends').toBeLessThanOrEqual(latest.length);
      path = page.next_cursor === null ? null : `/api/v1/users/ALICE/calls?limit=7&cursor=${encodeURIComponent(page.next_cursor)}`;
    }
    expect(ids).toEqual(latest.map((c) => c.id));
    const open = await ok('/api/v1/users/alice/calls?status=open&limit=28', userCallsResponseSchema, 30);
    const openRest = await ok(`/api/v1/users/alice/calls?status=open&cursor=${encodeURIComponent(open.next_cursor!)}`, userCallsResponseSchema, 30);
    expect([...open.calls, ...openRest.calls].map((c) => c.id)).toEqual(latest.filter((c) => c.status === 'open').map((c) => c.id));
    expect(openRest.next_cursor).toBeNull();
  });

  it('refuses a cursor of another filter', async () => {
    const first = await ok('/api/v1/users/alice/calls?limit=1', userCallsResponseSchema, 30);
    expect(await error(await get(`/api/v1/users/alice/calls?status=open&cursor=${encodeURIComponent(first.next_cursor!)}`), 400, 'bad_request')).toMatch(/^cursor /);
  });

  it.each(['status=maybe', 'limit=0', 'limit=101', 'limit=x'])('refuses %s with a 400', async (query) => {
    expect(await error(await get(`/api/v1/users/alice/calls?${query}`), 400, 'bad_request')).toMatch(/^(status|limit) /);
  });

  it('is a 404 for an unknown person, and an empty list for a person who has made no call', async () => {
    await error(await get('/api/v1/users/nobody/calls'), 404, 'not_found');
    for (const query of ['', '?status=open', '?status=won']) {
      const body = await ok(`/api/v1/users/@Bob/calls${query}`, userCallsResponseSchema, 30);
      expect(body).toEqual({ ok: true, handle: 'bob', count: 0, calls: [], next_cursor: null });
    }
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

describe('before the worker has built any record, over an empty database', () => {
  it.each(['/api/v1/calls', '/api/v1/calls?market=m1', '/api/v1/leaderboard', '/api/v1/combos'])('%s is a 503', async (path) => {
    const res = await fetch(`${emptyApi.base}${path}`);
    await error(res, 503, 'unavailable');
  });

  // Read from Postgres: no such call or person there.
  it.each(['/api/v1/calls/c1', '/api/v1/users/alice', '/api/v1/users/alice/calls'])('%s is a 404', async (path) => {
    await error(await fetch(`${emptyApi.base}${path}`), 404, 'not_found');
  });
});
