import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { redisKeys } from '../redis/keys.js';
import { createDb, sql, type Db } from '../db/connection.js';
import { createTestDatabase, createTestRedis, startCommitCutter, type CommitCutter, type TestDatabase, type TestRedis } from '../testing/index.js';
import { createRecords, RecordRefused, RecordsUnavailable, retryInDoubt, type Records } from './index.js';

/**
 * Writes in doubt: idempotency keys on calls, combos and thesis updates. A relay in front of Postgres
 * (testing/commit-cutter.ts) loses the answer of a COMMIT the server carried out, as a failover does:
 * the client cannot know whether its call was written, and its keyed retry must answer the one that was.
 */

let tdb: TestDatabase;
let tr: TestRedis;
let cutter: CommitCutter;
/** The write path through the relay. */
let cutDb: Db;
let records: Records;
let recordsThroughCutter: Records;

const token = (m: string, i: number) => `tok-${m}-${i}`;
async function setChance(m: string, i: number, chance: string) {
  const keys = redisKeys(tr.prefix);
  await tr.redis.hset(keys.chances, token(m, i), chance);
  await tr.redis.hset(keys.chanceAt, token(m, i), String(Date.now()));
}

beforeAll(async () => {
  [tdb, tr] = await Promise.all([createTestDatabase('write_keys'), createTestRedis('write_keys')]);
  await tdb.db.query(sql`insert into events (id, slug, title, category) values ('e1', 'e1', 'Event', 'Sport')`);
  for (const [pos, id] of ['k1', 'k2', 'k3', 'k4'].entries()) {
    await tdb.db.query(sql`insert into markets (id, event_id, condition_id, position, question) values (${id}, 'e1', ${id}, ${pos}, ${`Question ${id}?`})`);
    for (const [i, name] of ['Yes', 'No'].entries()) await tdb.db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values (${id}, ${i}, ${name}, ${token(id, i)})`);
  }
  records = createRecords({ db: tdb.db, redis: tr.redis, prefix: tr.prefix });
  await records.createUser({ handle: 'kay', displayName: 'Kay' });
  await records.createUser({ handle: 'lee', displayName: 'Lee' });
  cutter = await startCommitCutter(tdb.url);
  cutDb = createDb(cutter.url, { poolSize: 2 });
  recordsThroughCutter = createRecords({ db: cutDb, redis: tr.redis, prefix: tr.prefix });
});

afterAll(async () => {
  await cutDb?.dispose();
  await cutter?.close();
  await tr?.cleanup();
  await tdb?.drop();
});

beforeEach(async () => {
  for (const m of ['k1', 'k2', 'k3', 'k4']) for (const i of [0, 1]) await setChance(m, i, i === 0 ? '0.4' : '0.6');
});

const count = async (table: 'calls' | 'combos' | 'thesis_updates' | 'outbox', where = sql`true`) =>
  ((await tdb.db.query(sql`select count(*)::int as n from ${sql.ident(table)} where ${where}`)) as Array<{ n: number }>)[0]!.n;

describe('idempotency keys', () => {
  it('a call sent again with its key is answered with the first, written once, even after its market closed and the price moved', async () => {
    const first = await records.recordCall({ handle: 'kay', marketId: 'k1', outcomeIndex: 0, thesis: 'once', key: 'call-1' });
    expect(first.repeated).toBe(false);
    await setChance('k1', 0, '0.9');
    await tdb.db.query(sql`update markets set closed = true where id = 'k1'`);
    const again = await records.recordCall({ handle: 'KAY', marketId: 'k1', outcomeIndex: 0, thesis: 'once', key: 'call-1' });
    expect(again).toEqual({ ...first, repeated: true });
    expect(await count('calls', sql`thesis = 'once'`)).toBe(1);
    expect(await count('outbox', sql`payload::text like ${`%call:${first.id}%`}`)).toBe(1);
  });

  it('the same key with different content is refused with a clear message, and nothing is written', async () => {
    await records.recordCall({ handle: 'kay', marketId: 'k2', outcomeIndex: 0, thesis: 'first', key: 'call-2' });
    const before = await count('calls');
    const err = await records.recordCall({ handle: 'kay', marketId: 'k2', outcomeIndex: 1, thesis: 'first', key: 'call-2' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecordRefused);
    expect((err as RecordRefused).code).toBe('key_reused');
    expect((err as RecordRefused).message).toMatch(/key "call-2" was already used for a call with different content/);
    // A key used for a call is not a combo's either.
    const combo = await records.recordCombo({ handle: 'kay', legs: [{ marketId: 'k2', outcomeIndex: 0 }, { marketId: 'k3', outcomeIndex: 0 }], key: 'call-2' }).catch((e: unknown) => e);
    expect((combo as RecordRefused).code).toBe('key_reused');
    expect(await count('calls')).toBe(before);
    // A key is one person's: another may use the same text.
    expect((await records.recordCall({ handle: 'lee', marketId: 'k2', outcomeIndex: 1, thesis: 'first', key: 'call-2' })).repeated).toBe(false);
  });

  it('two first sends with one key at once: one call, both answered with it', async () => {
    const both = await Promise.all([0, 1].map(() => records.recordCall({ handle: 'lee', marketId: 'k3', outcomeIndex: 1, thesis: 'raced', key: 'race-1' })));
    expect(both[0]!.id).toBe(both[1]!.id);
    expect(both.map((b) => b.repeated).sort()).toEqual([false, true]);
    expect(await count('calls', sql`thesis = 'raced'`)).toBe(1);
  });

  it('a combo and a thesis update sent again with their keys are answered with the first', async () => {
    const legs = [{ marketId: 'k3', outcomeIndex: 0 }, { marketId: 'k4', outcomeIndex: 1 }];
    const combo = await records.recordCombo({ handle: 'kay', legs, key: 'combo-1' });
    expect(await records.recordCombo({ handle: 'kay', legs, key: 'combo-1' })).toEqual({ ...combo, repeated: true });
    expect(await count('combos')).toBe(1);
    const call = await records.recordCall({ handle: 'kay', marketId: 'k4', outcomeIndex: 0, thesis: 'to update' });
    const update = await records.addThesisUpdate(call.id, 'still right', { key: 'upd-1' });
    expect(await records.addThesisUpdate(call.id, 'still right', { key: 'upd-1' })).toEqual({ ...update, repeated: true });
    expect(await count('thesis_updates', sql`call_id = ${call.id}`)).toBe(1);
    const other = await records.addThesisUpdate(call.id, 'changed my mind', { key: 'upd-1' }).catch((e: unknown) => e);
    expect((other as RecordRefused).code).toBe('key_reused');
  });

  it('a commit whose answer was lost: the call is in doubt (RecordsUnavailable), its keyed retry answers it, and it is written once', async () => {
    cutter.armNextCommit();
    const write = () => recordsThroughCutter.recordCall({ handle: 'kay', marketId: 'k4', outcomeIndex: 1, thesis: 'in doubt', key: 'doubt-1' });
    const lost = await write().catch((e: unknown) => e);
    expect(cutter.cut()).toBe(1);
    expect(lost).toBeInstanceOf(RecordsUnavailable);
    // It was written: the server committed before the answer was lost.
    expect(await count('calls', sql`thesis = 'in doubt'`)).toBe(1);
    const retried = await retryInDoubt(write);
    expect(retried.repeated).toBe(true);
    const [row] = (await tdb.db.query(sql`select id from calls where thesis = 'in doubt'`)) as Array<{ id: string }>;
    expect(retried.id).toBe(row!.id);
    expect(await count('calls', sql`thesis = 'in doubt'`)).toBe(1);
  });

  it('the control: the same lost answer retried without a key records the call twice', async () => {
    cutter.armNextCommit();
    const write = () => recordsThroughCutter.recordCall({ handle: 'lee', marketId: 'k4', outcomeIndex: 1, thesis: 'blind retry' });
    expect(await write().catch((e: unknown) => e)).toBeInstanceOf(RecordsUnavailable);
    await write();
    expect(await count('calls', sql`thesis = 'blind retry'`)).toBe(2);
  });
});
