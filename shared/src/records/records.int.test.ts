import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { queuePrefix } from '../queues/names.js';
import { redisKeys } from '../redis/keys.js';
import { sql } from '../db/connection.js';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '../testing/index.js';
import { createRecords, RecordRefused, type Records, type RecordRefusedCode } from './index.js';

let tdb: TestDatabase;
let tr: TestRedis;
let records: Records;
let now = Date.now();

const token = (m: string, i: number) => `tok-${m}-${i}`;
async function setChance(m: string, i: number, chance: string, at = now) {
  const keys = redisKeys(tr.prefix);
  await tr.redis.hset(keys.chances, token(m, i), chance);
  await tr.redis.hset(keys.chanceAt, token(m, i), String(at));
}

beforeAll(async () => {
  [tdb, tr] = await Promise.all([createTestDatabase('records_write'), createTestRedis('records_write')]);
  await tdb.db.query(sql`insert into events (id, slug, title, category) values ('e1', 'e1', 'Event', 'Sport')`);
  // open: mA, mB, mC (three outcomes), mD, mE, mF, mG; closed: mClosed; resolved but not yet closed: mResolved.
  const markets: Array<[string, boolean, boolean]> = [
    ['mA', false, false], ['mB', false, false], ['mC', false, false], ['mD', false, false], ['mE', false, false],
    ['mF', false, false], ['mG', false, false], ['mClosed', true, false], ['mResolved', false, true],
  ];
  for (const [pos, [id, closed, resolved]] of markets.entries()) {
    await tdb.db.query(sql`
      insert into markets (id, event_id, condition_id, position, question, closed, resolved_at)
      values (${id}, 'e1', ${id}, ${pos}, ${`Question ${id}?`}, ${closed}, ${resolved ? new Date() : null})
    `);
    const names = id === 'mC' ? ['Home', 'Draw', 'Away'] : ['Yes', 'No'];
    for (const [i, name] of names.entries()) {
      await tdb.db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values (${id}, ${i}, ${name}, ${token(id, i)})`);
    }
  }
  records = createRecords({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, clock: () => now });
  await records.createUser({ handle: 'Alice', displayName: 'Alice A', interests: ['football: epl', 'Crypto'] });
  await records.createUser({ handle: 'bob_2', displayName: 'Bob' });
});

afterAll(async () => {
  await records?.close();
  await tr?.cleanup();
  await tdb?.drop();
});

beforeEach(async () => {
  now = Date.now();
  for (const m of ['mA', 'mB', 'mC', 'mD', 'mE', 'mF', 'mG', 'mClosed', 'mResolved']) {
    await setChance(m, 0, '0.4');
    await setChance(m, 1, '0.6');
  }
});

/** Every row of every table the write path writes, to show a refusal changed nothing. */
async function everything(): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const table of ['users', 'follows', 'calls', 'thesis_updates', 'combos', 'combo_legs', 'outbox'] as const) {
    out[table] = await tdb.db.query(sql`select * from ${sql.ident(table)} order by 1, 2`);
  }
  return out;
}

async function refused(code: RecordRefusedCode, action: () => Promise<unknown>): Promise<string> {
  const before = await everything();
  const err = await action().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RecordRefused);
  expect((err as RecordRefused).code).toBe(code);
  expect(await everything()).toEqual(before);
  return (err as RecordRefused).message;
}

const call = (over: Partial<Parameters<Records['recordCall']>[0]> = {}) =>
  records.recordCall({ handle: 'alice', marketId: 'mA', outcomeIndex: 0, thesis: 'because', ...over });

describe('people', () => {
  it('stores a user with canonical interests and refuses a taken handle case-insensitively', async () => {
    const rows: Array<{ handle: string; interests: string[]; avatar: string | null }> = await tdb.db.query(
      sql`select handle, interests, avatar from users where handle = 'Alice'`,
    );
    expect(rows).toEqual([{ handle: 'Alice', interests: ['Football: EPL', 'Crypto'], avatar: null }]);
    expect(await refused('handle_taken', () => records.createUser({ handle: '@ALICE', displayName: 'Other' }))).toContain('@ALICE');
  });

  it('refuses a malformed handle, a bad interest and an empty name', async () => {
    await refused('bad_handle', () => records.createUser({ handle: 'ab', displayName: 'Too short' }));
    await refused('bad_handle', () => records.createUser({ handle: 'has space', displayName: 'X' }));
    await refused('bad_input', () => records.createUser({ handle: 'carol', displayName: 'C', interests: ['Football: NBA'] }));
    await refused('bad_input', () => records.createUser({ handle: 'carol', displayName: 'C', interests: ['Gardening'] }));
    await refused('bad_input', () => records.createUser({ handle: 'carol', displayName: '  ' }));
  });

  it('follows idempotently, unfollows, and refuses self-follow and unknown people', async () => {
    await records.follow('alice', '@bob_2');
    await records.follow('ALICE', 'bob_2');
    const count = async () => ((await tdb.db.query(sql`select count(*)::int as n from follows`)) as Array<{ n: number }>)[0]!.n;
    expect(await count()).toBe(1);
    await refused('self_follow', () => records.follow('alice', 'Alice'));
    await refused('unknown_user', () => records.follow('alice', 'nobody'));
    await records.unfollow('alice', 'bob_2');
    await records.unfollow('alice', 'bob_2');
    expect(await count()).toBe(0);
  });
});

describe('calls', () => {
  it('carries exactly the chance in Redis at that instant', async () => {
    await setChance('mB', 1, '0.535');
    const made = await call({ marketId: 'mB', outcomeIndex: 1 });
    expect(made.chanceAtCall).toBe(0.535);
    expect(made.id).toMatch(/^[0-9A-Za-z]{10}$/);
    const rows: Array<{ chance_at_call: string; status: string; profit_on_10: string | null }> = await tdb.db.query(
      sql`select chance_at_call, status, profit_on_10 from calls where id = ${made.id}`,
    );
    expect(rows).toEqual([{ chance_at_call: '0.535', status: 'open', profit_on_10: null }]);
    // The chance moves; the next call carries the new one, the first keeps its own.
    await setChance('mB', 1, '0.61');
    expect((await call({ marketId: 'mB', outcomeIndex: 1 })).chanceAtCall).toBe(0.61);
    expect(((await tdb.db.query(sql`select chance_at_call from calls where id = ${made.id}`)) as Array<{ chance_at_call: string }>)[0]!.chance_at_call).toBe('0.535');
  });

  it('owes projection and snapshot work for the caller, the copied caller and the market in the same transaction', async () => {
    await records.createUser({ handle: 'copier', displayName: 'Copier' });
    const original = await call({ marketId: 'mD' });
    const copy = await call({ handle: 'copier', marketId: 'mD', copiedFrom: original.id });
    const ids: Array<{ id: number; handle: string }> = await tdb.db.query(sql`select id, handle from users where handle in ('Alice', 'copier')`);
    const rows: Array<{ payload: { userIds: number[]; marketIds: string[]; dirty: string[] } }> = await tdb.db.query(sql`
      select payload from outbox where topic = 'records-changed' and payload -> 'dirty' ? ${`call:${copy.id}`}
    `);
    expect(rows).toHaveLength(1);
    expect([...rows[0]!.payload.userIds].sort()).toEqual(ids.map((u) => u.id).sort());
    expect(rows[0]!.payload.marketIds).toEqual(['mD']);
    // Snapshots: the call's object and the market's list; none per person (the API reads a person's
    // record and lists from Postgres).
    expect([...rows[0]!.payload.dirty].sort()).toEqual([`call:${copy.id}`, 'market:mD'].sort());
    // Nothing is enqueued by the write path itself: the worker's relay does it from the row.
    expect(await tr.redis.keys(`${queuePrefix(tr.prefix)}:projections:*`)).toEqual([]);
  });

  it('refuses an unknown user', () => refused('unknown_user', () => call({ handle: 'nobody' })));
  it('refuses an unknown market', () => refused('unknown_market', () => call({ marketId: 'nope' })));
  it('refuses a closed market', () => refused('market_closed', () => call({ marketId: 'mClosed' })));
  it('refuses a resolved market', () => refused('market_closed', () => call({ marketId: 'mResolved' })));
  it('refuses an unknown outcome', () => refused('unknown_outcome', () => call({ marketId: 'mA', outcomeIndex: 2 })));
  it('refuses a price older than 60 s', async () => {
    await setChance('mA', 0, '0.4', now - 60_001);
    expect(await refused('stale_price', () => call())).toContain('61 s old');
  });
  it('accepts a price exactly 60 s old', async () => {
    await setChance('mA', 0, '0.4', now - 60_000);
    await expect(call()).resolves.toMatchObject({ chanceAtCall: 0.4 });
  });
  it('refuses an outcome without a live price', async () => {
    await tr.redis.hdel(redisKeys(tr.prefix).chances, token('mC', 2));
    await refused('stale_price', () => call({ marketId: 'mC', outcomeIndex: 2 }));
  });
  it('refuses a chance of 0 or 1', async () => {
    await setChance('mA', 0, '1');
    await refused('bad_input', () => call());
    await setChance('mA', 0, '0');
    await refused('bad_input', () => call());
  });
  it('refuses copying a call that does not exist', () => refused('unknown_call', () => call({ copiedFrom: 'nope123456' })));
  it('refuses an overlong thesis', () => refused('bad_input', () => call({ thesis: 'x'.repeat(2001) })));
  it('refuses a negative outcome index', () => refused('bad_input', () => call({ outcomeIndex: -1 })));

  it('adds thesis updates to a call, and refuses them for an unknown call or an empty body', async () => {
    const made = await call({ marketId: 'mE' });
    now += 1000;
    const { at } = await records.addThesisUpdate(made.id, 'still confident');
    const rows: Array<{ body: string; at: Date }> = await tdb.db.query(sql`select body, at from thesis_updates where call_id = ${made.id}`);
    expect(rows).toEqual([{ body: 'still confident', at }]);
    await refused('unknown_call', () => records.addThesisUpdate('nope123456', 'x'));
    await refused('bad_input', () => records.addThesisUpdate(made.id, '   '));
  });

  it('backdates made_at for the demo crowd but still takes the live chance', async () => {
    const madeAt = new Date(now - 3 * 86_400_000);
    await setChance('mF', 0, '0.27');
    const made = await call({ marketId: 'mF', madeAt });
    expect(made).toMatchObject({ chanceAtCall: 0.27, madeAt });
  });
});

describe('combos', () => {
  const legs = (...ms: string[]) => ms.map((marketId) => ({ marketId, outcomeIndex: 0 }));

  it('records legs at their live chances, the chance their product and wins_on_10 = 10 / chance', async () => {
    await setChance('mA', 0, '0.5');
    await setChance('mB', 0, '0.25');
    await setChance('mC', 2, '0.8');
    const made = await records.recordCombo({ handle: 'alice', legs: [...legs('mA', 'mB'), { marketId: 'mC', outcomeIndex: 2 }] });
    expect(made).toMatchObject({ chance: 0.1, winsOn10: 100 });
    const combo: Array<{ chance: string; wins_on_10: string; status: string }> = await tdb.db.query(sql`select chance, wins_on_10, status from combos where id = ${made.id}`);
    expect(combo).toEqual([{ chance: '0.1', wins_on_10: '100', status: 'open' }]);
    const rows: Array<{ leg_index: number; market_id: string; outcome_index: number; chance_at_call: string }> = await tdb.db.query(
      sql`select leg_index, market_id, outcome_index, chance_at_call from combo_legs where combo_id = ${made.id} order by leg_index`,
    );
    expect(rows).toEqual([
      { leg_index: 0, market_id: 'mA', outcome_index: 0, chance_at_call: '0.5' },
      { leg_index: 1, market_id: 'mB', outcome_index: 0, chance_at_call: '0.25' },
      { leg_index: 2, market_id: 'mC', outcome_index: 2, chance_at_call: '0.8' },
    ]);
  });

  it('refuses fewer than 2 legs', () => refused('bad_leg_count', () => records.recordCombo({ handle: 'alice', legs: legs('mA') })));
  it('refuses more than 6 legs', () =>
    refused('bad_leg_count', () => records.recordCombo({ handle: 'alice', legs: legs('mA', 'mB', 'mC', 'mD', 'mE', 'mF', 'mG') })));
  it('refuses two legs on one market', () =>
    refused('duplicate_leg_market', () => records.recordCombo({ handle: 'alice', legs: [...legs('mA', 'mB'), { marketId: 'mA', outcomeIndex: 1 }] })));
  it('refuses a closed leg, writing no combo and no leg', () => refused('market_closed', () => records.recordCombo({ handle: 'alice', legs: legs('mA', 'mClosed') })));
  it('refuses an unknown leg market', () => refused('unknown_market', () => records.recordCombo({ handle: 'alice', legs: legs('mA', 'zz') })));
  it('refuses an unknown leg outcome', () =>
    refused('unknown_outcome', () => records.recordCombo({ handle: 'alice', legs: [...legs('mA'), { marketId: 'mB', outcomeIndex: 5 }] })));
  it('refuses a stale leg price', async () => {
    await setChance('mB', 0, '0.4', now - 61_000);
    await refused('stale_price', () => records.recordCombo({ handle: 'alice', legs: legs('mA', 'mB') }));
  });
  it('refuses an unknown combo maker', () => refused('unknown_user', () => records.recordCombo({ handle: 'nobody', legs: legs('mA', 'mB') })));
});
