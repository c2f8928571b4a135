import { beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { redisKeyBase, redisKeys, type SnapshotName } from '@pm/shared/redis';
import {
  callListSnapshotSchema,
  comboListSnapshotSchema,
  leaderboardSnapshotSchema,
  marketCallsSnapshotSchema,
  type Call,
} from '@pm/shared/api';
import { sql } from '@pm/shared/db';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import { useFreshStores } from '../testing/stores.js';
import { globalBodies, marketBodies } from './bodies.js';
import { createRecordSnapshotBuilder, type RecordBuildStats, type RecordSnapshotBuilder } from './builder.js';
import { builderSource } from '../testing/builder-source.js';
import { at, B2_CALL, insertRecordsFixture, WEB_URL, type SeededIds } from './test-fixture.js';

/**
 * The record snapshots the worker builds: the latest calls, each called market's calls, the
 * leaderboards and the combo lists, plus the record_call_json cache of Call objects they aggregate.
 * A person's record, their call lists and a call's own page are read from Postgres by the API
 * (test/infra/person-pages.int.test.ts): no build writes them.
 */

let tdb: TestDatabase;
let tr: TestRedisPrefix;
let builder: RecordSnapshotBuilder;
let ids: SeededIds;
let fullStats: RecordBuildStats;

const stores = useFreshStores('record_snapshots');

// Each test: the seeded records alone in Postgres, an empty Redis prefix, a new builder and its full build.
beforeEach(async () => {
  ({ tdb, tr } = stores);
  ids = await insertRecordsFixture(tdb.db);
  builder = createRecordSnapshotBuilder({
    ...builderSource(tdb, tr),
    fullEveryMs: 3_600_000,
    // Tiny batches, so the full build's paging is exercised on a small fixture.
    batch: { markets: 1, writes: 3 },
  });
  fullStats = await builder.build({ full: true });
});

async function read<S extends z.ZodType>(name: SnapshotName, schema: S): Promise<z.output<S>> {
  const body = await tr.redis.hget(redisKeys(tr.prefix).snapshot(name), 'body');
  if (body === null) throw new Error(`no snapshot ${name}`);
  return schema.parse(JSON.parse(body));
}
const exists = async (name: SnapshotName) => (await tr.redis.exists(redisKeys(tr.prefix).snapshot(name))) === 1;
const markDirty = (...members: string[]) => tr.redis.sadd(redisKeys(tr.prefix).dirtyRecords, ...members);
const snapshotKeys = () => tr.redis.keys(`${redisKeyBase(tr.prefix)}:snap:*`);
/** The snapshot names in Redis, sorted. */
const snapshotNames = async () => (await snapshotKeys()).map((k) => k.slice(`${redisKeyBase(tr.prefix)}:snap:`.length)).sort();
/** Every list family the builder writes, for the seeded records (m3 has no call yet). */
const SEEDED_NAMES = [
  'calls:latest',
  'calls:market:m1',
  'calls:market:m2',
  'combos:lost',
  'combos:open',
  'combos:void',
  'combos:won',
  'leaderboard:brier',
  'leaderboard:clv',
  'leaderboard:profit',
  'leaderboard:right',
  'leaderboard:week',
  'leaderboard:xp',
];
/** A list's calls by id: [status, profit_on_10]. */
const outcomes = (calls: readonly Call[]) => Object.fromEntries(calls.map((c) => [c.id, [c.status, c.profit_on_10]]));
/** The cached Call object of a call (record_call_json), parsed. */
async function cachedCall(id: string): Promise<Call | undefined> {
  const rows: Array<{ body: string }> = await tdb.db.query(sql`select body from record_call_json where call_id = ${id}`);
  return rows[0] ? (JSON.parse(rows[0].body) as Call) : undefined;
}

/** m1 resolved to its first outcome and its calls settled as settlement leaves them (not the combo legs). */
async function settleM1Calls(): Promise<void> {
  await tdb.db.query(sql`update markets set closed = true, resolved_outcome_index = 0, resolved_at = now() where id = 'm1'`);
  await tdb.db.query(sql`
    update calls set status = case when outcome_index = 0 then 'won' else 'lost' end,
      profit_on_10 = case when outcome_index = 0 then round(10 / chance_at_call - 10, 2) else -10 end,
      settled_at = ${at(90)}
    where market_id = 'm1'
  `);
}

describe('a full build of the seeded records', () => {
  it("caches every call's Call object and writes the list families only: no person's or call's page", async () => {
    expect(fullStats).toMatchObject({ full: true, calls: 13, markets: 2 });
    expect(fullStats).not.toHaveProperty('users');
    expect(await snapshotNames()).toEqual(SEEDED_NAMES);
    const cached: Array<{ n: number }> = await tdb.db.query(sql`select count(*)::int as n from record_call_json`);
    expect(cached[0]!.n).toBe(13);
  });

  it('lists the latest calls newest first, each with every Call field of docs/api.md', async () => {
    const { calls } = await read('calls:latest', callListSnapshotSchema);
    expect(calls.map((c) => c.id)).toEqual(['c1', 'b2', 'b1', 'a7', 'b5', 'b4', 'b3', 'a6', 'a5', 'a4', 'a3', 'a2', 'a1']);
    expect(calls.find((c) => c.id === 'b2')).toStrictEqual(B2_CALL);
    const won = calls.find((c) => c.id === 'a1');
    expect(won).toMatchObject({ status: 'won', profit_on_10: 15, settled_at: at(60).toISOString(), copied_from: null, user: { handle: 'alice', avatar: 'https://img.example/alice.png' } });
  });

  it('ranks the leaderboards, and `right` only with 5 or more settled calls', async () => {
    const profit = await read('leaderboard:profit', leaderboardSnapshotSchema);
    // The skill figures (clv, brier) are the records' own: held equal to the domain in the worker's rules test.
    expect(profit.rows.map(({ clv: _clv, brier: _brier, ...row }) => row)).toStrictEqual([
      { rank: 1, handle: 'alice', display_name: 'Alice A.', avatar: 'https://img.example/alice.png', right_pct: 80, settled: 6, won: 4, profit_on_10: 50, profit_7d: 50, xp: 256, streak: 0 },
      { rank: 2, handle: 'Bob', display_name: 'Bob B.', avatar: null, right_pct: 67, settled: 3, won: 2, profit_on_10: 20, profit_7d: 20, xp: 128, streak: 2 },
    ]);
    // Bob has 3 settled calls: not on `right` even though the projection ranked him.
    expect((await read('leaderboard:right', leaderboardSnapshotSchema)).rows.map((r) => r.handle)).toEqual(['alice']);
    expect((await read('leaderboard:week', leaderboardSnapshotSchema)).rows.map((r) => r.rank)).toEqual([1, 2]);
  });

  it("gives a market's calls with its platform split, and [] for a market nobody has a split on", async () => {
    const m1 = await read('calls:market:m1', marketCallsSnapshotSchema);
    expect(m1.platform_split).toEqual([3, 1]);
    expect(m1.calls.map((c) => c.id)).toEqual(['c1', 'b2', 'b1', 'a7']);
    const m2 = await read('calls:market:m2', marketCallsSnapshotSchema);
    expect(m2.platform_split).toEqual([]);
    expect(m2.calls).toHaveLength(9);
    expect(await exists('calls:market:m3')).toBe(false);
  });

  it('lists combos per status, newest first, with their legs in order', async () => {
    const open = await read('combos:open', comboListSnapshotSchema);
    expect(open.combos).toStrictEqual([
      {
        id: 'k-open',
        user: { handle: 'alice' },
        chance: 0.16,
        wins_on_10: 62.5,
        status: 'open',
        xp_awarded: 0,
        legs: [
          { market_id: 'm1', event: 'ars-che', question: 'Will Arsenal win?', outcome: 'Yes', outcome_index: 0, chance_at_call: 0.4, status: 'open' },
          { market_id: 'm3', event: 'ars-che', question: 'Over 2.5 goals?', outcome: 'Under', outcome_index: 1, chance_at_call: 0.4, status: 'open' },
        ],
        made_at: at(45).toISOString(),
        url: `${WEB_URL}/combo/k-open`,
      },
    ]);
    expect((await read('combos:won', comboListSnapshotSchema)).combos.map((c) => [c.id, c.xp_awarded])).toEqual([['k-won', 144]]);
    expect((await read('combos:lost', comboListSnapshotSchema)).combos.map((c) => c.legs.map((l) => l.status))).toEqual([['lost', 'open']]);
    expect((await read('combos:void', comboListSnapshotSchema)).combos).toEqual([]);
  });
});

describe('incremental builds from the dirty set', () => {
  it('a new call shows up in the latest list and its market — and nothing else is rebuilt', async () => {
    await tdb.db.query(sql`
      insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
      values ('c2', ${ids.carol}, 'm3', 0, 0.61, 'Goals galore', ${at(55)})
    `);
    await markDirty('call:c2', 'market:m3');
    const stats = await builder.build();
    expect(stats).toMatchObject({ full: false, calls: 1, markets: 1, written: 2 });
    expect(stats).not.toHaveProperty('users');
    const latest = (await read('calls:latest', callListSnapshotSchema)).calls;
    expect(latest[0]).toMatchObject({ id: 'c2', user: { handle: 'carol', avatar: null }, outcome: 'Over', outcome_index: 0, chance_at_call: 0.61, status: 'open', url: `${WEB_URL}/c/c2` });
    const m3 = await read('calls:market:m3', marketCallsSnapshotSchema);
    expect(m3.calls).toEqual([latest[0]]);
    // The market has no split yet (the projection job writes it): [].
    expect(m3.platform_split).toEqual([]);
    expect(await cachedCall('c2')).toEqual(latest[0]);
    expect(await snapshotNames()).toEqual([...SEEDED_NAMES, 'calls:market:m3'].sort());
    expect(await tr.redis.scard(redisKeys(tr.prefix).dirtyRecords)).toBe(0);
  });

  it('members `user:<id>` and `lists:<id>` that earlier producers wrote are accepted and need nothing', async () => {
    await markDirty(`user:${ids.alice}`, `lists:${ids.bob}`);
    await expect(builder.build()).resolves.toMatchObject({ full: false, calls: 0, markets: 0, written: 0 });
    expect(await snapshotNames()).toEqual(SEEDED_NAMES);
    expect(await tr.redis.scard(redisKeys(tr.prefix).dirtyRecords)).toBe(0);
  });

  it('a build that finds no member (a build since its request read them) rebuilds nothing: what no member names waits for one that does', async () => {
    const before = await read('combos:open', comboListSnapshotSchema);
    await tdb.db.query(sql`update combo_legs set status = 'won', settled_at = ${at(90)} where market_id = 'm1'`);
    await expect(builder.build()).resolves.toMatchObject({ full: false, calls: 0, markets: 0, written: 0 });
    expect(await read('combos:open', comboListSnapshotSchema)).toEqual(before);
    await markDirty('combos');
    await expect(builder.build()).resolves.toMatchObject({ full: false, written: 2 });
    expect((await read('combos:open', comboListSnapshotSchema)).combos[0]?.legs.map((l) => l.status)).toEqual(['won', 'open']);
  });

  it("settling a market refreshes every call's object on it, the market's and the latest list, and the combo lists", async () => {
    const before = (await read('calls:latest', callListSnapshotSchema)).calls;
    await settleM1Calls();
    await tdb.db.query(sql`update combo_legs set status = 'won', settled_at = ${at(90)} where market_id = 'm1'`);
    // The market as settlement marks it (the builder finds its calls itself), and the combos.
    await markDirty('market:m1', 'combos', 'leaderboard');
    const stats = await builder.build();
    expect(stats).toMatchObject({ full: false, calls: 4, markets: 1 });
    expect(stats).not.toHaveProperty('users');
    const settled = { c1: ['lost', -10], b2: ['lost', -10], b1: ['won', 8.52], a7: ['won', 8.69] };
    const m1 = (await read('calls:market:m1', marketCallsSnapshotSchema)).calls;
    expect(outcomes(m1)).toEqual(settled);
    expect(m1.map((c) => c.settled_at)).toEqual(Array(4).fill(at(90).toISOString()));
    // The latest list shows the same objects; the calls of other markets are as they were.
    const latest = (await read('calls:latest', callListSnapshotSchema)).calls;
    expect(latest.filter((c) => c.market_id === 'm1')).toEqual(m1);
    expect(latest.filter((c) => c.market_id !== 'm1')).toEqual(before.filter((c) => c.market_id !== 'm1'));
    expect(await cachedCall('a7')).toEqual(m1.find((c) => c.id === 'a7'));
    expect((await read('combos:open', comboListSnapshotSchema)).combos[0]?.legs.map((l) => l.status)).toEqual(['won', 'open']);
    expect((await read('combos:lost', comboListSnapshotSchema)).combos[0]?.legs.map((l) => l.status)).toEqual(['lost', 'won']);
    expect(await snapshotNames()).toEqual(SEEDED_NAMES);
  });

  it("makes a settled call's object once when the settlement is requested twice (the job, then the relay), and again once its row changes", async () => {
    await settleM1Calls();
    const members = ['market:m1', 'call:c1', 'call:b2', 'call:b1', 'call:a7', 'leaderboard'];
    await markDirty(...members);
    await expect(builder.build()).resolves.toMatchObject({ calls: 4, made: 4 });
    const settled = await cachedCall('a7');
    expect(settled).toMatchObject({ status: 'won', settled_at: at(90).toISOString() });
    const bodies = await Promise.all((await snapshotKeys()).map((k) => tr.redis.hget(k, 'body')));
    // The relay's delivery of the same outbox row: the same calls, none of whose rows changed since.
    await markDirty(...members);
    await expect(builder.build()).resolves.toMatchObject({ calls: 4, made: 0, written: 0 });
    expect(await cachedCall('a7')).toEqual(settled);
    expect(await Promise.all((await snapshotKeys()).map((k) => tr.redis.hget(k, 'body')))).toEqual(bodies);
    // A row that changed (any update gives it a new version) is made again, and shows the change.
    await tdb.db.query(sql`update calls set thesis = 'Called it' where id = 'a7'`);
    await markDirty('call:a7');
    await expect(builder.build()).resolves.toMatchObject({ calls: 1, made: 1 });
    expect(await cachedCall('a7')).toEqual({ ...settled, thesis: 'Called it' });
    expect((await read('calls:market:m1', marketCallsSnapshotSchema)).calls.find((c) => c.id === 'a7')?.thesis).toBe('Called it');
  });

  it("never lists an object made from an older version of its call's row, even when nothing asked for that call", async () => {
    // A settlement's build makes only the objects its lists show: any other object of its calls stays
    // as it was until a list comes to show it, and that list must make it again first.
    // m1 is open: its dirty member alone asks for no call's object.
    const [{ id }] = (await tdb.db.query(sql`select id from calls where market_id = 'm1' order by made_at desc, id desc limit 1`)) as [{ id: string }];
    const before = await cachedCall(id);
    expect(before?.thesis).not.toBe('Changed quietly');
    await tdb.db.query(sql`update calls set thesis = 'Changed quietly' where id = ${id}`);
    expect(await cachedCall(id)).toEqual(before);
    await markDirty('market:m1');
    await expect(builder.build()).resolves.toMatchObject({ full: false, markets: 1 });
    expect((await read('calls:market:m1', marketCallsSnapshotSchema)).calls.find((c) => c.id === id)?.thesis).toBe('Changed quietly');
    expect((await read('calls:latest', callListSnapshotSchema)).calls.find((c) => c.id === id)?.thesis ?? 'Changed quietly').toBe('Changed quietly');
    expect(await cachedCall(id)).toEqual({ ...before, thesis: 'Changed quietly' });
  });

  it('asks for a full build when Redis lost the snapshots, and that build restores them', async () => {
    expect(await builder.fullBuildDue()).toBe(false);
    const keys = await snapshotKeys();
    const bodies = await Promise.all(keys.map((k) => tr.redis.hget(k, 'body')));
    await tr.redis.del(...keys);
    expect(await builder.fullBuildDue()).toBe(true);
    // The writer remembers what it wrote: the full build must write these again all the same.
    await expect(builder.build({ full: true })).resolves.toMatchObject({ full: true, written: SEEDED_NAMES.length });
    expect(await snapshotNames()).toEqual(SEEDED_NAMES);
    expect(await Promise.all(keys.map((k) => tr.redis.hget(k, 'body')))).toEqual(bodies);
    expect(outcomes((await read('calls:market:m1', marketCallsSnapshotSchema)).calls)).toMatchObject({ a7: ['open', null] });
    expect(await builder.fullBuildDue()).toBe(false);
  });

  it('ignores malformed members instead of failing the build', async () => {
    await markDirty('user:not-a-number', 'lists:', 'nonsense', 'call:', 'market:');
    await expect(builder.build()).resolves.toMatchObject({ full: false, calls: 0, markets: 0 });
    expect(await tr.redis.scard(redisKeys(tr.prefix).dirtyRecords)).toBe(0);
  });
});

describe('bodies made in SQL', () => {
  const schemaOf = (name: string): z.ZodType => {
    if (name === 'calls:latest') return callListSnapshotSchema;
    if (name.startsWith('calls:market:')) return marketCallsSnapshotSchema;
    if (name.startsWith('leaderboard:')) return leaderboardSnapshotSchema;
    if (name.startsWith('combos:')) return comboListSnapshotSchema;
    throw new Error(`unexpected snapshot ${name}`);
  };

  it('are compact JSON in the key order the API serves, escaping text as JSON.stringify does', async () => {
    // Quotes, backslashes, control characters, non-ASCII, an emoji, U+2028 and markup in a thesis.
    const thesis = 'He said "yes" \\ no\n\ttab \u0001 café 🎉 \u2028 </script>';
    await tdb.db.query(sql`
      insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
      values ('z9', ${ids.carol}, 'm3', 1, 0.07, ${thesis}, ${at(58)})
    `);
    await markDirty('call:z9', 'market:m3');
    await builder.build();
    expect((await read('calls:market:m3', marketCallsSnapshotSchema)).calls.map((c) => [c.id, c.thesis])).toEqual([['z9', thesis]]);
    expect((await read('calls:latest', callListSnapshotSchema)).calls[0]).toMatchObject({ id: 'z9', thesis });
    const keys = await snapshotKeys();
    expect(keys).toHaveLength(SEEDED_NAMES.length + 1);
    for (const key of keys) {
      const name = key.slice(`${redisKeyBase(tr.prefix)}:snap:`.length);
      const body = await tr.redis.hget(key, 'body');
      // Parsing with the API's schema keeps its key order: the same text back means same keys, same order, same bytes.
      expect(JSON.stringify(schemaOf(name).parse(JSON.parse(body ?? 'null'))), name).toBe(body);
    }
  });

  it('make the same lists when the cached Call objects are gone (made on the fly) as with them', async () => {
    const lists = async () => [...(await marketBodies(tdb.db, ['m1', 'm2', 'm3'], WEB_URL)), ...(await globalBodies(tdb.db, WEB_URL))];
    const cached = await lists();
    expect(cached.map((b) => b.name).sort()).toEqual([...SEEDED_NAMES, 'calls:market:m3'].sort());
    expect(Number((await tdb.db.query(sql`select count(*) as n from record_call_json`))[0].n)).toBeGreaterThan(10);
    await tdb.db.query(sql`truncate record_call_json`);
    expect(await lists()).toEqual(cached);
  });
});
