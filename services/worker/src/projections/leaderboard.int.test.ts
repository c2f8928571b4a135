import { describe, expect, it } from 'vitest';
import { sql } from '@pm/shared/db';
import { useFreshStores } from '../testing/stores.js';
import { projectChanges } from './run.js';

/**
 * The re-rank behind every settlement and projection batch makes a new ranking version only when a
 * board changed: an unchanged ranking keeps its version (a leaderboard walk pinned to it, and every
 * reader of its rows, sees nothing move), a changed one gets a new version with the new order.
 */
const stores = useFreshStores('leaderboard');

async function person(handle: string, record: { settled: number; won: number; lost: number; profit: string; xp: number }): Promise<number> {
  const { db } = stores.tdb;
  const [{ id }] = (await db.query(sql`insert into users (handle, display_name) values (${handle}, ${handle}) returning id`)) as [{ id: number }];
  await db.query(sql`
    insert into user_records (user_id, calls, settled, won, lost, right_pct, profit_on_10, profit_7d, xp, streak, followers, following, copies, updated_at)
    values (${id}, ${record.settled}, ${record.settled}, ${record.won}, ${record.lost}, ${Math.round((100 * record.won) / Math.max(1, record.won + record.lost))},
            ${record.profit}, 0, ${record.xp}, 0, 0, 0, 0, now())`);
  return id;
}

async function state(): Promise<{ versions: number; latest: number | null; profit: number[] }> {
  const { db } = stores.tdb;
  const [v] = (await db.query(sql`select count(*)::int as n, max(version)::int as latest from leaderboard_versions`)) as [{ n: number; latest: number | null }];
  const rows: Array<{ user_id: number }> = await db.query(sql`select user_id from leaderboard_rows where sort = 'profit' order by rank`);
  return { versions: v.n, latest: v.latest, profit: rows.map((r) => r.user_id) };
}

describe('leaderboard re-rank', () => {
  it('keeps the ranking version when no board changed, and makes a new one when one did', async () => {
    const { db } = stores.tdb;
    const ann = await person('ann', { settled: 6, won: 4, lost: 2, profit: '12.50', xp: 120 });
    const ben = await person('ben', { settled: 5, won: 2, lost: 3, profit: '-3.00', xp: 40 });
    const now = () => new Date();

    await projectChanges(db, { userIds: [], marketIds: [] }, now());
    const first = await state();
    expect(first.profit).toEqual([ann, ben]);
    expect(first.latest).not.toBeNull();

    // Nothing moved: the same ranking, the same version, no version added.
    await projectChanges(db, { userIds: [], marketIds: [] }, now());
    await projectChanges(db, { userIds: [], marketIds: [] }, now());
    expect(await state()).toEqual(first);

    // Ben overtakes Ann on profit: a new version, and the board in the new order.
    await db.query(sql`update user_records set profit_on_10 = 20 where user_id = ${ben}`);
    await projectChanges(db, { userIds: [], marketIds: [] }, now());
    const second = await state();
    expect(second.profit).toEqual([ben, ann]);
    expect(second.latest).toBeGreaterThan(first.latest!);
  });
});
