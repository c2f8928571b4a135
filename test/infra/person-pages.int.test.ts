import { beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { callSchema, callSnapshotSchema, userSnapshotSchema, type Call, type UserCallFilter } from '@pm/shared/api';
import { sql } from '@pm/shared/db';
import { createPageReader, type PageReader } from '../../services/api/src/pages/pages.js';
import { refreshAllCallJson } from '../../services/worker/src/record-snapshots/full-build.js';
import { at, B2_CALL, insertRecordsFixture, WEB_URL, type SeededIds } from '../../services/worker/src/record-snapshots/test-fixture.js';
import { useFreshStores } from '../../services/worker/src/testing/stores.js';

/**
 * A person's record, their call lists (every page, the first too) and a call's own page are no
 * snapshots: the API reads them from Postgres as committed, through its page reader
 * (services/api/src/pages/pages.ts). Here that reader over the seeded records of the record snapshot
 * tests (services/worker/src/record-snapshots/test-fixture.ts), with no worker build: each page is
 * the exact docs/api.md resource, a settlement shows the moment it commits, and text round-trips.
 */

const stores = useFreshStores('person_pages');
let ids: SeededIds;
let pages: PageReader;

// Each test: the seeded records alone in Postgres and a reader over them. The reader is not closed:
// it would dispose the file's database, which useFreshStores drops after the file.
beforeEach(async () => {
  ids = await insertRecordsFixture(stores.tdb.db);
  pages = createPageReader({ db: stores.tdb.db, webUrl: WEB_URL, logger: pino({ level: 'silent' }) });
});

/** m1 resolved to its first outcome and its calls settled as settlement leaves them (not the combo legs). */
async function settleM1Calls(): Promise<void> {
  await stores.tdb.db.query(sql`update markets set closed = true, resolved_outcome_index = 0, resolved_at = now() where id = 'm1'`);
  await stores.tdb.db.query(sql`
    update calls set status = case when outcome_index = 0 then 'won' else 'lost' end,
      profit_on_10 = case when outcome_index = 0 then round(10 / chance_at_call - 10, 2) else -10 end,
      settled_at = ${at(90)}
    where market_id = 'm1'
  `);
}

/**
 * A page body parsed with the API's schema, after checking that the schema gives back the very same
 * text: same keys, in the same order, compact, escaped as JSON.stringify escapes.
 */
function served<T>(body: string | null, schema: { parse(v: unknown): T }): T {
  if (body === null) throw new Error('no page');
  const parsed = schema.parse(JSON.parse(body));
  expect(JSON.stringify(parsed)).toBe(body);
  return parsed;
}
const callPage = async (id: string) => served(await pages.call(id), callSnapshotSchema).call;
const userRecord = async (handle: string) => served(await pages.user(handle), userSnapshotSchema).user;

/** A person's calls of one filter as the API serves them (handle lower-cased, as the route passes it). */
async function listed(handle: string, status: UserCallFilter, limit = 100, after?: string): Promise<{ handle: string; calls: Call[]; nextAfter: string | number | null }> {
  const page = await pages.userCalls({ handle, status, limit, ...(after === undefined ? {} : { after }) });
  if (!page) throw new Error(`no person ${handle}`);
  return { handle: page.handle, calls: page.bodies.map((b) => served(b, callSchema)), nextAfter: page.nextAfter };
}
const listedIds = async (handle: string, status: UserCallFilter) => (await listed(handle, status)).calls.map((c) => c.id);

describe("a call's page", () => {
  it('is the SPEC subset with its thesis updates, oldest first', async () => {
    expect(await callPage('a7')).toStrictEqual({
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
    expect(await callPage('a5')).toMatchObject({ status: 'lost', profit_on_10: -10, thesis_updates: [] });
  });

  it('is null for an unknown call', async () => {
    expect(await pages.call('nope')).toBeNull();
  });
});

describe("a person's record", () => {
  it('is found by the lower-cased handle and spelled as the person spells it', async () => {
    expect(await userRecord('bob')).toStrictEqual({
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
    expect((await userRecord('alice')).interests).toEqual(['Football', 'Football: EPL']);
  });

  it('has zeros for someone the projections have not reached, and is null for an unknown handle', async () => {
    expect(await userRecord('carol')).toMatchObject({
      handle: 'carol',
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
      bio: 'New here.',
      interests: [],
    });
    expect(await pages.user('nobody')).toBeNull();
  });
});

describe("a person's call lists", () => {
  it('list their calls newest first under every status filter, empty lists included', async () => {
    const all = await listed('alice', 'all');
    expect(all.handle).toBe('alice');
    expect(all.calls.map((c) => c.id)).toEqual(['a7', 'a6', 'a5', 'a4', 'a3', 'a2', 'a1']);
    expect(all.nextAfter).toBeNull();
    expect(await listedIds('alice', 'won')).toEqual(['a4', 'a3', 'a2', 'a1']);
    expect(await listedIds('alice', 'lost')).toEqual(['a5']);
    expect(await listedIds('alice', 'open')).toEqual(['a7']);
    expect(await listedIds('alice', 'void')).toEqual(['a6']);
    expect(await listed('bob', 'void')).toEqual({ handle: 'Bob', calls: [], nextAfter: null });
    expect((await listed('bob', 'all')).handle).toBe('Bob');
    expect(await pages.userCalls({ handle: 'nobody', status: 'all', limit: 10 })).toBeNull();
  });

  it('hold the exact Call object of docs/api.md', async () => {
    const { calls } = await listed('bob', 'open');
    expect(calls.map((c) => c.id)).toEqual(['b2', 'b1']);
    expect(calls[0]).toStrictEqual(B2_CALL);
    expect((await listed('alice', 'won')).calls.at(-1)).toMatchObject({
      id: 'a1',
      status: 'won',
      profit_on_10: 15,
      settled_at: at(60).toISOString(),
      copied_from: null,
      user: { handle: 'alice', avatar: 'https://img.example/alice.png' },
    });
  });

  it('page with `after`: nothing repeated or skipped, no next page after the last', async () => {
    const first = await listed('alice', 'all', 3);
    expect(first.calls.map((c) => c.id)).toEqual(['a7', 'a6', 'a5']);
    expect(first.nextAfter).toBe('a5');
    const second = await listed('alice', 'all', 3, 'a5');
    expect(second.calls.map((c) => c.id)).toEqual(['a4', 'a3', 'a2']);
    expect(second.nextAfter).toBe('a2');
    expect(second.handle).toBe('alice');
    expect(await listed('alice', 'all', 3, 'a2')).toMatchObject({ calls: [expect.objectContaining({ id: 'a1' })], nextAfter: null });
    // A page that holds exactly the rest has no next one.
    expect(await listed('alice', 'won', 4)).toMatchObject({ nextAfter: null });
    expect((await listed('alice', 'won', 2, 'a4')).calls.map((c) => c.id)).toEqual(['a3', 'a2']);
    expect((await listed('alice', 'won', 2, 'a4')).nextAfter).toBe('a2');
  });
});

describe('a settlement', () => {
  it("shows on the person's lists and the call's page the moment it commits, with no worker build", async () => {
    // The Call objects the worker caches, as its last build left them before the settlement: stale after it.
    await refreshAllCallJson(stores.tdb.db, WEB_URL);
    await settleM1Calls();
    const cached: Array<{ body: string }> = await stores.tdb.db.query(sql`select body from record_call_json where call_id = 'a7'`);
    expect(JSON.parse(cached[0]!.body)).toMatchObject({ status: 'open' });

    expect(await listedIds('alice', 'open')).toEqual([]);
    expect(await listedIds('alice', 'won')).toEqual(['a7', 'a4', 'a3', 'a2', 'a1']);
    expect((await listed('alice', 'won')).calls[0]).toMatchObject({ id: 'a7', status: 'won', profit_on_10: 8.69, settled_at: at(90).toISOString() });
    expect(await listedIds('bob', 'won')).toEqual(['b1', 'b5', 'b4']);
    expect(await listedIds('bob', 'lost')).toEqual(['b2', 'b3']);
    expect(await listedIds('bob', 'open')).toEqual([]);
    expect((await listed('carol', 'all')).calls.map((c) => [c.id, c.status, c.profit_on_10])).toEqual([['c1', 'lost', -10]]);
    // Pages past the first too.
    expect((await listed('bob', 'all', 1, 'b2')).calls.map((c) => [c.id, c.status, c.profit_on_10])).toEqual([['b1', 'won', 8.52]]);
    expect(await callPage('a7')).toMatchObject({ status: 'won', profit_on_10: 8.69 });
    expect(await callPage('b2')).toMatchObject({ status: 'lost', profit_on_10: -10 });
    // A thesis update shows on the call's page at once too.
    await stores.tdb.db.query(sql`insert into thesis_updates (call_id, body, at) values ('a7', 'Full time: 2-0.', ${at(95)})`);
    expect((await callPage('a7')).thesis_updates.map((u) => u.body)).toEqual(['Team news: Saka starts.', 'Still confident at half-time.', 'Full time: 2-0.']);
  });
});

describe('text in the pages', () => {
  it('round-trips quotes, backslashes, control characters, an emoji and U+2028, and re-stringifies to the same text', async () => {
    // Quotes, backslashes, control characters, non-ASCII, an emoji, U+2028 and markup.
    const thesis = 'He said "yes" \\ no\n\ttab \u0001 café 🎉 \u2028 </script>';
    const update = 'Line one\r\nline "two" \u2029 \\u0041 \u001f 😀';
    const bio = 'Bio with "quotes", a \\ and\u2028a line 🎯';
    await stores.tdb.db.query(sql`
      insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
      values ('z9', ${ids.carol}, 'm3', 1, 0.07, ${thesis}, ${at(58)})
    `);
    await stores.tdb.db.query(sql`insert into thesis_updates (call_id, body, at) values ('z9', ${update}, ${at(59)})`);
    await stores.tdb.db.query(sql`update users set bio = ${bio}, display_name = ${'Carol "C" \u2028 ☕'} where id = ${ids.carol}`);

    // `served` checks each body re-stringifies to the very same text.
    const page = await callPage('z9');
    expect(page.thesis).toBe(thesis);
    expect(page.thesis_updates).toEqual([{ body: update, at: at(59).toISOString() }]);
    const { calls } = await listed('carol', 'all');
    expect(calls.map((c) => [c.id, c.thesis])).toEqual([['z9', thesis], ['c1', 'Chelsea hold']]);
    expect(await userRecord('carol')).toMatchObject({ bio, display_name: 'Carol "C" \u2028 ☕' });
  });
});
