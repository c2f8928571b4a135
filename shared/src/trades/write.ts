import { sql, type Db, type Queryable } from '../db/connection.js';
import type { StoredTrade } from './identity.js';

/**
 * The tape's writer (docs/design.md "Trades"): each call records a batch of prints, every one exactly once.
 *
 * Identity without a unique index: in one transaction the writer takes an advisory lock per series
 * of the batch (ascending, so two writers never wait on each other in a cycle), reads the keys
 * already stored in that series' rows whose time span meets the batch's, and inserts only the
 * prints not among them, as one packed row per series and UTC day. Two ingestors during a handover,
 * a reconnect's repeat hours later or a retried write thus find the earlier rows and add nothing;
 * a print repeated within the batch itself is taken once. `trade_series` (when each series' data
 * begins) is moved in the same transaction.
 */

export interface SeriesTrade extends StoredTrade {
  series: number;
}

const DAY_MS = 86_400_000;
/** Namespace of the per-series advisory locks (the two-integer form: its own key space). */
const TRADE_LOCK = 0x7472_6164; // 'trad'
const NO_PARTITION = '23514';

export const dayOfMs = (ms: number) => Math.floor(ms / DAY_MS);

/** Makes the partitions of the days from `fromMs` to `toMs` that are missing. */
export async function ensureTradePartitions(db: Queryable, fromMs: number, toMs: number): Promise<void> {
  await db.query(sql`select trades_partition(d) from generate_series(${dayOfMs(fromMs)}::int, ${dayOfMs(toMs)}::int) d`);
}

/**
 * Records `trades`; those already stored (same series and key) are skipped. outputs: the trades this
 * call stored, in the order given (a caller streams exactly these).
 */
export async function recordTrades(db: Db, trades: readonly SeriesTrade[]): Promise<SeriesTrade[]> {
  if (trades.length === 0) return [];
  try {
    return await db.tx((tx) => recordIn(tx, trades));
  } catch (err) {
    if ((err as { code?: string }).code !== NO_PARTITION) throw err;
    // A day the upkeep did not make ahead (a replay of old frames, a clock far off): make it, again.
    const ts = trades.map((t) => t.atMs);
    await ensureTradePartitions(db, Math.min(...ts), Math.max(...ts));
    return db.tx((tx) => recordIn(tx, trades));
  }
}

async function recordIn(tx: Queryable, trades: readonly SeriesTrade[]): Promise<SeriesTrade[]> {
  const spans = new Map<number, { lo: number; hi: number }>();
  for (const t of trades) {
    const s = spans.get(t.series);
    if (s === undefined) spans.set(t.series, { lo: t.atMs, hi: t.atMs });
    else {
      if (t.atMs < s.lo) s.lo = t.atMs;
      if (t.atMs > s.hi) s.hi = t.atMs;
    }
  }
  const series = [...spans.keys()].sort((a, b) => a - b);
  await tx.query(sql`select count(pg_advisory_xact_lock(${TRADE_LOCK}::int, s)) from (select s from unnest(${series}::int[]) s order by s) x`);

  const los = series.map((s) => (spans.get(s) as { lo: number }).lo);
  const his = series.map((s) => (spans.get(s) as { hi: number }).hi);
  // A row never spans two days, so one that meets [lo, hi] starts no earlier than a day before lo:
  // the bound lets the planner skip the older partitions.
  const stored: Array<{ series: number; k: string }> = await tx.query(sql`
    select t.series, u.k::text as k
    from unnest(${series}::int[], ${los}::bigint[], ${his}::bigint[]) as w(series, lo, hi)
    join trades t on t.series = w.series and t.hi >= w.lo and t.lo <= w.hi
    cross join lateral unnest(t.k) as u(k)
    where t.lo >= ${Math.min(...los) - DAY_MS}::bigint and t.lo <= ${Math.max(...his)}::bigint
  `);
  const seen = new Set(stored.map((r) => `${r.series}:${r.k}`));
  const fresh: SeriesTrade[] = [];
  for (const t of trades) {
    const id = `${t.series}:${t.key}`;
    if (seen.has(id)) continue;
    seen.add(id);
    fresh.push(t);
  }
  if (fresh.length === 0) return fresh;

  // One packed row per series and day, its slots in time order.
  const sorted = [...fresh].sort((a, b) => a.series - b.series || a.atMs - b.atMs);
  await tx.query(sql`
    with x as (
      select * from unnest(${sorted.map((t) => t.series)}::int[], ${sorted.map((t) => t.atMs)}::bigint[], ${sorted.map((t) => t.px)}::int[],
                           ${sorted.map((t) => t.sz)}::float8[], ${sorted.map((t) => t.key)}::bigint[]) with ordinality as x(series, at, px, sz, k, i)
    ), g as (
      select series, at / ${DAY_MS}::bigint as day, min(at) as lo, max(at) as hi from x group by 1, 2
    )
    insert into trades (series, lo, hi, off, px, sz, k)
    select g.series, g.lo, g.hi, array_agg((x.at - g.lo)::int order by x.i), array_agg(x.px order by x.i),
           array_agg(x.sz order by x.i), array_agg(x.k order by x.i)
    from x join g on g.series = x.series and g.day = x.at / ${DAY_MS}::bigint
    group by g.series, g.day, g.lo, g.hi
  `);
  await tx.query(sql`
    insert into trade_series (series, first_ms)
    select s, lo from unnest(${series}::int[], ${los}::bigint[]) as w(s, lo)
    on conflict (series) do update set first_ms = excluded.first_ms where excluded.first_ms < trade_series.first_ms
  `);
  return fresh;
}
