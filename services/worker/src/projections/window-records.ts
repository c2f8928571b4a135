import { WINDOW_MS } from '@pm/shared/domain';
import { sql } from '@pm/shared/db';
import { AGGREGATES } from './field-records.js';
import type { Projection, Tx } from './projection.js';

/**
 * user_window_records: a person's sums over the calls settled in the last day, week or month
 * (`span`), per field — '' every market, `c:<category>`, `l:<league>` — which the window boards rank
 * (docs/skill.md): the same columns as user_field_records. The rows of a span hold exactly the calls
 * settled after its `since` (user_window_edges; no row until the first rebuild: no call), which
 * makes every change exact and cheap:
 * - a settlement adds its calls (settled_at = now, after since) to their people's rows of every
 *   span and of each field of the market (`settleWindowRecords`, in its transaction);
 * - the upkeep (`ageWindowRecords`, a job every minute) moves since up to now − the window, taking
 *   out of the rows the calls settled in between, and deletes the rows left with no call;
 * - `apply` recomputes people whole (or everything, with since = now − the window: a rebuild).
 * The API ranks a span's rows corrected by the few calls between since and the board's instant
 * (services/api/src/pages/skill-pages.ts), so a board is never stale by the upkeep's period.
 * rules.int.test.ts holds this SQL equal to the domain's windowRecords on random data.
 */

export const SPANS = ['day', 'week', 'month'] as const;
export type Span = (typeof SPANS)[number];

/** The three field keys of a call's event `e`: every market, its category, its league (where it has one). */
const FIELDS = sql`cross join lateral (values (''), ('c:' || e.category), ('l:' || e.league)) f(field)`;

const COLUMNS = sql`span, field, user_id, settled, won, lost, profit_on_10, xp, brier_sum, clv_sum, clv_calls`;

export const windowRecords: Projection = {
  name: 'user_window_records',
  version: 1,
  handles: ['CallSettled'],
  tables: ['user_window_records'],
  async apply(tx, scope) {
    if (scope.all) {
      // The rebuild (the table was emptied): every span starts at now − its window.
      await tx.query(sql`
        insert into user_window_edges (span, since)
        select * from unnest(${[...SPANS]}::text[], ${SPANS.map((s) => new Date(scope.now.getTime() - WINDOW_MS[s]))}::timestamptz[])
        on conflict (span) do update set since = excluded.since`);
    } else {
      await tx.query(sql`delete from user_window_records where user_id = any(${scope.userIds}::bigint[])`);
    }
    // Input: the target users (all, or an id list), each span's since. Output: their rows, from
    // their calls settled after since.
    const which = scope.all ? sql`true` : sql`c.user_id = any(${scope.userIds}::bigint[])`;
    await tx.query(sql`
      insert into user_window_records (${COLUMNS})
      select s.span, f.field, c.user_id, ${AGGREGATES}
      from user_window_edges s
      join calls c on c.settled_at > s.since
      join markets m on m.id = c.market_id join events e on e.id = m.event_id ${FIELDS}
      where ${which} and f.field is not null
      group by s.span, f.field, c.user_id`);
  },
};

/**
 * A settlement's part of user_window_records, in its transaction (under the projections lock, so
 * no upkeep moves since meanwhile): the calls of `marketId` it settled (`settled_at = now`, index
 * calls_market_newest) added to their people's rows of every span whose since is before now, in
 * each field of the market. Input: market id, the settlement's time. Output: none.
 */
export async function settleWindowRecords(tx: Tx, marketId: string, now: Date): Promise<void> {
  await tx.query(sql`
    with sums as (
      select f.field, c.user_id, ${AGGREGATES}
      from calls c join markets m on m.id = c.market_id join events e on e.id = m.event_id ${FIELDS}
      where c.market_id = ${marketId} and c.settled_at = ${now} and f.field is not null
      group by f.field, c.user_id
    )
    insert into user_window_records as r (${COLUMNS})
    select s.span, x.field, x.user_id, x.settled, x.won, x.lost, x.profit_on_10, x.xp, x.brier_sum, x.clv_sum, x.clv_calls
    from sums x join user_window_edges s on s.since < ${now}
    on conflict (span, field, user_id) do update set
      settled = r.settled + excluded.settled, won = r.won + excluded.won, lost = r.lost + excluded.lost,
      profit_on_10 = r.profit_on_10 + excluded.profit_on_10, xp = r.xp + excluded.xp,
      brier_sum = r.brier_sum + excluded.brier_sum, clv_sum = r.clv_sum + excluded.clv_sum, clv_calls = r.clv_calls + excluded.clv_calls`);
}

/**
 * The upkeep, in a transaction holding the projections lock: for each span, the calls settled
 * between its since and `now` − its window (index calls_settled_window) taken out of their rows,
 * the rows left without a call deleted, and since moved to `now` − the window. Never moves since
 * back (a late clock), nor before the first rebuild (since 'infinity'). Output: the calls taken out.
 */
export async function ageWindowRecords(tx: Tx, now: Date): Promise<{ aged: number }> {
  let aged = 0;
  for (const span of SPANS) {
    const to = new Date(now.getTime() - WINDOW_MS[span]);
    const [edge] = (await tx.query(sql`select since < ${to}::timestamptz as due from user_window_edges where span = ${span} for update`)) as Array<{ due: boolean }>;
    if (edge?.due !== true) continue;
    const emptied = (await tx.query(sql`
      with leaving as (
        select f.field, c.user_id, ${AGGREGATES}
        from calls c join markets m on m.id = c.market_id join events e on e.id = m.event_id ${FIELDS}
        where c.settled_at > (select since from user_window_edges where span = ${span}) and c.settled_at <= ${to} and f.field is not null
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
    const [gone] = emptied;
    if (gone !== undefined && gone.users.length > 0) {
      await tx.query(sql`
        delete from user_window_records r
        using unnest(${gone.fields}::text[], ${gone.users}::bigint[]) as g(field, user_id)
        where r.span = ${span} and r.field = g.field and r.user_id = g.user_id`);
    }
    await tx.query(sql`update user_window_edges set since = ${to} where span = ${span}`);
    aged += gone?.aged ?? 0;
  }
  return { aged };
}
