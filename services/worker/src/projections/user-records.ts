import { WEEK_MS } from '@pm/shared/domain';
import { sql } from '@pm/shared/db';
import type { Projection, Tx } from './projection.js';

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
        from calls c
        -- Some people: their calls by index (a join with the target list would be planned as a scan of every call).
        ${scope.all ? sql`` : sql`where c.user_id = any(${scope.userIds}::bigint[])`}
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

/** What one settlement run changed, for `applySettlement`: the calls it settled and the combos it decided as won. */
export interface SettledNow {
  /** Calls this run moved from open to won, lost or void, all with `settled_at = now`. */
  callIds: readonly string[];
  /** Combos this run decided as won: their owner and XP. */
  wonCombos: ReadonlyArray<{ userId: number; xp: number }>;
}

/**
 * The settlement's part of user_records, applied in the settlement's own transaction (the caller
 * holds the projections lock) as a delta on each touched person's row instead of re-reading all of
 * their calls (issue 18: a 10,000-call market touches ~18k people and ~200k of their calls). The
 * result is the row `userRecords.apply` would compute, rule by rule:
 * - settled, won, lost, profit_on_10 and xp grow by this run's calls (and won combos' XP);
 *   right_pct follows from the new won and lost;
 * - profit_7d grows by the same profit: every call settled now is inside the window;
 * - streak: this run's calls are the person's newest settled ones (settled_at = now), so the new
 *   decided calls, newest first (made_at, then id), come before the old streak: all won → old + k,
 *   else the won ones before the first loss.
 * A person the delta cannot serve exactly is recomputed from their calls instead (the full rule):
 * no row yet; another settled call at or after `now` (this run's calls would not be the newest);
 * or a call that left the 7-day window between the row's computation (updated_at) and `now`.
 * A row whose person has a change still waiting for its projection (the write path asks for one
 * with every change) stays behind by that change only, as before: that projection recomputes it whole.
 * rules.int.test.ts holds the outcome equal to the full projection and to the domain rules.
 */
export async function applySettlement(tx: Tx, settled: SettledNow, now: Date): Promise<{ delta: number; recomputed: number; ms: Record<string, number> }> {
  const ms: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (step: string) => {
    const t = performance.now();
    ms[step] = Math.round(t - t0);
    t0 = t;
  };
  const callIds = [...settled.callIds];
  const comboUsers = settled.wonCombos.map((c) => c.userId);
  const comboXp = settled.wonCombos.map((c) => c.xp);
  if (callIds.length === 0 && comboUsers.length === 0) return { delta: 0, recomputed: 0, ms };
  const weekStart = new Date(now.getTime() - WEEK_MS);
  // Input: this run's call ids, won combos' owners, `now`. Output: per touched person whether they
  // have a row, how many settled calls of theirs are at or after `now` beyond this run's (index
  // calls_settled_at: only the newest settlements), and when their row was computed.
  const people: Array<{ user_id: number; updated_at: Date | null; later: boolean }> = await tx.query(sql`
    with mine as (
      select user_id, count(*) as n from calls where id = any(${callIds}::text[]) group by user_id
    ), people as (
      select user_id from mine union select unnest(${comboUsers}::bigint[])
    ), recent as (
      select user_id, count(*) as n from calls where settled_at >= ${now} group by user_id
    )
    select p.user_id, r.updated_at, coalesce(k.n, 0) > coalesce(m.n, 0) as later
    from people p
    left join user_records r on r.user_id = p.user_id
    left join mine m on m.user_id = p.user_id
    left join recent k on k.user_id = p.user_id
  `);
  lap('records_check');
  const fallback = new Set(people.filter((p) => p.updated_at === null || p.later).map((p) => p.user_id));
  const asOf = people.filter((p) => p.updated_at !== null && !p.later).map((p) => p.updated_at as Date);
  if (asOf.length > 0) {
    const oldest = new Date(Math.min(...asOf.map((d) => d.getTime())));
    // Input: the oldest row's time, `now`, the people. Output: people with a call that left the
    // 7-day window after their row was computed (a range of calls_settled_at: settlements between
    // a week before the oldest row and a week ago).
    const leaving: Array<{ user_id: number }> = await tx.query(sql`
      select distinct c.user_id
      from calls c join user_records r on r.user_id = c.user_id
      where c.settled_at > ${new Date(oldest.getTime() - WEEK_MS)} and c.settled_at <= ${weekStart}
        and c.settled_at > r.updated_at - make_interval(secs => ${WEEK_MS / 1000})
        and c.user_id = any(${people.map((p) => p.user_id)}::bigint[])
    `);
    for (const l of leaving) fallback.add(l.user_id);
    lap('records_leaving');
  }
  const recompute = [...fallback];
  // Input: this run's calls and won combos, the people to recompute instead, `now`. Output: none;
  // every other touched row moved by the delta described above.
  await tx.query(sql`
    with new_calls as (
      select c.user_id, c.status, c.profit_on_10, c.xp_awarded, c.made_at, c.id
      from calls c where c.id = any(${callIds}::text[]) and not (c.user_id = any(${recompute}::bigint[]))
    ), call_delta as (
      select user_id, count(*)::integer as settled,
             count(*) filter (where status = 'won')::integer as won,
             count(*) filter (where status = 'lost')::integer as lost,
             coalesce(sum(profit_on_10), 0) as profit, coalesce(sum(xp_awarded), 0)::integer as xp
      from new_calls group by user_id
    ), decided as (
      select user_id, status, row_number() over (partition by user_id order by made_at desc, id desc) as n
      from new_calls where status in ('won', 'lost')
    ), streaks as (
      select user_id, min(n) filter (where status = 'lost') as first_lost, count(*)::integer as k from decided group by user_id
    ), combo_delta as (
      select user_id, sum(xp)::integer as xp
      from unnest(${comboUsers}::bigint[], ${comboXp}::integer[]) as k(user_id, xp)
      where not (user_id = any(${recompute}::bigint[]))
      group by user_id
    ), delta as (
      select coalesce(c.user_id, k.user_id) as user_id, coalesce(c.settled, 0) as settled, coalesce(c.won, 0) as won,
             coalesce(c.lost, 0) as lost, coalesce(c.profit, 0) as profit, coalesce(c.xp, 0) + coalesce(k.xp, 0) as xp
      from call_delta c full join combo_delta k on k.user_id = c.user_id
    )
    update user_records r
    set settled = r.settled + d.settled, won = r.won + d.won, lost = r.lost + d.lost,
        right_pct = coalesce(round(100 * (r.won + d.won)::numeric / nullif(r.won + d.won + r.lost + d.lost, 0)), 0)::integer,
        profit_on_10 = r.profit_on_10 + d.profit, profit_7d = r.profit_7d + d.profit, xp = r.xp + d.xp,
        streak = case when s.user_id is null then r.streak when s.first_lost is null then r.streak + s.k else (s.first_lost - 1)::integer end,
        updated_at = greatest(r.updated_at, ${now})
    from delta d left join streaks s on s.user_id = d.user_id
    where r.user_id = d.user_id
  `);
  lap('records_delta');
  if (recompute.length > 0) await userRecords.apply(tx, { all: false, userIds: recompute, marketIds: [], now });
  lap('records_recompute');
  return { delta: people.length - recompute.length, recomputed: recompute.length, ms };
}
