import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@pm/shared/db';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { createWorkerMetrics, type WorkerMetrics } from './ops.js';
import { insertRecordsFixture } from './record-snapshots/test-fixture.js';

/**
 * calls_settled_total and combos_settled_total come from counters that triggers keep (migration
 * 0006), not from counting every call per scrape: after every kind of change — calls settled in
 * bulk, a correction, a delete, a bulk load with the foreign-key triggers off, a truncate — the
 * scrape shows what counting the tables shows.
 */

let tdb: TestDatabase;
let tr: TestRedis;
let ops: WorkerMetrics;

beforeAll(async () => {
  [tdb, tr] = await Promise.all([createTestDatabase('settled_counts'), createTestRedis('settled_counts')]);
  await insertRecordsFixture(tdb.db);
  ops = createWorkerMetrics({ db: tdb.db, redis: tr.redis, redisPrefix: tr.prefix });
});

afterAll(async () => {
  await ops?.close();
  await tr?.cleanup();
  await tdb?.drop();
});

/** What the scrape says, per metric and status. */
async function scraped(): Promise<Record<string, number>> {
  const { body } = await ops.metrics.scrape();
  const out: Record<string, number> = {};
  for (const m of body.matchAll(/^(calls|combos)_settled_total\{status="(\w+)"[^}]*\} (\d+)$/gm)) out[`${m[1]}:${m[2]}`] = Number(m[3]);
  return out;
}

/** What counting the tables says. */
async function counted(): Promise<Record<string, number>> {
  const rows: Array<{ k: string; n: number }> = await tdb.db.query(sql`
    select 'calls:' || s as k, (select count(*) from calls where status = s)::int as n from unnest(array['won', 'lost', 'void']) s
    union all
    select 'combos:' || s, (select count(*) from combos where status = s)::int from unnest(array['won', 'lost', 'void']) s`);
  return Object.fromEntries(rows.map((r) => [r.k, r.n]));
}

describe('settled call and combo counts', () => {
  it('match a count of the tables after every kind of change', async () => {
    const before = await counted();
    expect(before['calls:won']).toBeGreaterThan(0);
    expect(await scraped()).toEqual(before);

    // A settlement: every open call and combo decided in one statement each.
    await tdb.db.query(sql`update calls set status = 'lost', profit_on_10 = -10, settled_at = now() where status = 'open'`);
    await tdb.db.query(sql`update combos set status = 'won', settled_at = now() where status = 'open'`);
    // A correction: a won call becomes void; and an update that does not touch status.
    await tdb.db.query(sql`update calls set status = 'void', profit_on_10 = 0 where id = (select min(id) from calls where status = 'won')`);
    await tdb.db.query(sql`update calls set thesis = thesis || '.'`);
    const settled = await counted();
    expect(settled['calls:lost']).toBeGreaterThan(before['calls:lost']!);
    expect(await scraped()).toEqual(settled);

    // Deleted calls, and a bulk load as the bench loads (foreign-key triggers off).
    await tdb.db.query(sql`delete from thesis_updates`);
    await tdb.db.query(sql`delete from record_call_json`);
    await tdb.db.query(sql`update calls set copied_from = null`);
    await tdb.db.query(sql`delete from calls where id in (select id from calls where status = 'lost' limit 2)`);
    await tdb.db.tx(async (tx) => {
      await tx.query(sql`set local session_replication_role = replica`);
      await tx.query(sql`
        insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, made_at, settled_at)
        select 'bulk' || g, (select min(id) from users), 'm2', 0, 0.5, 'won', 10, now(), now() from generate_series(1, 50) g`);
    });
    const loaded = await counted();
    expect(loaded['calls:won']).toBe(settled['calls:won']! + 50);
    expect(await scraped()).toEqual(loaded);

    await tdb.db.query(sql`truncate calls, combos cascade`);
    expect(await scraped()).toEqual({ 'calls:won': 0, 'calls:lost': 0, 'calls:void': 0, 'combos:won': 0, 'combos:lost': 0, 'combos:void': 0 });
  });
});
