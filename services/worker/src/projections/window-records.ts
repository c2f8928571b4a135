import { WINDOW_MS } from '@pm/shared/domain';
import { sql } from '@pm/shared/db';
import { addSums, AGGREGATES, replacePeopleRows } from './field-records.js';
import type { Projection, Tx } from './projection.js';

/**
 * user_window_records: a person's sums over the calls settled in the last day, week or month
 * (`span`), per field — '' every market, `c:<category>`, `l:<league>` — which the window boards rank
 * (docs/skill.md): the same columns as user_field_records. The rows of a span hold exactly the calls
 * settled in (since, through] (user_window_edges; no row until the first rebuild: no call), which
 * makes every change exact and cheap:
 * - the upkeep (`upkeepWindowRecords`, a job every minute) adds the calls settled after `through`
 *   and takes out those settled up to now − the window, deletes the rows left with no call, and
 *   moves through to now and since to now − the window;
 * - a settlement adds its calls in its transaction only when its time is at or before `through`
 *   (a late clock: the upkeep already passed it); else they are the next upkeep's — adding them
 *   there cost a 10,000-call settlement ~0.85 s of its transaction (90k row upserts);
 * - `apply` recomputes people whole (or everything, through = now: a rebuild).
 * The API ranks a span's rows corrected by the calls between the rows' range and the board's
 * window (services/api/src/pages/skill-pages.ts): a board is exact, never an upkeep period stale.
 * rules.int.test.ts holds this SQL equal to the domain's windowRecords on random data.
 */

export const SPANS = ['day', 'week', 'month'] as const;
export type Span = (typeof SPANS)[number];

/** The three field keys of a call's event `e`: every market, its category, its league (where it has one). */
const FIELDS = sql`cross join lateral (values (''), ('c:' || e.category), ('l:' || e.league)) f(field)`;

const COLUMNS = sql`span, field, user_id, settled, won, lost, profit_on_10, xp, brier_sum, clv_sum, clv_calls`;

const ADD = addSums(sql`span, field, user_id`);

export const windowRecords: Projection = {
  name: 'user_window_records',
  version: 1,
  handles: ['CallSettled'],
  tables: ['user_window_records'],
  async apply(tx, scope) {
    if (scope.all) {
      // The rebuild (the table was emptied): every span is its window as of now.
      await tx.query(sql`
        insert into user_window_edges (span, since, through)
        select s.span, s.since, ${scope.now}::timestamptz
        from unnest(${[...SPANS]}::text[], ${SPANS.map((s) => new Date(scope.now.getTime() - WINDOW_MS[s]))}::timestamptz[]) as s(span, since)
        on conflict (span) do update set since = excluded.since, through = excluded.through`);
    }
    // Input: the target users (all, or an id list), each span's range. Output: their rows, from
    // their calls settled in it.
    const which = scope.all ? sql`true` : sql`c.user_id = any(${scope.userIds}::bigint[])`;
    const fresh = sql`
      select s.span, f.field, c.user_id, ${AGGREGATES}
      from user_window_edges s
      join calls c on c.settled_at > s.since and c.settled_at <= s.through
      join markets m on m.id = c.market_id join events e on e.id = m.event_id ${FIELDS}
      where ${which} and f.field is not null
      group by s.span, f.field, c.user_id`;
    if (scope.all) {
      await tx.query(sql`insert into user_window_records (${COLUMNS}) ${fresh}`);
      return;
    }
    await replacePeopleRows(tx, { table: 'user_window_records', key: ['span', 'field', 'user_id'], columns: COLUMNS, fresh, userIds: scope.userIds });
  },
};

/**
 * A settlement's part of user_window_records, in its transaction (under the projections lock, so
 * no upkeep moves the ranges meanwhile): when its time is inside a span's range — only with a clock
 * behind the upkeep's — the calls of `marketId` it settled (`settled_at = now`) added to their
 * people's rows of that span, in each field of the market. Otherwise nothing: the next upkeep adds
 * them. Input: market id, the settlement's time, and for a part of a settlement the predicate on
 * `c` naming its people (the parts of one market share its time). Output: none.
 */
export async function settleWindowRecords(tx: Tx, marketId: string, now: Date, people: ReturnType<typeof sql> = sql`true`): Promise<void> {
  await tx.query(sql`
    with spans as (select span from user_window_edges where since < ${now} and through >= ${now}),
    sums as (
      select f.field, c.user_id, ${AGGREGATES}
      from calls c join markets m on m.id = c.market_id join events e on e.id = m.event_id ${FIELDS}
      where exists (select 1 from spans) and c.market_id = ${marketId} and c.settled_at = ${now} and ${people} and f.field is not null
      group by f.field, c.user_id
    )
    insert into user_window_records as r (${COLUMNS})
    select s.span, x.field, x.user_id, x.settled, x.won, x.lost, x.profit_on_10, x.xp, x.brier_sum, x.clv_sum, x.clv_calls
    from sums x cross join spans s
    ${ADD}`);
}

/**
 * The upkeep, in a transaction holding the projections lock: for each span, the calls settled
 * after `through` (up to `now`) added to their rows, the calls settled between since and `now` −
 * the window taken out, the rows left without a call deleted, and the range moved to
 * (`now` − the window, `now`]. Never moves a range back (a late clock), and does nothing before the
 * first rebuild (no range). Index calls_settled_window for both ranges. Output: calls added and
 * taken out (counted in the every-field rows).
 */
export async function upkeepWindowRecords(tx: Tx, now: Date): Promise<{ added: number; aged: number }> {
  let added = 0;
  let aged = 0;
  for (const span of SPANS) {
    const to = new Date(now.getTime() - WINDOW_MS[span]);
    const edge = sql`(select since, through from user_window_edges where span = ${span})`;
    const [due] = (await tx.query(sql`
      select through < ${now}::timestamptz as add, since < ${to}::timestamptz as age from user_window_edges where span = ${span} for update`)) as Array<{ add: boolean; age: boolean }>;
    if (due === undefined) continue;
    if (due.add) {
      // The insert runs though nothing reads it: Postgres runs every data-modifying WITH once.
      const [n] = (await tx.query(sql`
        with sums as (
          select f.field, c.user_id, ${AGGREGATES}
          from ${edge} s join calls c on c.settled_at > greatest(s.through, s.since) and c.settled_at <= ${now}
          join markets m on m.id = c.market_id join events e on e.id = m.event_id ${FIELDS}
          where f.field is not null
          group by f.field, c.user_id
        ),
        moved as (
          insert into user_window_records as r (${COLUMNS})
          select ${span}, field, user_id, settled, won, lost, profit_on_10, xp, brier_sum, clv_sum, clv_calls from sums
          ${ADD}
        )
        select coalesce((select sum(settled) from sums where field = ''), 0)::integer as calls`)) as Array<{ calls: number }>;
      added += n?.calls ?? 0;
      await tx.query(sql`update user_window_edges set through = ${now} where span = ${span}`);
    }
    if (due.age) {
      const [gone] = (await tx.query(sql`
        with leaving as (
          select f.field, c.user_id, ${AGGREGATES}
          from ${edge} s join calls c on c.settled_at > s.since and c.settled_at <= least(${to}, s.through)
          join markets m on m.id = c.market_id join events e on e.id = m.event_id ${FIELDS}
          where f.field is not null
          group by f.field, c.user_id
        ),
        moved as (
          update user_window_records r set
            settled = r.settled - a.settled, won = r.won - a.won, lost = r.lost - a.lost,
            profit_on_10 = r.profit_on_10 - a.profit_on_10, xp = r.xp - a.xp,
            brier_sum = r.brier_sum - a.brier_sum, clv_sum = r.clv_sum - a.clv_sum, clv_calls = r.clv_calls - a.clv_calls
          from leaving a
          where r.span = ${span} and r.field = a.field and r.user_id = a.user_id
          returning r.field, r.user_id, r.settled, a.settled as left_calls
        )
        select coalesce(array_agg(field) filter (where settled <= 0), '{}') as fields,
               coalesce(array_agg(user_id) filter (where settled <= 0), '{}') as users,
               coalesce(sum(left_calls) filter (where field = ''), 0)::integer as aged
        from moved`)) as Array<{ fields: string[]; users: number[]; aged: number }>;
      if (gone !== undefined && gone.users.length > 0) {
        await tx.query(sql`
          delete from user_window_records r
          using unnest(${gone.fields}::text[], ${gone.users}::bigint[]) as g(field, user_id)
          where r.span = ${span} and r.field = g.field and r.user_id = g.user_id`);
      }
      await tx.query(sql`update user_window_edges set since = ${to} where span = ${span}`);
      aged += gone?.aged ?? 0;
    }
  }
  return { added, aged };
}
