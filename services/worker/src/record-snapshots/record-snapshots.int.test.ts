import { beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { redisKeyBase, redisKeys, snapshotEtag, type SnapshotName } from '@pm/shared/redis';
import {
  callListSnapshotSchema,
  callSnapshotSchema,
  comboListSnapshotSchema,
  leaderboardSnapshotSchema,
  marketCallsSnapshotSchema,
  userCallsSnapshotSchema,
  userSnapshotSchema,
} from '@pm/shared/api';
import { sql } from '@pm/shared/db';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import { useFreshStores } from '../testing/stores.js';
import { globalBodies, marketBodies, userBodies } from './bodies.js';
import { createRecordSnapshotBuilder, type RecordSnapshotBuilder } from './builder.js';
import { builderSource } from '../testing/builder-source.js';
import { at, insertRecordsFixture, WEB_URL, type SeededIds } from './test-fixture.js';

let tdb: TestDatabase;
let tr: TestRedisPrefix;
let builder: RecordSnapshotBuilder;
let ids: SeededIds;

const stores = useFreshStores('record_snapshots');

// Each test: the seeded records alone in Postgres, an empty Redis prefix, a new builder and its full build.
beforeEach(async () => {
  ({ tdb, tr } = stores);
  ids = await insertRecordsFixture(tdb.db);
  builder = createRecordSnapshotBuilder({
    ...builderSource(tdb, tr),
    fullEveryMs: 3_600_000,
    // Tiny batches, so the full build's paging is exercised on a small fixture.
    batch: { users: 2, calls: 3, markets: 1, writes: 3 },
  });
  await builder.build({ full: true });
});

async function read<S extends z.ZodType>(name: SnapshotName, schema: S): Promise<z.output<S>> {
  const body = await tr.redis.hget(redisKeys(tr.prefix).snapshot(name), 'body');
  if (body === null) throw new Error(`no snapshot ${name}`);
  return schema.parse(JSON.parse(body));
}
const exists = async (name: SnapshotName) => (await tr.redis.exists(redisKeys(tr.prefix).snapshot(name))) === 1;
const markDirty = (...members: string[]) => tr.redis.sadd(redisKeys(tr.prefix).dirtyRecords, ...members);

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
  it('lists the latest calls newest first, each with every Call field of SPEC.md', async () => {
    const { calls } = await read('calls:latest', callListSnapshotSchema);
    expect(calls.map((c) => c.id)).toEqual(['c1', 'b2', 'b1', 'a7', 'b5', 'b4', 'b3', 'a6', 'a5', 'a4', 'a3', 'a2', 'a1']);
    expect(calls.find((c) => c.id === 'b2')).toStrictEqual({
      id: 'b2',
      user: { handle: 'Bob', avatar: null },
      market_id: 'm1',
      event: 'ars-che',
      question: 'Will Arsenal win?',
      outcome: 'No',
      outcome_index: 1,
      chance_at_call: 0.46,
      thesis: 'Fading alice',
      copied_from: { id: 'a7', handle: 'alice' },
      is_fade: true,
      status: 'open',
      profit_on_10: null,
      made_at: at(32).toISOString(),
      settled_at: null,
      url: `${WEB_URL}/c/b2`,
    });
    const won = calls.find((c) => c.id === 'a1');
    expect(won).toMatchObject({ status: 'won', profit_on_10: 15, settled_at: at(60).toISOString(), copied_from: null, user: { handle: 'alice', avatar: 'https://img.example/alice.png' } });
  });

  it('writes a single call as the SPEC subset with its thesis updates, oldest first', async () => {
    const { call } = await read('call:a7', callSnapshotSchema);
    expect(call).toStrictEqual({
      id: 'a7',
      user: { handle: 'alice' },
      question: 'Will Arsenal win?',
      outcome: 'Yes',
      chance_at_call: 0.535,
      status: 'open',
      profit_on_10: null,
      thesis: 'Arsenal at home',
      thesis_updates: [
        { body: 'Team news: Saka starts.', at: at(35).toISOString() },
        { body: 'Still confident at half-time.', at: at(50).toISOString() },
      ],
      url: `${WEB_URL}/c/a7`,
    });
    expect((await read('call:a5', callSnapshotSchema)).call).toMatchObject({ status: 'lost', profit_on_10: -10, thesis_updates: [] });
  });

  it("writes each person's record under the lower-cased handle, zeros for someone the projections have not reached", async () => {
    const { user } = await read('user:bob', userSnapshotSchema);
    expect(user).toStrictEqual({
      handle: 'Bob',
      display_name: 'Bob B.',
      avatar: null,
      calls: 5,
      settled: 3,
      won: 2,
      right_pct: 67,
      profit_on_10: 20,
      profit_7d: 20,
      xp: 128,
      streak: 2,
      followers: 0,
      following: 1,
      copies: 0,
      bio: '',
      interests: ['Crypto'],
      joined_at: '2026-02-01T00:00:00.000Z',
      url: `${WEB_URL}/u/Bob`,
    });
    expect((await read('user:alice', userSnapshotSchema)).user.interests).toEqual(['Football', 'Football: EPL']);
    expect((await read('user:carol', userSnapshotSchema)).user).toMatchObject({ calls: 0, settled: 0, right_pct: 0, profit_on_10: 0, bio: 'New here.' });
  });

  it("lists a person's calls newest first under every status filter, empty lists included", async () => {
    const all = await read('user-calls:alice:all', userCallsSnapshotSchema);
    expect(all.handle).toBe('alice');
    expect(all.calls.map((c) => c.id)).toEqual(['a7', 'a6', 'a5', 'a4', 'a3', 'a2', 'a1']);
    expect((await read('user-calls:alice:won', userCallsSnapshotSchema)).calls.map((c) => c.id)).toEqual(['a4', 'a3', 'a2', 'a1']);
    expect((await read('user-calls:alice:open', userCallsSnapshotSchema)).calls.map((c) => c.id)).toEqual(['a7']);
    expect((await read('user-calls:alice:void', userCallsSnapshotSchema)).calls.map((c) => c.id)).toEqual(['a6']);
    expect((await read('user-calls:bob:void', userCallsSnapshotSchema)).calls).toEqual([]);
    expect((await read('user-calls:bob:all', userCallsSnapshotSchema)).handle).toBe('Bob');
  });

  it('ranks the leaderboards, and `right` only with 5 or more settled calls', async () => {
    const profit = await read('leaderboard:profit', leaderboardSnapshotSchema);
    expect(profit.rows).toStrictEqual([
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
  it('a new call shows up in the latest list, its market, its author and its own snapshot — and nothing else is rebuilt', async () => {
    await tdb.db.query(sql`
      insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
      values ('c2', ${ids.carol}, 'm3', 0, 0.61, 'Goals galore', ${at(55)})
    `);
    await markDirty('call:c2', 'user:' + String(ids.carol), 'market:m3');
    const stats = await builder.build();
    expect(stats).toMatchObject({ full: false, calls: 1, users: 1, markets: 1 });
    expect((await read('calls:latest', callListSnapshotSchema)).calls[0]?.id).toBe('c2');
    expect((await read('calls:market:m3', marketCallsSnapshotSchema)).calls.map((c) => c.id)).toEqual(['c2']);
    expect((await read('user-calls:carol:open', userCallsSnapshotSchema)).calls.map((c) => c.id)).toEqual(['c2', 'c1']);
    expect((await read('call:c2', callSnapshotSchema)).call.outcome).toBe('Over');
    expect(await tr.redis.scard(redisKeys(tr.prefix).dirtyRecords)).toBe(0);
  });

  it("settling a market rebuilds every call on it, its callers' lists and the combo lists", async () => {
    await settleM1Calls();
    await tdb.db.query(sql`update combo_legs set status = 'won', settled_at = ${at(90)} where market_id = 'm1'`);
    // The market as settlement marks it (the builder finds its calls itself), and its callers as the
    // projection job marks them once their records are projected.
    await markDirty('market:m1', 'combos', ...[ids.alice, ids.bob, ids.carol].map((id) => `user:${id}`));
    const stats = await builder.build();
    expect(stats.calls).toBe(4);
    expect(stats.users).toBe(3);
    expect((await read('call:a7', callSnapshotSchema)).call).toMatchObject({ status: 'won', profit_on_10: 8.69 });
    expect((await read('call:b2', callSnapshotSchema)).call).toMatchObject({ status: 'lost', profit_on_10: -10 });
    expect((await read('user-calls:bob:won', userCallsSnapshotSchema)).calls.map((c) => c.id)).toEqual(['b1', 'b5', 'b4']);
    expect((await read('user-calls:alice:open', userCallsSnapshotSchema)).calls).toEqual([]);
    expect((await read('combos:open', comboListSnapshotSchema)).combos[0]?.legs.map((l) => l.status)).toEqual(['won', 'open']);
  });

  it("a big change's call lists are patched in Redis to the very bodies Postgres makes, then made from Postgres by the next build", async () => {
    const patching = createRecordSnapshotBuilder({ ...builderSource(tdb, tr), fullEveryMs: 3_600_000, patchListsFrom: 1 });
    await patching.build({ full: true }); // a builder's first build is a full one
    await settleM1Calls();
    // And a new call of carol's, which goes first in her lists: a call without a page yet, so her
    // lists are made from Postgres once its page is written, not patched.
    await tdb.db.query(sql`
      insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
      values ('c3', ${ids.carol}, 'm3', 0, 0.61, 'Goals galore', ${at(95)})
    `);
    // Bob's open list is gone from Redis: his lists cannot be patched and are made from Postgres at once.
    await tr.redis.del(redisKeys(tr.prefix).snapshot('user-calls:bob:open'));
    await markDirty('market:m1', 'call:c3', ...[ids.alice, ids.bob, ids.carol].map((id) => `user:${id}`));
    const stats = await patching.build();
    expect(stats.patched).toBe(1); // alice
    const people = [ids.alice, ids.bob, ids.carol].map(String);
    for (const made of await userBodies(tdb.db, people, WEB_URL, 'lists')) {
      const stored = await tr.redis.hmget(redisKeys(tr.prefix).snapshot(made.name), 'body', 'etag');
      expect(stored, made.name).toEqual([made.body, snapshotEtag(made.body)]);
    }
    expect((await read('user-calls:alice:open', userCallsSnapshotSchema)).calls).toEqual([]);
    expect((await read('user-calls:alice:won', userCallsSnapshotSchema)).calls.map((c) => c.id)).toEqual(['a7', 'a4', 'a3', 'a2', 'a1']);
    expect((await read('user-calls:carol:all', userCallsSnapshotSchema)).calls.map((c) => [c.id, c.status])).toEqual([['c3', 'open'], ['c1', 'lost']]);
    expect(await tr.redis.smembers(redisKeys(tr.prefix).dirtyRecords)).toEqual([`lists:${ids.alice}`]);
    // The follow-up makes the patched lists from Postgres: the same bodies, nothing to write.
    await expect(patching.build()).resolves.toMatchObject({ written: 0 });
    expect(await tr.redis.scard(redisKeys(tr.prefix).dirtyRecords)).toBe(0);
  });

  it('asks for a full build when Redis lost the snapshots, and that build restores them', async () => {
    expect(await builder.fullBuildDue()).toBe(false);
    const names = await tr.redis.keys(`${redisKeyBase(tr.prefix)}:snap:*`);
    await tr.redis.del(...names);
    expect(await builder.fullBuildDue()).toBe(true);
    await builder.build({ full: true });
    expect((await tr.redis.keys(`${redisKeyBase(tr.prefix)}:snap:*`)).sort()).toEqual(names.sort());
    expect((await read('call:a7', callSnapshotSchema)).call).toMatchObject({ status: 'open', thesis_updates: [{ body: 'Team news: Saka starts.' }, { body: 'Still confident at half-time.' }] });
  });

  it('ignores malformed members instead of failing the build', async () => {
    await markDirty('user:not-a-number', 'nonsense');
    await expect(builder.build()).resolves.toMatchObject({ users: 0, calls: 0 });
  });
});

describe('bodies made in SQL', () => {
  const schemaOf = (name: string): z.ZodType => {
    if (name === 'calls:latest') return callListSnapshotSchema;
    if (name.startsWith('calls:market:')) return marketCallsSnapshotSchema;
    if (name.startsWith('call:')) return callSnapshotSchema;
    if (name.startsWith('user-calls:')) return userCallsSnapshotSchema;
    if (name.startsWith('user:')) return userSnapshotSchema;
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
    await tdb.db.query(sql`insert into thesis_updates (call_id, body, at) values ('z9', ${'Line one\r\nline "two"'}, ${at(59)})`);
    await markDirty('call:z9', 'user:' + String(ids.carol), 'market:m3');
    await builder.build();
    expect((await read('call:z9', callSnapshotSchema)).call.thesis).toBe(thesis);
    const keys = await tr.redis.keys(`${redisKeyBase(tr.prefix)}:snap:*`);
    expect(keys.length).toBeGreaterThan(30);
    for (const key of keys) {
      const name = key.slice(`${redisKeyBase(tr.prefix)}:snap:`.length);
      const body = await tr.redis.hget(key, 'body');
      // Parsing with the API's schema keeps its key order: the same text back means same keys, same order, same bytes.
      expect(JSON.stringify(schemaOf(name).parse(JSON.parse(body ?? 'null'))), name).toBe(body);
    }
  });

  it('make the same lists when the cached Call objects are gone (made on the fly) as with them', async () => {
    const lists = async () => [
      ...(await userBodies(tdb.db, [String(ids.alice), String(ids.bob)], WEB_URL)),
      ...(await marketBodies(tdb.db, ['m1', 'm2'], WEB_URL)),
      ...(await globalBodies(tdb.db, WEB_URL)),
    ];
    const cached = await lists();
    expect(Number((await tdb.db.query(sql`select count(*) as n from record_call_json`))[0].n)).toBeGreaterThan(10);
    await tdb.db.query(sql`truncate record_call_json`);
    expect(await lists()).toEqual(cached);
  });
});
