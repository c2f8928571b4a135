import { WEEK_MS } from '@pm/shared/domain';
import { sql } from '@pm/shared/db';
import type { Projection, Tx } from './projection.js';

type SqlFragment = ReturnType<typeof sql>;

/**
 * user_records: every figure of docs/api.md's User record the tables give (docs/design.md "Product decisions"):
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
        select c.id, c.user_id, c.status, c.profit_on_10, c.xp_awarded, c.made_at, c.settled_at, c.chance_at_call,
               m.closing_chances[c.outcome_index + 1] as closing
        -- Some people: each one's calls by index (calls_user_newest_cover, index-only). A join with the target list,
        -- or user_id = any(list), is planned as a scan of every call once the list is a few percent
        -- of the people (1,000 of 10,000 at 200k calls).
        ${scope.all ? sql`from calls c` : sql`from target t cross join lateral (select * from calls c where c.user_id = t.user_id offset 0) c`}
        left join markets m on m.id = c.market_id
      ),
      call_stats as (
        select c.user_id,
               count(*)::integer as calls,
               count(*) filter (where c.status <> 'open')::integer as settled,
               count(*) filter (where c.status = 'won')::integer as won,
               count(*) filter (where c.status = 'lost')::integer as lost,
               coalesce(sum(c.profit_on_10), 0) as profit_on_10,
               coalesce(sum(c.profit_on_10) filter (where c.settled_at > ${weekStart}), 0) as profit_7d,
               coalesce(sum(c.xp_awarded), 0)::integer as xp,
               -- Skill sums (docs/skill.md): over won and lost calls; clv where the market has a closing chance.
               coalesce(sum((c.chance_at_call - (c.status = 'won')::integer) * (c.chance_at_call - (c.status = 'won')::integer))
                          filter (where c.status in ('won', 'lost')), 0) as brier_sum,
               coalesce(sum(c.closing - c.chance_at_call) filter (where c.status in ('won', 'lost')), 0) as clv_sum,
               count(c.closing) filter (where c.status in ('won', 'lost'))::integer as clv_calls,
               max(c.settled_at) as last_settled_at
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
                                followers, following, copies, brier_sum, clv_sum, clv_calls, last_settled_at, updated_at)
      select t.user_id,
             coalesce(cs.calls, 0), coalesce(cs.settled, 0), coalesce(cs.won, 0), coalesce(cs.lost, 0),
             coalesce(round(100 * cs.won::numeric / nullif(cs.won + cs.lost, 0)), 0)::integer,
             coalesce(cs.profit_on_10, 0), coalesce(cs.profit_7d, 0),
             coalesce(cs.xp, 0) + coalesce(cx.xp, 0),
             coalesce(st.streak, 0), coalesce(fr.n, 0), coalesce(fg.n, 0), coalesce(cp.n, 0),
             coalesce(cs.brier_sum, 0), coalesce(cs.clv_sum, 0), coalesce(cs.clv_calls, 0), cs.last_settled_at,
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
        copies = excluded.copies, brier_sum = excluded.brier_sum, clv_sum = excluded.clv_sum,
        clv_calls = excluded.clv_calls, last_settled_at = excluded.last_settled_at, updated_at = excluded.updated_at
    `);
  },
};

/** A call one settlement run moved from open to won, lost or void (`settled_at = now`). */
export interface SettledCall {
  id: string;
  user_id: number;
  status: 'won' | 'lost' | 'void';
}

/**
 * A settlement's part of user_records, in the settlement's own transaction (the caller holds the
 * projections lock): the statement that settles the calls (`settleCalls`, an UPDATE … RETURNING
 * id, user_id, status, profit_on_10, xp_awarded, made_at, chance_at_call, outcome_index, market_id) runs as the first part of ONE statement
 * that moves each touched person's row by a delta, instead of re-reading all of their calls
 * (a 10,000-call market touches ~18k people and ~200k of their calls). The delta gives the
 * row `userRecords.apply` would compute, rule by rule:
 * - brier_sum, clv_sum and clv_calls grow by this run's decided calls (the skill terms, docs/skill.md);
 *   last_settled_at becomes `now` for a person with a call settled in it;
 * - settled, won, lost, profit_on_10 and xp grow by this run's calls (xp also by the combos it
 *   decided as won, `wonCombos`); right_pct follows from the new won and lost;
 * - profit_7d grows by the same profit: a call settled now is inside the window (as of the later of
 *   `now` and the row's own time, so also when the row was computed after `now`);
 * - streak: this run's calls are the person's newest settled ones (settled_at = now), so the new
 *   decided calls, newest first (made_at, then id), come before the old streak: all won → old + k,
 *   else the won ones before the first loss;
 * - a person it moves by nothing (no call of theirs settled, no combo of theirs won) keeps their
 *   row as it is, its time (updated_at) included.
 * People the delta cannot serve exactly are returned to be recomputed from their calls (the full
 * rule, `recomputeRecords`): no row yet; another settled call at or after `now` (this run's calls
 * would not be the newest); a call that left the 7-day window after their row was computed
 * (updated_at). A row whose person has a change still waiting for its projection (the write path
 * asks for one with every change) stays behind by that change only, as before: that projection
 * recomputes it whole. rules.int.test.ts holds the outcome equal to the full projection and to the
 * domain rules.
 */
export async function settleCallsWithRecords(
  tx: Tx,
  settleCalls: SqlFragment,
  wonCombos: ReadonlyArray<{ userId: number; xp: number }>,
  now: Date,
): Promise<{ calls: SettledCall[]; recompute: number[]; asOf: Date }> {
  const weekStart = new Date(now.getTime() - WEEK_MS);
  const week = sql`make_interval(secs => ${WEEK_MS / 1000})`;
  // Input: the settling statement, `now`, the window's start. Output: a row per call settled now
  // ('call') and per touched person to recompute whole ('recompute'); the other touched people's
  // rows moved by the delta. Every part sees the database as it was before the statement, so
  // `recent` holds only people with other calls settled at or after `now`, and
  // `leaving` reads calls_settled_window between a week before the oldest touched row and a week ago.
  const rows: Array<{ kind: 'call' | 'recompute' | 'as-of'; id: string | null; user_id: number; status: SettledCall['status'] | null; at: Date | null }> = await tx.query(sql`
    with settled as (${settleCalls}),
    combo_xp as (
      select user_id, sum(xp)::integer as xp
      from unnest(${wonCombos.map((c) => c.userId)}::bigint[], ${wonCombos.map((c) => c.xp)}::integer[]) as k(user_id, xp)
      group by user_id
    ),
    people as (select user_id from settled union select user_id from combo_xp),
    -- Per touched person (their calls by index, newest first): a market settling in parts gives
    -- every part the same time, so a scan of all calls settled at or after it read every call the
    -- parts before had settled, and a part's cost grew with the market.
    recent as (
      select p.user_id from people p
      cross join lateral (select 1 from calls c where c.user_id = p.user_id and c.settled_at >= ${now} limit 1) r
    ),
    rows as (select r.user_id, r.updated_at from user_records r join people p on p.user_id = r.user_id),
    leaving as (
      select distinct c.user_id
      from calls c join rows r on r.user_id = c.user_id
      where c.settled_at > (select min(updated_at) from rows) - ${week} and c.settled_at <= ${weekStart}
        and c.settled_at > r.updated_at - ${week}
    ),
    served as (
      select user_id from rows
      except select user_id from recent
      except select user_id from leaving
    ),
    mine as (
      -- Each of this run's decided calls numbered newest first per person (one pass: no join
      -- between per-person aggregates, which the planner, blind to a CTE's size, made a loop).
      select s.user_id, s.status, s.profit_on_10, s.xp_awarded,
             case when s.status in ('won', 'lost')
                  then row_number() over (partition by s.user_id, s.status in ('won', 'lost') order by s.made_at desc, s.id desc) end as n,
             -- The skill terms of a decided call (docs/skill.md); the market's closing chance of its outcome.
             case when s.status in ('won', 'lost')
                  then (s.chance_at_call - (s.status = 'won')::integer) * (s.chance_at_call - (s.status = 'won')::integer) end as brier,
             case when s.status in ('won', 'lost') then mk.closing_chances[s.outcome_index + 1] - s.chance_at_call end as clv
      from settled s join served v on v.user_id = s.user_id left join markets mk on mk.id = s.market_id
    ),
    call_delta as (
      select user_id, count(*)::integer as settled,
             count(*) filter (where status = 'won')::integer as won,
             count(*) filter (where status = 'lost')::integer as lost,
             coalesce(sum(profit_on_10), 0) as profit, coalesce(sum(xp_awarded), 0)::integer as xp,
             count(n)::integer as decided, min(n) filter (where status = 'lost') as first_lost,
             coalesce(sum(brier), 0) as brier, coalesce(sum(clv), 0) as clv, count(clv)::integer as clv_calls
      from mine group by user_id
    ),
    moved as (
      update user_records r
      set settled = r.settled + d.settled, won = r.won + d.won, lost = r.lost + d.lost,
          right_pct = coalesce(round(100 * (r.won + d.won)::numeric / nullif(r.won + d.won + r.lost + d.lost, 0)), 0)::integer,
          profit_on_10 = r.profit_on_10 + d.profit, xp = r.xp + d.xp,
          -- As of the later of the row's time and now: a backdated settlement older than the row's
          -- window (a rebuild's or a test's clock) is outside it.
          profit_7d = r.profit_7d + case when ${now}::timestamptz > r.updated_at - ${week} then d.profit else 0 end,
          streak = case when d.decided = 0 then r.streak when d.first_lost is null then r.streak + d.decided else (d.first_lost - 1)::integer end,
          brier_sum = r.brier_sum + d.brier, clv_sum = r.clv_sum + d.clv, clv_calls = r.clv_calls + d.clv_calls,
          last_settled_at = case when d.settled > 0 then greatest(r.last_settled_at, ${now}::timestamptz) else r.last_settled_at end,
          updated_at = greatest(r.updated_at, ${now})
      from (
        select v.user_id, coalesce(c.settled, 0) as settled, coalesce(c.won, 0) as won, coalesce(c.lost, 0) as lost,
               coalesce(c.profit, 0) as profit, coalesce(c.xp, 0) + coalesce(k.xp, 0) as xp,
               coalesce(c.decided, 0) as decided, c.first_lost,
               coalesce(c.brier, 0) as brier, coalesce(c.clv, 0) as clv, coalesce(c.clv_calls, 0) as clv_calls
        from served v left join call_delta c on c.user_id = v.user_id left join combo_xp k on k.user_id = v.user_id
      ) d
      -- A person this run moves by nothing (only combos decided lost, no call) keeps their row as it
      -- is, time included: it is still exact as of that time. Every row rewritten here is a new
      -- tuple in seven indexes.
      where r.user_id = d.user_id and (d.settled > 0 or d.xp <> 0)
      returning r.user_id
    )
    select 'call' as kind, id, user_id, status, null::timestamptz as at from settled
    union all
    -- Everyone the delta serves is moved (or needs no move): the others are recomputed whole.
    select 'recompute', null, p.user_id, null, null from people p where p.user_id not in (select user_id from served)
    union all
    select 'as-of', null, 0, null, max(updated_at) from rows
  `);
  const calls: SettledCall[] = [];
  const recompute: number[] = [];
  let asOf = now;
  for (const r of rows) {
    if (r.kind === 'call') calls.push({ id: r.id as string, user_id: r.user_id, status: r.status as SettledCall['status'] });
    else if (r.kind === 'recompute') recompute.push(r.user_id);
    else if (r.at !== null && r.at > asOf) asOf = r.at;
  }
  // People to recompute are computed as of the newest touched row's time when that is later than
  // `now` (a backdated settlement), so no row moves back in time.
  return { calls, recompute, asOf };
}
