import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { pino } from 'pino';
import {
  callListResponseSchema,
  comboListResponseSchema,
  errorBodySchema,
  leaderboardResponseSchema,
  userCallsResponseSchema,
} from '@pm/shared/api';
import { sql } from '@pm/shared/db';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { apiRedis, startApp, type RunningApp } from '../../services/api/src/testing/fixtures.js';
import { projectChanges } from '../../services/worker/src/projections/index.js';
import { createRecordSnapshotBuilder, type RecordSnapshotBuilder } from '../../services/worker/src/record-snapshots/builder.js';

/**
 * Walking the four paged lists (docs/design.md "Pagination") against real Postgres and
 * Redis: the worker's record snapshots are the first pages, the API's page reader the rest. Each
 * walk goes on while new items arrive (and, for the leaderboard, while ranks change) and must return
 * every item that was on the list when it began, exactly once, in list order — including calls whose
 * made_at differ only in microseconds (the snapshot's ISO times keep milliseconds) or not at all.
 */

const WEB = 'https://predict.example';
const USERS = 130;
let tdb: TestDatabase;
let tr: TestRedis;
let redis: Redis;
let app: RunningApp;
let builder: RecordSnapshotBuilder;
let userIds: number[] = [];
let made = 0;

/** Rebuild the record snapshots from the tables (as the worker does) and wait until the API holds them. */
async function rebuild(): Promise<void> {
  await builder.build({ full: true, reason: 'test' });
  await app.api.snapshots.sync();
}

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${app.base}${path}`);
  return { status: res.status, body: await res.json() };
}

async function ok<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
  const { status, body } = await get(path);
  expect(status, `${path}: ${JSON.stringify(body)}`).toBe(200);
  return schema.parse(body);
}

/** Inserts `n` calls made now (newest of all), by users in turn, on m1 or m2, alternately open and won. */
async function addCalls(n: number, opts: { at?: string; status?: 'open' | 'won' } = {}): Promise<void> {
  const ids = Array.from({ length: n }, () => `n${String(++made).padStart(5, '0')}`);
  await tdb.db.query(sql`
    insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, made_at, settled_at)
    select id, (${userIds}::bigint[])[1 + (i % ${USERS})], case when i % 2 = 0 then 'm1' else 'm2' end, 0, 0.25,
           ${opts.status ?? 'open'}, case when ${opts.status ?? 'open'} = 'won' then 30 end,
           coalesce(${opts.at ?? null}::timestamptz, clock_timestamp()), case when ${opts.status ?? 'open'} = 'won' then now() end
    from unnest(${ids}::text[]) with ordinality as t(id, i)
  `);
}

/** Follows next_cursor from `first` to the end, calling `between` after each page; the items' keys in walk order. */
async function walk<T>(first: string, read: (path: string) => Promise<{ items: T[]; next: string | null }>, key: (item: T) => string, between: () => Promise<void>) {
  const keys: string[] = [];
  let page = await read(first);
  let pages = 1;
  for (;;) {
    keys.push(...page.items.map(key));
    if (page.next === null) break;
    await between();
    const joiner = first.includes('?') ? '&' : '?';
    page = await read(`${first}${joiner}cursor=${encodeURIComponent(page.next)}`);
    pages += 1;
    expect(pages, 'walk ends').toBeLessThan(500);
  }
  return keys;
}

beforeAll(async () => {
  tdb = await createTestDatabase('list_pages');
  tr = await createTestRedis('list_pages');
  await tdb.db.query(sql`insert into events (id, slug, title, category) values ('e1', 'ev-one', 'Event one', 'Football'), ('e2', 'ev-two', 'Event two', 'Crypto')`);
  await tdb.db.query(sql`
    insert into markets (id, event_id, condition_id, position, question) values ('m1', 'e1', '0x1', 0, 'One?'), ('m2', 'e2', '0x2', 0, 'Two?')`);
  await tdb.db.query(sql`
    insert into outcomes (market_id, outcome_index, name, token_id) values ('m1', 0, 'Yes', 't10'), ('m1', 1, 'No', 't11'), ('m2', 0, 'Yes', 't20'), ('m2', 1, 'No', 't21')`);
  const users: Array<{ id: number }> = await tdb.db.query(sql`
    insert into users (handle, display_name) select 'p' || lpad(n::text, 3, '0'), 'P' || n from generate_series(1, ${USERS}) as n returning id`);
  userIds = users.map((u) => u.id);
  // 260 settled calls, three to a millisecond: made_at equal to the microsecond in pairs, a microsecond
  // apart otherwise, so the ISO times (milliseconds) of the snapshot cannot be the keyset.
  await tdb.db.query(sql`
    insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, made_at, settled_at)
    select 'c' || lpad(i::text, 4, '0'), (${userIds}::bigint[])[1 + (i % ${USERS})], case when i % 3 = 0 then 'm2' else 'm1' end, 0, 0.25,
           case when i % 4 = 0 then 'lost' else 'won' end, case when i % 4 = 0 then -10 else 30 + i % 7 end,
           '2026-11-01T00:00:00Z'::timestamptz + (i / 3) * interval '1 ms' + (case when i % 3 = 2 then 1 else 0 end) * interval '1 microsecond',
           '2026-11-02T00:00:00Z'::timestamptz + i * interval '1 second'
    from generate_series(1, 260) as i`);
  await tdb.db.query(sql`
    insert into combos (id, user_id, chance, wins_on_10, made_at)
    select 'k' || lpad(i::text, 3, '0'), (${userIds}::bigint[])[1 + (i % ${USERS})], 0.0625, 160,
           '2026-11-03T00:00:00Z'::timestamptz + (i / 2) * interval '1 ms'
    from generate_series(1, 70) as i`);
  await tdb.db.query(sql`
    insert into combo_legs (combo_id, leg_index, market_id, outcome_index, chance_at_call)
    select k.id, l.n, case when l.n = 0 then 'm1' else 'm2' end, 0, 0.25 from combos k cross join generate_series(0, 1) as l(n)`);
  await projectChanges(tdb.db, { userIds, marketIds: ['m1', 'm2'] }, new Date('2026-11-05T00:00:00Z'));

  redis = await apiRedis(tr.url);
  builder = createRecordSnapshotBuilder({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, webUrl: WEB, logger: pino({ level: 'silent' }), clock: { now: Date.now } });
  app = await startApp({ redis, env: { REDIS_PREFIX: tr.prefix, DATABASE_URL: tdb.url, PUBLIC_WEB_URL: WEB, RATE_LIMIT_PER_MINUTE: '100000' } });
  await rebuild();
}, 120_000);

afterAll(async () => {
  await app?.close();
  redis?.disconnect();
  await tr?.cleanup();
  await tdb?.drop();
});

const readCalls = async (path: string) => {
  const body = await ok(path, callListResponseSchema);
  return { items: body.calls, next: body.next_cursor };
};

describe('walking /api/v1/calls', () => {
  it('returns every call made before the walk began exactly once, newest first, while calls arrive', async () => {
    await rebuild(); // the first page (the snapshot) as of now, whatever ran before
    const before: Array<{ id: string }> = await tdb.db.query(sql`select id from calls order by made_at desc, id desc`);
    const ids = await walk('/api/v1/calls?limit=7', readCalls, (c) => c.id, async () => {
      await addCalls(2);
      // Every few pages the first page moves on too (the worker's snapshot rebuilt).
      if (made % 10 === 0) await rebuild();
    });
    expect(ids).toEqual(before.map((r) => r.id));
  });

  it('shows a call on a page past the first exactly as the first page (the snapshot) shows it', async () => {
    await rebuild();
    const first = await ok('/api/v1/calls?limit=100', callListResponseSchema);
    const small = await ok('/api/v1/calls?limit=10', callListResponseSchema);
    const second = await ok(`/api/v1/calls?limit=10&cursor=${encodeURIComponent(small.next_cursor ?? '')}`, callListResponseSchema);
    expect(second.calls).toEqual(first.calls.slice(10, 20));
  });

  it('walks one market with its split on every page', async () => {
    await rebuild();
    const before: Array<{ id: string }> = await tdb.db.query(sql`select id from calls where market_id = 'm2' order by made_at desc, id desc`);
    const ids = await walk('/api/v1/calls?market=m2&limit=30', async (path) => {
      const body = await ok(path, callListResponseSchema);
      expect(body.platform_split).toBeDefined();
      return { items: body.calls, next: body.next_cursor };
    }, (c) => c.id, () => addCalls(3));
    expect(ids).toEqual(before.map((r) => r.id));
  });
});

describe('walking /api/v1/users/{handle}/calls', () => {
  it("returns every one of a person's won calls exactly once while they make more", async () => {
    await rebuild();
    const [who] = await tdb.db.query(sql`select handle, id from users where id = ${userIds[1]}`);
    // Enough of one person's won calls for several pages.
    await tdb.db.query(sql`update calls set user_id = ${who.id} where id in (select id from calls where status = 'won' order by id limit 40)`);
    await rebuild();
    const before: Array<{ id: string }> = await tdb.db.query(sql`
      select id from calls where user_id = ${who.id} and status = 'won' order by made_at desc, id desc`);
    const ids = await walk(`/api/v1/users/${String(who.handle).toUpperCase()}/calls?status=won&limit=6`, async (path) => {
      const body = await ok(path, userCallsResponseSchema);
      expect(body.handle).toBe(who.handle);
      return { items: body.calls, next: body.next_cursor };
    }, (c) => c.id, async () => {
      await tdb.db.query(sql`
        insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, made_at, settled_at)
        values (${`w${++made}`}, ${who.id}, 'm1', 0, 0.5, 'won', 10, clock_timestamp(), now())`);
    });
    expect(ids.length).toBeGreaterThan(12);
    expect(ids).toEqual(before.map((r) => r.id));
  });
});

describe('walking /api/v1/combos', () => {
  it('returns every open combo made before the walk began exactly once while combos arrive', async () => {
    await rebuild();
    const before: Array<{ id: string }> = await tdb.db.query(sql`select id from combos where status = 'open' order by made_at desc, id desc`);
    const ids = await walk('/api/v1/combos?limit=9', async (path) => {
      const body = await ok(path, comboListResponseSchema);
      for (const c of body.combos) expect(c.legs.map((l) => l.event)).toEqual(['ev-one', 'ev-two']);
      return { items: body.combos, next: body.next_cursor };
    }, (c) => c.id, async () => {
      const id = `kn${++made}`;
      await tdb.db.query(sql`insert into combos (id, user_id, chance, wins_on_10, made_at) values (${id}, ${userIds[0]}, 0.25, 40, clock_timestamp())`);
      await tdb.db.query(sql`insert into combo_legs (combo_id, leg_index, market_id, outcome_index, chance_at_call) values (${id}, 0, 'm1', 0, 0.5), (${id}, 1, 'm2', 0, 0.5)`);
    });
    expect(ids).toEqual(before.map((r) => r.id));
  });
});

describe('walking /api/v1/leaderboard', () => {
  it('keeps the ranking it started from: each person once, at their rank then, while ranks change', async () => {
    await rebuild();
    const start: Array<{ handle: string }> = await tdb.db.query(sql`
      select u.handle from leaderboard_rows l join users u on u.id = l.user_id where l.sort = 'profit' order by l.rank`);
    expect(start.length).toBeGreaterThan(100);
    let round = 0;
    const rows: Array<{ rank: number; handle: string }> = [];
    await walk('/api/v1/leaderboard?limit=25', async (path) => {
      const body = await ok(path, leaderboardResponseSchema);
      rows.push(...body.rows);
      return { items: body.rows, next: body.next_cursor };
    }, (r) => r.handle, async () => {
      // Someone from the bottom half jumps to the top: every rank between moves.
      const climber = Number(userIds[USERS - 1 - round++]);
      await addCalls(1, { status: 'won' });
      await tdb.db.query(sql`update calls set user_id = ${climber}, profit_on_10 = 500 where id = ${`n${String(made).padStart(5, '0')}`}`);
      await projectChanges(tdb.db, { userIds: [climber], marketIds: [] }, new Date());
      await rebuild();
    });
    expect(round).toBeGreaterThan(2);
    expect(rows.map((r) => r.handle)).toEqual(start.map((r) => r.handle));
    expect(rows.map((r) => r.rank)).toEqual(start.map((_, i) => i + 1));
    // The ranking did change meanwhile: a new walk starts from the new one.
    const now = await ok('/api/v1/leaderboard?limit=100', leaderboardResponseSchema);
    expect(now.rows.map((r) => r.handle)).not.toEqual(start.slice(0, 100).map((r) => r.handle));
  });
});

describe('cursors that are not for the request', () => {
  const expect400 = async (path: string, message: RegExp) => {
    const { status, body } = await get(path);
    expect(status, JSON.stringify(body)).toBe(400);
    const error = errorBodySchema.parse(body).error;
    expect(error.code).toBe('bad_request');
    expect(error.message).toMatch(message);
  };

  it('refuses an altered cursor, and one that is not a cursor at all', async () => {
    const { next_cursor } = await ok('/api/v1/calls?limit=5', callListResponseSchema);
    const cursor = String(next_cursor);
    const [payload = '', mac = ''] = cursor.split('.');
    const forged = Buffer.from(JSON.stringify({ list: 'calls', market: null, after: 'c0001' })).toString('base64url');
    const otherMac = `${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    for (const bad of [`${forged}.${mac}`, `${payload}.${otherMac}`, `${payload}x.${mac}`, 'hello', `${cursor}.x`]) {
      await expect400(`/api/v1/calls?cursor=${encodeURIComponent(bad)}`, /^cursor is not valid: it was altered or not made by this API/);
    }
  });

  it('refuses a cursor from another list, or from the same list with other parameters', async () => {
    const cursorOf = async (path: string) => {
      const { body } = await get(path);
      const cursor = (body as { next_cursor?: unknown }).next_cursor;
      expect(typeof cursor, `${path} has a next page`).toBe('string');
      return String(cursor);
    };
    const calls = await cursorOf('/api/v1/calls?limit=5');
    const market = await cursorOf('/api/v1/calls?market=m1&limit=5');
    const combos = await cursorOf('/api/v1/combos?limit=5');
    const board = await cursorOf('/api/v1/leaderboard?limit=5');
    const [p1, p2] = ['p001', 'p002'];
    const person = await cursorOf(`/api/v1/users/${p1}/calls?limit=1`);
    await expect400(`/api/v1/combos?cursor=${encodeURIComponent(calls)}`, /^cursor belongs to another list \(\/api\/v1\/calls\)/);
    await expect400(`/api/v1/calls?cursor=${encodeURIComponent(market)}`, /^cursor belongs to another list \(\/api\/v1\/calls\?market=m1\)/);
    await expect400(`/api/v1/calls?market=m2&cursor=${encodeURIComponent(market)}`, /another list/);
    await expect400(`/api/v1/combos?status=won&cursor=${encodeURIComponent(combos)}`, /another list \(\/api\/v1\/combos\?status=open\)/);
    await expect400(`/api/v1/leaderboard?sort=xp&cursor=${encodeURIComponent(board)}`, /another list \(\/api\/v1\/leaderboard\?sort=profit\)/);
    await expect400(`/api/v1/users/${p2}/calls?cursor=${encodeURIComponent(person)}`, /another list \(\/api\/v1\/users\/p001\/calls\)/);
    await expect400(`/api/v1/users/${p1}/calls?status=won&cursor=${encodeURIComponent(person)}`, /another list/);
    // The same cursor on its own list is fine, with any limit.
    expect((await get(`/api/v1/users/${p1.toUpperCase()}/calls?limit=3&cursor=${encodeURIComponent(person)}`)).status).toBe(200);
  });

  it('says a leaderboard cursor has expired once its ranking is no longer kept', async () => {
    const { next_cursor } = await ok('/api/v1/leaderboard?sort=xp&limit=5', leaderboardResponseSchema);
    const [payload = ''] = String(next_cursor).split('.');
    const { version } = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { version: number };
    const removed: Array<{ version: string; made_at: Date }> = await tdb.db.query(sql`delete from leaderboard_versions where version = ${version} returning version, made_at`);
    try {
      await expect400(`/api/v1/leaderboard?sort=xp&cursor=${encodeURIComponent(String(next_cursor))}`, /^cursor has expired/);
    } finally {
      // The ranking it removed is the current one: put it back for the tests that walk the board after this one.
      for (const r of removed) {
        await tdb.db.query(sql`insert into leaderboard_versions (version, made_at) overriding system value values (${r.version}, ${r.made_at})`);
      }
    }
  });
});
