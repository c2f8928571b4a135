import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { SnapshotName } from '@pm/shared/redis';
import { sql } from '@pm/shared/db';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { apiRedis, combo, event, leaderboardRow, listSnapshot, searchSnapshot, startApp, writeFeed, writeSnapshot, type RunningApp } from '../testing/fixtures.js';

/**
 * Every variant of every endpoint answers its own body, requested back to back and
 * with If-None-Match from another variant. Snapshots carry the worker's content-hash ETags, so
 * variants whose snapshots hold the same content (empty combo lists, equal leaderboards) share a
 * snapshot ETag — the case that used to serve one variant's body for another. A person's record and
 * call lists and a call's page are read from Postgres (seeded here): filters of a person's calls
 * whose bodies are equal (all and open; won, lost and void, all empty) are the same case there, and
 * an ETag given before a change in Postgres must not be answered with a 304 after it.
 */

let testRedis: TestRedis;
let tdb: TestDatabase;
let redis: Redis;
let api: RunningApp;

const arsenal = event('epl-ars-che', 'Arsenal vs Chelsea', 'Football', ['Will Arsenal win?', 'Will Chelsea win?']);
const btc = event('btc-100k', 'Bitcoin above 100k?', 'Crypto', ['Bitcoin above 100k on Friday?']);
const events = [arsenal, btc, event('fed-cut', 'Fed rate cut', 'Economy', ['Will the Fed cut in March?'])];
const call = (id: string) => ({
  id,
  user: { handle: 'alice', avatar: null },
  market_id: 'm1',
  event: 'epl-ars-che',
  question: 'Will Arsenal win?',
  outcome: 'Yes',
  outcome_index: 0,
  chance_at_call: 0.4,
  thesis: 't',
  copied_from: null,
  is_fade: false,
  status: 'open',
  profit_on_10: null,
  made_at: '2026-11-20T12:00:00.000Z',
  settled_at: null,
  url: `http://localhost:3000/c/${id}`,
});

/** As the worker writes: the ETag is a digest of the body, so equal contents share it. */
async function seed(name: SnapshotName, payload: unknown): Promise<void> {
  const body = JSON.stringify(payload);
  await writeSnapshot(testRedis.redis, testRedis.prefix, name, payload, `"${createHash('sha1').update(body).digest('base64url')}"`);
}

/** alice and her one call c1 (open), as call('c1') shows it. */
async function seedDatabase(): Promise<void> {
  const { db } = tdb;
  await db.query(sql`insert into events (id, slug, title, category) values ('e1', 'epl-ars-che', 'Arsenal vs Chelsea', 'Football')`);
  await db.query(sql`insert into markets (id, event_id, condition_id, position, question) values ('m1', 'e1', '0xm1', 0, 'Will Arsenal win?')`);
  await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values ('m1', 0, 'Yes', 't10'), ('m1', 1, 'No', 't11')`);
  await db.query(sql`insert into users (handle, display_name) values ('alice', 'Alice')`);
  await db.query(sql`
    insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
    select 'c1', id, 'm1', 0, 0.4, 't', '2026-11-20T12:00:00Z' from users where handle = 'alice'
  `);
}

/** Each variant with what its body must say about the request. */
const variants: Array<[string, (body: Record<string, unknown>) => void]> = [];
const variant = (path: string, check: (body: Record<string, unknown>) => void = () => {}) => variants.push([path, check]);
const count = (n: number) => (b: Record<string, unknown>) => expect(b['count']).toBe(n);

beforeAll(async () => {
  testRedis = await createTestRedis('api_identity');
  tdb = await createTestDatabase('api_identity');
  redis = await apiRedis(testRedis.url);
  await seedDatabase();
  const rows = Array.from({ length: 5 }, (_, i) => leaderboardRow(i + 1, `p${i + 1}`));
  await seed('markets:trending', listSnapshot(events));
  await seed('markets:category:Crypto', listSnapshot([btc]));
  await seed('markets:category:Economy', listSnapshot([btc])); // same content as Crypto: same ETag
  await seed('markets:league:epl', listSnapshot([arsenal]));
  await seed('markets:search', searchSnapshot(events.map((e) => ({ event: e, league: e === arsenal ? 'epl' : null }))));
  for (const e of events) await seed(`event:${e.slug}`, { event: e });
  for (const m of arsenal.markets) {
    for (const range of ['1d', '1w'] as const) await seed(`history:${m.id}:${range}`, { market_id: m.id, range, points: [{ t: 1, chance: 0.5 }] });
  }
  await seed('calls:latest', { calls: [call('c1'), call('c2')] });
  await seed('calls:market:m1', { platform_split: [1, 0], calls: [call('c1')] });
  await seed('calls:market:m2', { platform_split: [1, 0], calls: [call('c1')] });
  for (const sort of ['profit', 'right', 'xp', 'week']) await seed(`leaderboard:${sort}`, { rows });
  await seed('combos:open', { combos: [combo('k1', 'open'), combo('k2', 'open')] });
  for (const status of ['won', 'lost', 'void']) await seed(`combos:${status}`, { combos: [] });
  await writeFeed(testRedis.redis, testRedis.prefix, true, Date.now());
  api = await startApp({ redis, env: { REDIS_PREFIX: testRedis.prefix, DATABASE_URL: tdb.url, RATE_LIMIT_PER_MINUTE: '100000' } });

  variant('/api/v1/markets', count(3));
  variant('/api/v1/markets?limit=2', count(2));
  variant('/api/v1/markets?limit=1', count(1));
  variant('/api/v1/markets?category=Crypto', (b) => expect((b['events'] as Array<{ slug: string }>)[0]?.slug).toBe(btc.slug));
  variant('/api/v1/markets?category=Economy', count(1));
  variant('/api/v1/markets?category=Politics', count(0));
  variant('/api/v1/markets?league=epl', (b) => expect((b['events'] as Array<{ slug: string }>)[0]?.slug).toBe(arsenal.slug));
  variant('/api/v1/markets?q=will', count(2));
  variant('/api/v1/markets?q=bitcoin', count(1));
  variant('/api/v1/markets?q=will&category=Economy', count(1));
  variant('/api/v1/markets?q=will&league=epl', count(1));
  for (const e of events) variant(`/api/v1/markets/${e.slug}`, (b) => expect((b['event'] as { slug: string }).slug).toBe(e.slug));
  for (const m of arsenal.markets) {
    for (const range of ['1d', '1w']) {
      variant(`/api/v1/markets/${arsenal.slug}/history?market=${m.id}&range=${range}`, (b) => expect([b['market_id'], b['range']]).toEqual([m.id, range]));
    }
  }
  variant(`/api/v1/markets/${arsenal.slug}/history`, (b) => expect([b['market_id'], b['range']]).toEqual([arsenal.markets[0]!.id, '1w']));
  variant('/api/v1/calls', count(2));
  variant('/api/v1/calls?limit=1', count(1));
  for (const m of ['m1', 'm2', 'm3']) variant(`/api/v1/calls?market=${m}`, (b) => expect(b['platform_split']).toBeDefined());
  // From Postgres: all and open hold the same body, won, lost and void the same empty one.
  variant('/api/v1/users/alice/calls', (b) => expect(b['calls']).toEqual([call('c1')]));
  variant('/api/v1/users/alice/calls?status=open', (b) => expect(b['calls']).toEqual([call('c1')]));
  for (const status of ['won', 'lost', 'void']) variant(`/api/v1/users/alice/calls?status=${status}`, count(0));
  variant('/api/v1/users/alice', (b) => expect((b['user'] as { handle: string }).handle).toBe('alice'));
  variant('/api/v1/calls/c1', (b) => expect((b['call'] as { id: string; status: string })).toMatchObject({ id: 'c1', status: 'open' }));
  for (const sort of ['profit', 'right', 'xp', 'week']) {
    variant(`/api/v1/leaderboard?sort=${sort}`, (b) => expect(b['sort']).toBe(sort));
    variant(`/api/v1/leaderboard?sort=${sort}&limit=2`, (b) => expect([b['sort'], b['count']]).toEqual([sort, 2]));
  }
  variant('/api/v1/leaderboard', (b) => expect(b['sort']).toBe('profit'));
  for (const status of ['open', 'won', 'lost', 'void']) variant(`/api/v1/combos?status=${status}`, (b) => expect(b['status']).toBe(status));
  variant('/api/v1/combos?limit=1', (b) => expect([b['status'], b['count']]).toEqual(['open', 1]));
  for (const chance of ['0.25', '0.5', '0.75']) variant(`/api/v1/odds?chance=${chance}`, (b) => expect(b['chance']).toBe(Number(chance)));
});

afterAll(async () => {
  // The app first: it closes its page reader's pool before the database is dropped.
  await api?.close();
  redis?.disconnect();
  await testRedis?.cleanup();
  await tdb?.drop();
});

async function fetchVariant(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.base}${path}`, { headers });
  return { status: res.status, etag: res.headers.get('etag') ?? '', text: await res.text() };
}

describe('cache identity', () => {
  it('answers every variant with its own body, back to back and with another variant’s If-None-Match', async () => {
    const own = new Map<string, { etag: string; text: string }>();
    for (const [path, check] of variants) {
      const res = await fetchVariant(path);
      expect(res.status, path).toBe(200);
      check(JSON.parse(res.text) as Record<string, unknown>);
      own.set(path, res);
    }
    // Requests whose bodies differ never share an ETag.
    for (const [a, ra] of own) for (const [b, rb] of own) if (ra.text !== rb.text) expect(ra.etag, `${a} vs ${b}`).not.toBe(rb.etag);

    // Back to back in the other order, each with the previous variant's ETag: its own body every time.
    let previous = '';
    let served = 0;
    for (const [path, check] of [...variants].reverse()) {
      const res = await fetchVariant(path, previous ? { 'if-none-match': previous } : {});
      const mine = own.get(path)!;
      if (res.status === 304) {
        expect(previous, path).toBe(mine.etag);
      } else {
        expect(res.status, path).toBe(200);
        expect(res.text, path).toBe(mine.text);
        check(JSON.parse(res.text) as Record<string, unknown>);
        served++;
      }
      previous = res.etag;
    }
    console.log(`cache identity: ${variants.length} variants, ${served} answered in full with another variant's If-None-Match`);
    expect(served).toBe(variants.length);

    // With its own ETag, each variant is a 304.
    for (const [path] of variants) expect((await fetchVariant(path, { 'if-none-match': own.get(path)!.etag })).status, path).toBe(304);
  });

  it('tells variants apart after a new version of a shared snapshot', async () => {
    await seed('combos:lost', { combos: [combo('lost-1', 'lost')] });
    const lost = JSON.parse((await fetchVariant('/api/v1/combos?status=lost')).text) as { status: string; count: number };
    const voided = JSON.parse((await fetchVariant('/api/v1/combos?status=void')).text) as { status: string; count: number };
    expect(lost).toMatchObject({ status: 'lost', count: 1 });
    expect(voided).toMatchObject({ status: 'void', count: 0 });
  });

  it('answers a change in Postgres at once: an ETag given before it is not a 304 after it', async () => {
    const paths = ['/api/v1/users/alice', '/api/v1/users/alice/calls', '/api/v1/users/alice/calls?status=open', '/api/v1/users/alice/calls?status=won', '/api/v1/calls/c1'];
    const before = new Map<string, { etag: string; text: string }>();
    for (const path of paths) before.set(path, await fetchVariant(path));
    // c1 settles, and the projection counts it on alice's record.
    await tdb.db.query(sql`update calls set status = 'won', profit_on_10 = 15, settled_at = '2026-11-20T13:00:00Z' where id = 'c1'`);
    await tdb.db.query(sql`insert into user_records (user_id, calls, settled, won, right_pct, profit_on_10) select id, 1, 1, 1, 100, 15 from users where handle = 'alice'`);
    const after = new Map<string, { status: number; etag: string; text: string }>();
    for (const path of paths) {
      const res = await fetchVariant(path, { 'if-none-match': before.get(path)!.etag });
      expect(res.status, path).toBe(200);
      expect(res.etag, path).not.toBe(before.get(path)!.etag);
      expect(res.text, path).not.toBe(before.get(path)!.text);
      after.set(path, res);
    }
    const body = (path: string) => JSON.parse(after.get(path)!.text) as Record<string, unknown>;
    expect(body('/api/v1/users/alice')['user']).toMatchObject({ handle: 'alice', calls: 1, settled: 1, won: 1, profit_on_10: 15 });
    expect(body('/api/v1/users/alice/calls')).toMatchObject({ count: 1, calls: [{ id: 'c1', status: 'won' }] });
    expect(body('/api/v1/users/alice/calls?status=open')).toMatchObject({ count: 0, calls: [] });
    expect(body('/api/v1/users/alice/calls?status=won')).toMatchObject({ count: 1, calls: [{ id: 'c1', status: 'won', profit_on_10: 15 }] });
    expect(body('/api/v1/calls/c1')['call']).toMatchObject({ id: 'c1', status: 'won', profit_on_10: 15 });
    // The new ETags are 304s again while nothing changes.
    for (const path of paths) expect((await fetchVariant(path, { 'if-none-match': after.get(path)!.etag })).status, path).toBe(304);
  });
});
