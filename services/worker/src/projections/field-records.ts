import { FIELD_RECORDS_THROUGH, sql } from '@pm/shared/db';
import type { Projection, Tx } from './projection.js';

type Fragment = ReturnType<typeof sql>;

/**
 * user_field_records: a person's all-time record within one field of markets — `c:<category>` and
 * `l:<league>` of the call's event (docs/skill.md) — which the category and league boards rank and
 * a person's `?category=` figures read: settled (won + lost + void), won, lost, profit_on_10 and
 * XP of their settled calls there, and the skill sums (brier_sum over won and lost calls; clv_sum and
 * clv_calls over those whose market has a closing chance). Only settled calls count, so only a
 * settlement changes a row. The rows count exactly the calls settled up to `through`
 * (user_field_edges), as a window span's rows count theirs (window-records.ts):
 * - the upkeep (`upkeepFieldRecords`, with the window upkeep every minute) adds the calls settled
 *   after `through` and moves it to now;
 * - a settlement adds its calls in its transaction only when its time is at or before `through` (a
 *   late clock: the upkeep already passed it); else they are the next upkeep's — adding them there
 *   cost a 10,000-call settlement ~0.3 s of its transaction (20,000 row upserts);
 * - `apply` recomputes people whole from their calls settled up to `through` (a rebuild: everything,
 *   through = now).
 * The API ranks the rows corrected by the calls between `through` and the board's instant
 * (services/api/src/pages/skill-pages.ts): a board is exact, never an upkeep period stale.
 * rules.int.test.ts holds this SQL equal to the domain's windowRecords on random data.
 */

/** Per settled call `c` joined with its market `m` and event `e`: the rows' aggregate columns. */
export const AGGREGATES = sql`
  count(*)::integer as settled,
  count(*) filter (where c.status = 'won')::integer as won,
  count(*) filter (where c.status = 'lost')::integer as lost,
  coalesce(sum(c.profit_on_10), 0) as profit_on_10,
  coalesce(sum(c.xp_awarded), 0)::integer as xp,
  coalesce(sum((c.chance_at_call - (c.status = 'won')::integer) * (c.chance_at_call - (c.status = 'won')::integer))
             filter (where c.status in ('won', 'lost')), 0) as brier_sum,
  coalesce(sum(m.closing_chances[c.outcome_index + 1] - c.chance_at_call) filter (where c.status in ('won', 'lost')), 0) as clv_sum,
  count(m.closing_chances[c.outcome_index + 1]) filter (where c.status in ('won', 'lost'))::integer as clv_calls`;

/** The two field keys of a call's event `e` (the league one only where it has a league). */
const FIELDS = sql`cross join lateral (values ('c:' || e.category), ('l:' || e.league)) f(field)`;

/**
 * inputs: which calls (a condition on `c`, calls). outputs: their sums per person and field of the
 * call's event: user_id, field and the rows' aggregate columns.
 */
const sumsByField = (which: Fragment) => sql`
  select c.user_id, f.field, ${AGGREGATES}
  from calls c join markets m on m.id = c.market_id join events e on e.id = m.event_id ${FIELDS}
  where ${which} and f.field is not null
  group by c.user_id, f.field`;

const FIELD_COLUMNS = sql`user_id, field, settled, won, lost, profit_on_10, xp, brier_sum, clv_sum, clv_calls`;

/**
 * inputs: a sums table's key (its conflict target). outputs: the tail of an insert `as r` into it
 * (user_field_records, user_window_records) that adds `excluded` (rows of AGGREGATES' sums) into
 * the existing rows.
 */
export const addSums = (key: Fragment) => sql`
    on conflict (${key}) do update set
      settled = r.settled + excluded.settled, won = r.won + excluded.won, lost = r.lost + excluded.lost,
      profit_on_10 = r.profit_on_10 + excluded.profit_on_10, xp = r.xp + excluded.xp,
      brier_sum = r.brier_sum + excluded.brier_sum, clv_sum = r.clv_sum + excluded.clv_sum, clv_calls = r.clv_calls + excluded.clv_calls`;

const ADD = addSums(sql`field, user_id`);

export const fieldRecords: Projection = {
  name: 'user_field_records',
  version: 1,
  handles: ['CallSettled'],
  tables: ['user_field_records'],
  async apply(tx, scope) {
    if (scope.all) {
      // The rebuild (the table was emptied): the rows count every call settled until now.
      await tx.query(sql`
        insert into user_field_edges (one, through) values (true, ${scope.now})
        on conflict (one) do update set through = excluded.through`);
    }
    // Input: the target users (all, or an id list), the edge. Output: their rows, recomputed from
    // their calls settled up to it.
    const which = scope.all ? sql`true` : sql`c.user_id = any(${scope.userIds}::bigint[])`;
    const fresh = sumsByField(sql`c.status <> 'open' and c.settled_at <= ${FIELD_RECORDS_THROUGH} and ${which}`);
    if (scope.all) {
      await tx.query(sql`insert into user_field_records (${FIELD_COLUMNS}) ${fresh}`);
      return;
    }
    await replacePeopleRows(tx, { table: 'user_field_records', key: ['field', 'user_id'], columns: FIELD_COLUMNS, fresh, userIds: scope.userIds });
  },
};

/**
 * People's rows of a sums table (user_field_records, user_window_records) recomputed whole, writing
 * only what differs: rows the recomputation (`fresh`, the table's columns in `columns` order) no
 * longer has deleted, new ones inserted, and an existing one updated only where one of its sums
 * changed. A person is projected on every call they make, and an open call changes none of these
 * rows: rewriting them all each time left the tables mostly dead rows under a busy crowd.
 */
export async function replacePeopleRows(
  tx: Tx,
  q: { table: 'user_field_records' | 'user_window_records'; key: readonly string[]; columns: Fragment; fresh: Fragment; userIds: readonly number[] },
): Promise<void> {
  const table = sql.ident(q.table);
  const same = sql.join(q.key.map((k) => sql`x.${sql.ident(k)} = r.${sql.ident(k)}`), sql` and `);
  await tx.query(sql`
    with fresh as (${q.fresh}),
    gone as (
      delete from ${table} r
      where r.user_id = any(${[...q.userIds]}::bigint[]) and not exists (select 1 from fresh x where ${same})
    )
    insert into ${table} as r (${q.columns}) select * from fresh
    on conflict (${sql.join(q.key.map((k) => sql.ident(k)), sql`, `)}) do update set
      settled = excluded.settled, won = excluded.won, lost = excluded.lost, profit_on_10 = excluded.profit_on_10, xp = excluded.xp,
      brier_sum = excluded.brier_sum, clv_sum = excluded.clv_sum, clv_calls = excluded.clv_calls
    where (r.settled, r.won, r.lost, r.profit_on_10, r.xp, r.brier_sum, r.clv_sum, r.clv_calls)
          is distinct from (excluded.settled, excluded.won, excluded.lost, excluded.profit_on_10, excluded.xp, excluded.brier_sum, excluded.clv_sum, excluded.clv_calls)`);
}

/**
 * A settlement's part of user_field_records, in its transaction (under the projections lock, so no
 * upkeep moves the edge meanwhile): when its time is at or before the edge — only with a clock
 * behind the upkeep's — the calls of `marketId` it settled (`settled_at = now`) added to their
 * people's rows of the market's fields. Otherwise nothing: the next upkeep adds them.
 * Input: market id, the settlement's time, and for a part of a settlement the predicate on `c`
 * naming its people (the parts of one market share its time). Output: none.
 */
export async function settleFieldRecords(tx: Tx, marketId: string, now: Date, people: Fragment = sql`true`): Promise<void> {
  await tx.query(sql`
    insert into user_field_records as r (${FIELD_COLUMNS})
    ${sumsByField(sql`${now}::timestamptz <= ${FIELD_RECORDS_THROUGH} and c.market_id = ${marketId} and c.settled_at = ${now} and ${people}`)}
    ${ADD}`);
}

/**
 * The upkeep, in a transaction holding the projections lock: the calls settled after the edge (up
 * to `now`) added to their people's rows, and the edge moved to `now`. Never moves it back (a late
 * clock). Index calls_settled_window. Input: the clock. Output: calls added.
 */
export async function upkeepFieldRecords(tx: Tx, now: Date): Promise<{ added: number }> {
  // The edge is compared and used in SQL (microseconds), never through a JS Date (milliseconds),
  // which would count a call settled in the edge's last millisecond twice.
  const [edge] = (await tx.query(sql`select through < ${now}::timestamptz as due from user_field_edges for update`)) as Array<{ due: boolean }>;
  if (edge === undefined || !edge.due) return { added: 0 };
  const [n] = (await tx.query(sql`
    with sums as (${sumsByField(sql`c.settled_at > (select through from user_field_edges) and c.settled_at <= ${now}`)}),
    moved as (
      insert into user_field_records as r (${FIELD_COLUMNS})
      select ${FIELD_COLUMNS} from sums
      ${ADD}
    )
    select coalesce((select sum(settled) from sums where field like 'c:%'), 0)::integer as calls`)) as Array<{ calls: number }>;
  await tx.query(sql`update user_field_edges set through = ${now}`);
  return { added: n?.calls ?? 0 };
}
