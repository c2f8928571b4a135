import { LEADERBOARD_SORTS, RIGHT_MIN_SETTLED, WEEK_MS, type LeaderboardSort } from '@pm/shared/domain';
import { boardOrder, sql } from '@pm/shared/db';
import type { Projection } from './projection.js';

/** The boards and who may be on them: one definition, in the domain (rankBoard is the rule this SQL computes). */
export { LEADERBOARD_SORTS, RIGHT_MIN_SETTLED, type LeaderboardSort };

/**
 * How deep each board is kept. The API shows at most 100 rows (docs/api.md: leaderboard `limit` 1 to
 * 100) and no record carries a rank, so ranking all 50,000 people into 200,000 rows on every batch
 * would be work nobody reads: each board keeps its top 1,000 (room for paging later).
 */
export const LEADERBOARD_DEPTH = 1000;

/**
 * How long a ranking stays readable after the next one replaced it: a leaderboard walk (the API's
 * next_cursor names the version its first page showed) has this long to finish (migration 0005).
 */
export const RANKING_KEPT_MINUTES = 15;

/**
 * leaderboard_rows: ranks 1..n per sort (n at most LEADERBOARD_DEPTH), from user_records, so a row
 * always agrees with the record.
 * - profit by profit_on_10, xp by xp: people with at least one settled call;
 * - right by right_pct: people with 5 or more settled calls;
 * - week by profit_7d: people with a call settled in the 7 days before `now` (someone who has not
 *   played this week is not on this week's board at 0);
 * - clv by mean closing-line value (highest first), brier by Brier score (lowest first): people with
 *   10 or more settled calls (and a decided call; for clv one with a closing chance);
 * - ties: settled desc, then handle (case-insensitively; handles are unique that way, so the order is total).
 * It always re-ranks every board (a change moves everyone below it), but writes only the rows
 * that changed: rows not in the new ranking move to leaderboard_retired, then the missing ones are
 * inserted, both under a new ranking version (leaderboard_versions) — made only when something
 * changed. Versions replaced more than RANKING_KEPT_MINUTES ago are pruned with the rows only they
 * could see. A rebuild starts the versions afresh (walks begun before it end with a clear 400).
 */
export const leaderboard: Projection = {
  name: 'leaderboard_rows',
  // Still 1: the rows mean what they meant (rank and person); the versions are history beside them.
  version: 1,
  handles: ['UserRecordChanged'],
  tables: ['leaderboard_rows'],
  async apply(tx, scope) {
    const weekStart = new Date(scope.now.getTime() - WEEK_MS);
    // Each board's top rows: the first entries of its index (migration 0012), read backwards, the
    // people tied on score and settled put in handle order.
    const tops = LEADERBOARD_SORTS.map((sort) => {
      const { score, eligible } = boardOrder(sort, 'r', weekStart);
      return sql`
        select ${sort}::text as sort, (row_number() over (order by score desc, settled desc, handle_key))::integer as rank, user_id
        from (
          select r.user_id, ${score} as score, r.settled, lower(u.handle) collate "C" as handle_key
          from user_records r join users u on u.id = r.user_id
          where ${eligible}
          order by score desc, r.settled desc, handle_key
          limit ${LEADERBOARD_DEPTH}
        ) top`;
    });
    if (scope.all) {
      // Input: none. Output: none; the rebuild's ranking is the first of a new history.
      await tx.query(sql`truncate leaderboard_retired`);
      await tx.query(sql`delete from leaderboard_versions`);
    }
    // Input: `now` (week window). Output: temp table new_ranks(sort, rank, user_id), the new ranking.
    await tx.query(sql`create temp table new_ranks on commit drop as ${sql.join(tops, sql` union all `)}`);
    // Input: new_ranks. Output: whether the ranking differs from leaderboard_rows at all. Two hashed
    // EXCEPTs: written as `exists (… where not exists …)`, the planner chose a nested-loop anti join
    // (it expects an EXISTS to stop early), and an unchanged ranking, where it cannot, compared every
    // row with every row: 4,000 × 4,000, 570 ms, on every batch that moved no board.
    const [{ changed }] = (await tx.query(sql`
      select exists (
               (select sort, rank, user_id from leaderboard_rows except select sort, rank, user_id from new_ranks)
               union all
               (select sort, rank, user_id from new_ranks except select sort, rank, user_id from leaderboard_rows))
          or not exists (select 1 from leaderboard_versions) as changed
    `)) as [{ changed: boolean }];
    if (changed) {
      // Input: now. Output: the new ranking version.
      const [{ version }] = (await tx.query(sql`insert into leaderboard_versions (made_at) values (${scope.now}) returning version`)) as [{ version: number }];
      // Input: new_ranks, the version. Output: none; leaderboard_rows becomes exactly new_ranks, the
      // rows it loses kept in leaderboard_retired as of this version.
      await tx.query(sql`
        with gone as (
          delete from leaderboard_rows l
          where not exists (select 1 from new_ranks n where n.sort = l.sort and n.rank = l.rank and n.user_id = l.user_id)
          returning l.sort, l.rank, l.user_id, l.from_version
        )
        insert into leaderboard_retired (sort, rank, user_id, from_version, to_version)
        select sort, rank, user_id, from_version, ${version} from gone
        on conflict (sort, rank, from_version) do nothing
      `);
      await tx.query(sql`
        insert into leaderboard_rows (sort, rank, user_id, from_version)
        select n.sort, n.rank, n.user_id, ${version} from new_ranks n
        where not exists (select 1 from leaderboard_rows l where l.sort = n.sort and l.rank = n.rank and l.user_id = n.user_id)
      `);
      // Input: now. Output: none; versions replaced more than RANKING_KEPT_MINUTES ago, and the
      // retired rows no kept version can see (a row retired at t is seen by versions below t).
      await tx.query(sql`
        delete from leaderboard_versions v
        where exists (select 1 from leaderboard_versions n
                      where n.version > v.version and n.made_at < ${scope.now}::timestamptz - make_interval(mins => ${RANKING_KEPT_MINUTES}))
      `);
      await tx.query(sql`delete from leaderboard_retired where to_version <= (select min(version) from leaderboard_versions)`);
    }
    await tx.query(sql`drop table new_ranks`);
  },
};
