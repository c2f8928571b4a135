import { WEEK_MS } from '@pm/shared/domain';
import { sql } from '@pm/shared/db';
import type { Projection } from './projection.js';

/**
 * user_records: every figure of SPEC.md's User record the tables give (DESIGN.md "Product decisions"):
 * - calls; settled = won + lost + void; won; lost; right_pct = round(100 × won ÷ (won + lost)), 0 without;
 * - profit_on_10 = sum over settled calls; profit_7d = over calls settled in the 7 days before `now`;
 * - xp = XP of won calls + XP of won combos;
 * - streak = won calls counting back from the most recently settled non-void call (voids skipped),
 *   ordered by settled_at, then made_at, then id so that calls settled together have one order;
 * - followers, following; copies = calls by OTHERS whose copied_from is one of this user's calls.
 * Money is summed as numeric, never as float. The rules are defined once in shared/src/domain
 * (money.ts, records.ts); rules.int.test.ts holds this SQL equal to them on random data.
 */
export const userRecords: Projection = {
  name: 'user_records',
  version: 1,
  handles: ['UserCreated', 'UserFollowed', 'UserUnfollowed', 'CallRecorded', 'CallCopied', 'CallSettled', 'ComboSettled'],
  tables: ['user_records'],
  async apply(tx, scope) {
    const target = scope.all ? sql`select id as user_id from users` : sql`select id as user_id from users where id = any(${scope.userIds}::bigint[])`;
    const weekStart = new Date(scope.now.getTime() - WEEK_MS);
    // Input: the target users (all, or an id list), `now` and the start of the 7-day window.
    // Output: one upserted user_records row per target user (zeros for a user without calls).
    await tx.query(sql`
      with target as (${target}),
      -- The target users' calls, read once (not once per figure).
      user_calls as materialized (
        select c.id, c.user_id, c.status, c.profit_on_10, c.xp_awarded, c.made_at, c.settled_at
        -- Some people: each one's calls by index (calls_user_newest_cover, index-only). A join with the target list,
        -- or user_id = any(list), is planned as a scan of every call once the list is a few percent
        -- of the people (1,000 of 10,000 at 200k calls).
        ${scope.all ? sql`from calls c` : sql`from target t cross join lateral (select * from calls c where c.user_id = t.user_id offset 0) c`}
      ),
      call_stats as (
        select c.user_id,
               count(*)::integer as calls,
               count(*) filter (where c.status <> 'open')::integer as settled,
               count(*) filter (where c.status = 'won')::integer as won,
               count(*) filter (where c.status = 'lost')::integer as lost,
               coalesce(sum(c.profit_on_10), 0) as profit_on_10,
               coalesce(sum(c.profit_on_10) filter (where c.settled_at > ${weekStart}), 0) as profit_7d,
               coalesce(sum(c.xp_awarded), 0)::integer as xp
        from user_calls c
        group by c.user_id
      ),
      combo_xp as (
        select k.user_id, sum(k.xp_awarded)::integer as xp
        from combos k join target t on t.user_id = k.user_id
        where k.status = 'won'
        group by k.user_id
      ),
      decided as (
        select c.user_id, c.status,
               row_number() over (partition by c.user_id order by c.settled_at desc, c.made_at desc, c.id desc) as n
        from user_calls c
        where c.status in ('won', 'lost')
      ),
      streaks as (
        select user_id, coalesce(min(n) filter (where status = 'lost') - 1, count(*))::integer as streak
        from decided group by user_id
      ),
      followers as (
        select f.followee_id as user_id, count(*)::integer as n
        from follows f join target t on t.user_id = f.followee_id group by f.followee_id
      ),
      following as (
        select f.follower_id as user_id, count(*)::integer as n
        from follows f join target t on t.user_id = f.follower_id group by f.follower_id
      ),
      copies as (
        select o.user_id, count(*)::integer as n
        from user_calls o
        join calls d on d.copied_from = o.id and d.user_id <> o.user_id
        group by o.user_id
      )
      insert into user_records (user_id, calls, settled, won, lost, right_pct, profit_on_10, profit_7d, xp, streak,
                                followers, following, copies, updated_at)
      select t.user_id,
             coalesce(cs.calls, 0), coalesce(cs.settled, 0), coalesce(cs.won, 0), coalesce(cs.lost, 0),
             coalesce(round(100 * cs.won::numeric / nullif(cs.won + cs.lost, 0)), 0)::integer,
             coalesce(cs.profit_on_10, 0), coalesce(cs.profit_7d, 0),
             coalesce(cs.xp, 0) + coalesce(cx.xp, 0),
             coalesce(st.streak, 0), coalesce(fr.n, 0), coalesce(fg.n, 0), coalesce(cp.n, 0),
             ${scope.now}
      from target t
      left join call_stats cs on cs.user_id = t.user_id
      left join combo_xp cx on cx.user_id = t.user_id
      left join streaks st on st.user_id = t.user_id
      left join followers fr on fr.user_id = t.user_id
      left join following fg on fg.user_id = t.user_id
      left join copies cp on cp.user_id = t.user_id
      on conflict (user_id) do update set
        calls = excluded.calls, settled = excluded.settled, won = excluded.won, lost = excluded.lost,
        right_pct = excluded.right_pct, profit_on_10 = excluded.profit_on_10, profit_7d = excluded.profit_7d,
        xp = excluded.xp, streak = excluded.streak, followers = excluded.followers, following = excluded.following,
        copies = excluded.copies, updated_at = excluded.updated_at
    `);
  },
};
