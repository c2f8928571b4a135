import { sql } from '@pm/shared/db';
import type { Projection } from './projection.js';

/** The four boards (SPEC.md endpoint 9). */
export const LEADERBOARD_SORTS = ['profit', 'right', 'xp', 'week'] as const;
export type LeaderboardSort = (typeof LEADERBOARD_SORTS)[number];

/** `right` ranks only people with at least this many settled calls (SPEC.md "Limits"). */
export const RIGHT_MIN_SETTLED = 5;

/**
 * How deep each board is kept. The API shows at most 100 rows (SPEC.md: leaderboard `limit` 1 to
 * 100) and no record carries a rank, so ranking all 50,000 people into 200,000 rows on every batch
 * would be work nobody reads: each board keeps its top 1,000 (room for paging later).
 */
export const LEADERBOARD_DEPTH = 1000;

/** Per board: its score and who is on it (fixed SQL, never input). */
function board(sort: LeaderboardSort, weekStart: Date) {
  switch (sort) {
    case 'profit':
      return { score: sql`r.profit_on_10`, eligible: sql`r.settled >= 1` };
    case 'right':
      return { score: sql`r.right_pct::numeric`, eligible: sql`r.settled >= ${RIGHT_MIN_SETTLED}` };
    case 'xp':
      return { score: sql`r.xp::numeric`, eligible: sql`r.settled >= 1` };
    case 'week':
      // Who played this week is one pass over calls (a hashed set), not one probe per person.
      return {
        score: sql`r.profit_7d`,
        eligible: sql`r.settled >= 1 and r.user_id in (select user_id from calls where settled_at > ${weekStart})`,
      };
  }
}

/**
 * leaderboard_rows: ranks 1..n per sort (n at most LEADERBOARD_DEPTH), from user_records, so a row
 * always agrees with the record.
 * - profit by profit_on_10, xp by xp: people with at least one settled call;
 * - right by right_pct: people with 5 or more settled calls;
 * - week by profit_7d: people with a call settled in the 7 days before `now` (someone who has not
 *   played this week is not on this week's board at 0);
 * - ties: settled desc, then handle (case-insensitively; handles are unique that way, so the order is total).
 * It always re-ranks every board (a change moves everyone below it), but writes only the rows
 * that changed: rows not in the new ranking are deleted, then the missing ones inserted.
 */
export const leaderboard: Projection = {
  name: 'leaderboard_rows',
  version: 1,
  handles: ['UserRecordChanged'],
  tables: ['leaderboard_rows'],
  async apply(tx, scope) {
    const weekStart = new Date(scope.now.getTime() - 7 * 24 * 3600 * 1000);
    // Each board's top rows by a top-N sort over the eligible records.
    const tops = LEADERBOARD_SORTS.map((sort) => {
      const { score, eligible } = board(sort, weekStart);
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
    // Input: `now` (week window). Output: temp table new_ranks(sort, rank, user_id), the new ranking.
    await tx.query(sql`create temp table new_ranks on commit drop as ${sql.join(tops, sql` union all `)}`);
    // Input: new_ranks. Output: none; leaderboard_rows becomes exactly new_ranks.
    await tx.query(sql`
      delete from leaderboard_rows l
      where not exists (select 1 from new_ranks n where n.sort = l.sort and n.rank = l.rank and n.user_id = l.user_id)
    `);
    await tx.query(sql`
      insert into leaderboard_rows (sort, rank, user_id)
      select n.sort, n.rank, n.user_id from new_ranks n
      where not exists (select 1 from leaderboard_rows l where l.sort = n.sort and l.rank = n.rank and l.user_id = n.user_id)
    `);
    await tx.query(sql`drop table new_ranks`);
  },
};
