import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@pm/shared/db';
import { createTestDatabase, type TestDatabase } from '@pm/shared/testing';
import { insertMarkets } from '../settlement/test-fixture.js';
import { fieldRecords } from './field-records.js';
import { windowRecords } from './window-records.js';

/**
 * Recomputing a person's field and window rows (the incremental projection, run for everyone who made
 * a call) rewrites only the rows whose sums changed: a new open call leaves every row as it was
 * (not a new row version, no dead row left behind), a settled one changes its fields' rows, and a
 * row the person no longer has is deleted. Real Postgres; row versions read by xmin.
 */

let tdb: TestDatabase;
const now = new Date('2026-09-30T12:00:00Z');
const HOUR = 3_600_000;
let ann = 0;
let bob = 0;

beforeAll(async () => {
  tdb = await createTestDatabase('recompute_writes');
  await insertMarkets(tdb.db, ['m1', 'm2', 'm3']);
  const ids = (await tdb.db.query(sql`insert into users (handle, display_name) values ('ann', 'Ann'), ('bob', 'Bob') returning id`)) as Array<{ id: number }>;
  ann = ids[0]!.id;
  bob = ids[1]!.id;
  let n = 0;
  for (const [user, market, status] of [[ann, 'm1', 'won'], [ann, 'm2', 'lost'], [bob, 'm1', 'lost']] as const) {
    await tdb.db.query(sql`
      insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, xp_awarded, made_at, settled_at)
      values (${`k${++n}`}, ${user}, ${market}, 0, 0.5, ${status}, ${status === 'won' ? 10 : -10}, ${status === 'won' ? 55 : 0}, ${new Date(now.getTime() - 3 * HOUR)}, ${new Date(now.getTime() - 2 * HOUR)})`);
  }
  // Every span's range ends now; the rebuild makes every row.
  await tdb.db.tx(async (tx) => {
    await fieldRecords.apply(tx, { all: true, now });
    await windowRecords.apply(tx, { all: true, now });
  });
});
afterAll(async () => {
  await tdb?.drop();
});

type Versions = Map<string, string>;
async function versions(): Promise<Versions> {
  const rows = (await tdb.db.query(sql`
    select 'f:' || field || ':' || user_id as k, xmin::text as v from user_field_records
    union all
    select 'w:' || span || ':' || field || ':' || user_id, xmin::text from user_window_records`)) as Array<{ k: string; v: string }>;
  return new Map(rows.map((r) => [r.k, r.v]));
}
const recompute = (userIds: number[]) =>
  tdb.db.tx(async (tx) => {
    await fieldRecords.apply(tx, { all: false, userIds, marketIds: [], now });
    await windowRecords.apply(tx, { all: false, userIds, marketIds: [], now });
  });

describe("recomputing people's field and window rows", () => {
  it('writes nothing for a new open call, only the changed rows for a settled one, and deletes what is gone', async () => {
    const before = await versions();
    // Sport (the fixture's category) and every-market rows, three spans, for both people.
    expect(before.size).toBe(2 + 2 * 3 * 2);

    await tdb.db.query(sql`
      insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, made_at)
      values ('open1', ${ann}, 'm3', 0, 0.4, 'open', ${now})`);
    await recompute([ann, bob]);
    expect(await versions()).toEqual(before);

    // Ann's open call settles (won): her rows change, Bob's stay.
    await tdb.db.query(sql`update calls set status = 'won', profit_on_10 = 15, xp_awarded = 64, settled_at = ${new Date(now.getTime() - HOUR)} where id = 'open1'`);
    await recompute([ann, bob]);
    const after = await versions();
    const moved = [...after].filter(([k, v]) => before.get(k) !== v).map(([k]) => k).sort();
    expect(moved.every((k) => k.endsWith(`:${ann}`))).toBe(true);
    expect(moved).toHaveLength(1 + 3 * 2);
    const [ann7] = (await tdb.db.query(sql`select settled, won from user_window_records where span = 'week' and field = '' and user_id = ${ann}`)) as Array<{ settled: number; won: number }>;
    expect(ann7).toEqual({ settled: 3, won: 2 });

    // Bob's only call is taken back to open (a correction): his rows go.
    await tdb.db.query(sql`update calls set status = 'open', profit_on_10 = null, xp_awarded = 0, settled_at = null where user_id = ${bob}`);
    await recompute([bob]);
    const left = await versions();
    expect([...left.keys()].filter((k) => k.endsWith(`:${bob}`))).toEqual([]);
    expect([...left.keys()].filter((k) => k.endsWith(`:${ann}`))).toHaveLength(1 + 3 * 2);
  });
});
