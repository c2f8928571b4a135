import { sql, type Db, type Queryable } from '../db/connection.js';
import { dayOf, PERIOD_SECONDS, toUnits } from './tiers.js';

/**
 * The writes of price history that come from outside the rollup: the series of a token, live raw
 * points (the ingestor's recorder) and backfilled candles (the exchange's own history at a fidelity).
 */

/**
 * inputs: token ids. outputs: token id → series id, made for the tokens that had none (two writers
 * making the same token's series both get the one id).
 */
export async function seriesIds(db: Queryable, tokenIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (tokenIds.length === 0) return out;
  const tokens = [...new Set(tokenIds)];
  await db.query(sql`insert into series (token_id) select unnest(${tokens}::text[]) order by 1 on conflict (token_id) do nothing`);
  const rows: Array<{ id: number; token_id: string }> = await db.query(sql`select id, token_id from series where token_id = any(${tokens}::text[])`);
  for (const r of rows) out.set(r.token_id, r.id);
  return out;
}

/** Makes the raw partitions of the days from `fromT` to `toT` (Unix s) that are missing. */
export async function ensureRawPartitions(db: Queryable, fromT: number, toT: number): Promise<void> {
  for (let d = dayOf(fromT); d <= dayOf(toT); d++) await db.query(sql`select history_raw_partition(${d}::int)`);
}

const NO_PARTITION = '23514';

export interface RawPoint {
  series: number;
  /** Unix seconds. */
  t: number;
  chance: number;
  /** The best bid and ask of the series' token when the point was taken (null or absent: that side empty). */
  bid?: number | null;
  ask?: number | null;
}

/** A book top price as stored: units of 1/10,000, null when absent or not a price. */
const topUnits = (p: number | null | undefined): number | null => (p !== null && p !== undefined && Number.isFinite(p) && p >= 0 && p <= 1 ? toUnits(p) : null);

/**
 * One multi-row insert of live points; a point already stored (same series and second) is skipped.
 * A point of a day with no partition yet (the upkeep makes them ahead; a clock far off does not
 * wait for it) makes it and tries again. outputs: the number of rows inserted.
 */
export async function insertRawPoints(db: Db, points: readonly RawPoint[]): Promise<number> {
  if (points.length === 0) return 0;
  const insert = async () => {
    const rows: Array<{ n: number }> = await db.query(sql`
      with ins as (
        insert into raw_points (series, t, chance, bid, ask)
        select * from unnest(${points.map((p) => p.series)}::int[], ${points.map((p) => Math.floor(p.t))}::int[], ${points.map((p) => p.chance)}::real[],
                             ${points.map((p) => topUnits(p.bid))}::smallint[], ${points.map((p) => topUnits(p.ask))}::smallint[])
        on conflict do nothing
        returning 1
      ) select count(*)::int as n from ins
    `);
    return rows[0]?.n ?? 0;
  };
  try {
    return await insert();
  } catch (err) {
    if ((err as { code?: string }).code !== NO_PARTITION) throw err;
    const ts = points.map((p) => p.t);
    await ensureRawPartitions(db, Math.min(...ts), Math.max(...ts));
    return insert();
  }
}

/**
 * Backfilled points (the exchange's /prices-history at `stepSeconds` fidelity) as candles of the tier
 * of that step, one point per bucket (open = high = low = close, n = 1; the last point of a bucket
 * when it holds several). A slot that already has a candle (the rollup's, from live points) keeps it:
 * live points are the finer truth. For the 1h tier the 1d candles of the days touched are made again
 * from their hours. inputs: series, step (300, 3600 or 86400), points. outputs: none.
 */
export async function storeBackfill(db: Db, series: number, stepSeconds: 300 | 3600 | 86_400, points: ReadonlyArray<{ t: number; chance: number }>): Promise<void> {
  if (points.length === 0) return;
  const period = PERIOD_SECONDS[stepSeconds] as number;
  const byBucket = new Map<number, number>();
  for (const p of [...points].sort((a, b) => a.t - b.t)) byBucket.set(Math.floor(p.t / stepSeconds) * stepSeconds, toUnits(p.chance));
  const buckets = [...byBucket.keys()];
  const values = buckets.map((b) => byBucket.get(b) as number);
  await db.tx(async (tx) => {
    // Rows of the periods touched, each slot from the backfill unless one is there already.
    await tx.query(sql`
      with pts as (
        select b, v, (b / ${period}::int) * ${period}::int as p, (b % ${period}::int) / ${stepSeconds}::int + 1 as slot
        from unnest(${buckets}::int[], ${values}::int[]) as x(b, v)
      ), periods as (
        select p, max(slot) as top from pts group by p
      ), merged as (
        select pr.p, i,
               coalesce(old.o[i], pts.v) as o, coalesce(old.h[i], pts.v) as h, coalesce(old.l[i], pts.v) as l,
               coalesce(old.c[i], pts.v) as c, case when old.o[i] is not null then old.n[i] when pts.v is not null then 1 end as n
        from periods pr
        left join candles old on old.series = ${series}::int and old.step = ${stepSeconds}::int and old.p = pr.p
        cross join lateral generate_series(1, greatest(pr.top, coalesce(cardinality(old.o), 0))) i
        left join pts on pts.p = pr.p and pts.slot = i
      )
      insert into candles (series, step, p, o, h, l, c, n)
      select ${series}::int, ${stepSeconds}::int, p,
             array_agg(o::smallint order by i), array_agg(h::smallint order by i), array_agg(l::smallint order by i),
             array_agg(c::smallint order by i), array_agg(n order by i)
      from merged group by p
      on conflict (series, step, p) do update set o = excluded.o, h = excluded.h, l = excluded.l, c = excluded.c, n = excluded.n
    `);
    if (stepSeconds === 3600) {
      const days = [...new Set(buckets.map((b) => Math.floor(b / 86_400) * 86_400))];
      await rollDays(tx, [series], days);
    }
  });
}

/**
 * The 1d candles of `days` (day starts, Unix s) of `series`, made again from their 1-hour rows
 * (one row per series and day): open the first hour's open, close the last hour's close; a book
 * side's open and close its first and last quoted hour; volume, notional and trades the hours' sums.
 * A group with nothing in the day's hours (no point, no quote, no trade) keeps what the day slot had.
 */
export async function rollDays(db: Queryable, series: readonly number[], days: readonly number[]): Promise<void> {
  if (series.length === 0 || days.length === 0) return;
  const period = PERIOD_SECONDS[86_400] as number;
  await db.query(sql`
    with d as (
      select k.series, k.p as day,
             (array_agg(k.o[i] order by i) filter (where k.o[i] is not null))[1] as o,
             max(k.h[i]) as h, min(k.l[i]) as l,
             (array_agg(k.c[i] order by i desc) filter (where k.c[i] is not null))[1] as c,
             sum(k.n[i])::int as n,
             (array_agg(k.bo[i] order by i) filter (where k.bo[i] is not null))[1] as bo, max(k.bh[i]) as bh, min(k.bl[i]) as bl,
             (array_agg(k.bc[i] order by i desc) filter (where k.bc[i] is not null))[1] as bc,
             (array_agg(k.ao[i] order by i) filter (where k.ao[i] is not null))[1] as ao, max(k.ah[i]) as ah, min(k.al[i]) as al,
             (array_agg(k.ac[i] order by i desc) filter (where k.ac[i] is not null))[1] as ac,
             bool_or(k.bo is not null) as hq,
             sum(k.v[i])::bigint as v, sum(k.nv[i]) as nv, sum(k.tn[i])::int as tn
      from candles k cross join lateral generate_subscripts(k.o, 1) as i
      where k.series = any(${[...series]}::int[]) and k.step = 3600 and k.p = any(${[...days]}::int[])
      group by 1, 2
    ), s as (
      select series, (day / ${period}::int) * ${period}::int as p, (day % ${period}::int) / 86400 + 1 as slot, o, h, l, c, n,
             bo, bh, bl, bc, ao, ah, al, ac, hq, v, nv, tn
      from d where o is not null or hq or tn is not null
    ), rows as (
      select series, p, max(slot) as top, bool_or(hq) as hq, bool_or(tn is not null) as ht from s group by 1, 2
    ), merged as (
      select r.series, r.p, i, r.hq, r.ht,
             case when s.o is not null then s.o else old.o[i] end as o, case when s.o is not null then s.h else old.h[i] end as h,
             case when s.o is not null then s.l else old.l[i] end as l, case when s.o is not null then s.c else old.c[i] end as c,
             case when s.o is not null then s.n else old.n[i] end as n,
             case when s.hq then s.bo else old.bo[i] end as bo, case when s.hq then s.bh else old.bh[i] end as bh,
             case when s.hq then s.bl else old.bl[i] end as bl, case when s.hq then s.bc else old.bc[i] end as bc,
             case when s.hq then s.ao else old.ao[i] end as ao, case when s.hq then s.ah else old.ah[i] end as ah,
             case when s.hq then s.al else old.al[i] end as al, case when s.hq then s.ac else old.ac[i] end as ac,
             case when s.tn is not null then s.v else old.v[i] end as v, case when s.tn is not null then s.nv else old.nv[i] end as nv,
             case when s.tn is not null then s.tn else old.tn[i] end as tn,
             old.bo is not null as oq, old.v is not null as ot
      from rows r
      left join candles old on old.series = r.series and old.step = 86400 and old.p = r.p
      cross join lateral generate_series(1, greatest(r.top, coalesce(cardinality(old.o), 0))) i
      left join s on s.series = r.series and s.p = r.p and s.slot = i
    )
    insert into candles (series, step, p, o, h, l, c, n, bo, bh, bl, bc, ao, ah, al, ac, v, nv, tn)
    select series, 86400, p,
           array_agg(o::smallint order by i), array_agg(h::smallint order by i), array_agg(l::smallint order by i),
           array_agg(c::smallint order by i), array_agg(n order by i),
           ${QUOTES}, ${TRADES}
    from merged group by series, p
    on conflict (series, step, p) do update
      set o = excluded.o, h = excluded.h, l = excluded.l, c = excluded.c, n = excluded.n,
          bo = excluded.bo, bh = excluded.bh, bl = excluded.bl, bc = excluded.bc,
          ao = excluded.ao, ah = excluded.ah, al = excluded.al, ac = excluded.ac,
          v = excluded.v, nv = excluded.nv, tn = excluded.tn
  `);
}

/** The day row's quote and trade groups: present when this day or the row held one before (null otherwise). */
const QUOTES = sql.__dangerous__rawValue(
  ['bo', 'bh', 'bl', 'bc', 'ao', 'ah', 'al', 'ac'].map((c) => `case when bool_or(hq or oq) then array_agg(${c}::smallint order by i) end`).join(', '),
);
const TRADES = sql.__dangerous__rawValue(
  ['v', 'nv', 'tn'].map((c) => `case when bool_or(ht or ot) then array_agg(${c} order by i) end`).join(', '),
);
