import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEADERBOARD_SORTS, WEEK_MS } from '../domain/index.js';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { boardOrder, rankOnBoard } from './board-order.js';
import { sql } from './connection.js';

/**
 * The boards' order is indexed (migration 0012) by the expressions board-order.ts writes: with
 * 20,000 records, a person's rank on each board and each board's top rows are read through that
 * board's index, not by a pass over every record. Fails when an expression or a predicate in one
 * place changes without the other (the planner then falls back to reading the whole table).
 */

let tdb: TestDatabase;
const now = new Date('2026-09-30T12:00:00Z');
const weekStart = new Date(now.getTime() - WEEK_MS);

beforeAll(async () => {
  tdb = await createTestDatabase('board_order');
  // 20,000 people with spread-out records; a twentieth without a settled call.
  await tdb.db.query(sql`
    insert into users (handle, display_name) select 'p' || i, 'p' || i from generate_series(1, 20000) i`);
  await tdb.db.query(sql`
    insert into user_records (user_id, calls, settled, won, lost, right_pct, profit_on_10, profit_7d, xp, brier_sum, clv_sum, clv_calls, last_settled_at)
    select u.id, s, s, w, l, case when w + l = 0 then 0 else round(100.0 * w / (w + l)) end, (u.id % 997) - 400.5, (u.id % 89) - 40,
           (u.id % 613) * 10, (u.id % 37) * 0.01, ((u.id % 41) - 20) * 0.001, least(w + l, u.id % 7),
           case when s = 0 then null else ${now}::timestamptz - make_interval(hours => (u.id % 300)::integer) end
    from users u
    cross join lateral (select (u.id % 20) * 2 as s) a
    cross join lateral (select a.s / 2 as w, a.s / 3 as l) b`);
  await tdb.db.query(sql`analyze user_records`);
  await tdb.db.query(sql`analyze users`);
}, 60_000);
afterAll(async () => {
  await tdb?.drop();
});

async function plan(query: ReturnType<typeof sql>): Promise<string> {
  const rows = (await tdb.db.query(sql`explain ${query}`)) as Array<{ 'QUERY PLAN': string }>;
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe('the boards are read in their index order', () => {
  it.each(LEADERBOARD_SORTS.map((s) => [s]))("a person's rank on %s counts one range of its index", async (sort) => {
    const me = sql`with person as (select u.id, lower(u.handle) collate "C" as handle_key from users u where u.handle = 'p12345'),
      me as materialized (select r.*, p.handle_key from user_records r join person p on p.id = r.user_id)`;
    const text = await plan(sql`${me} select ${rankOnBoard(sort, weekStart)}`);
    expect(text).toContain(`user_records_board_${sort}`);
    expect(text).not.toMatch(/Seq Scan on user_records/);
  });

  it.each(LEADERBOARD_SORTS.map((s) => [s]))('the top rows of %s are the first entries of its index', async (sort) => {
    const { score, eligible } = boardOrder(sort, 'r', weekStart);
    const text = await plan(sql`
      select r.user_id, ${score} as score, r.settled, lower(u.handle) collate "C" as handle_key
      from user_records r join users u on u.id = r.user_id
      where ${eligible}
      order by score desc, r.settled desc, handle_key
      limit 1000`);
    expect(text).toContain(`user_records_board_${sort}`);
    expect(text).not.toMatch(/Seq Scan on user_records/);
  });
});
