import { sql, type SQLQuery } from '../db/connection.js';

/**
 * The tape's prints in a window, as rows (series, at_ms, price, size) of `trade_prints`: the view
 * itself, with the bounds its packed rows allow. A row of the tape (migration 0014) holds one
 * series' batch within one UTC day, from `lo` to `hi`, so a print in [from, to) is in a row with
 * hi ≥ from and lo < to, and lo ≥ from − a day: the bound that lets the planner skip every older day
 * partition. Through the view alone, a window would unpack the whole retention (30 days) to find
 * an hour. inputs: Unix ms bounds (SQL expressions), optionally the series. outputs: a subquery.
 */
export function printsBetween(fromMs: SQLQuery, toMs: SQLQuery, series?: readonly number[]): SQLQuery {
  return sql`(
    select t.series, t.lo + u.off::bigint as at_ms, u.px::double precision / 1000000 as price, abs(u.sz) as size
    from trades t cross join lateral unnest(t.off, t.px, t.sz) as u(off, px, sz)
    where t.lo >= ${fromMs} - 86400000 and t.lo < ${toMs} and t.hi >= ${fromMs}
      ${series === undefined ? sql`` : sql`and t.series = any(${[...series]}::int[])`}
      and t.lo + u.off::bigint >= ${fromMs} and t.lo + u.off::bigint < ${toMs}
  )`;
}
