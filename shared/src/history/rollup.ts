import { sql, type Db, type Queryable } from '../db/connection.js';
import { dayPartitions } from '../db/partitions.js';
import { rollDays, ensureRawPartitions } from './write.js';
import { dayOf, LATE_POINT_SECONDS, RAW_RETENTION_SECONDS, RETENTION_SECONDS, ROLLUP_PROGRESS, SLICE_SECONDS } from './tiers.js';

/**
 * The rollup of raw points into candles, and the upkeep of raw partitions and tier retention.
 *
 * A slice is one closed hour [a, a + 3600), taken once now ≥ its end + the late-point margin. Its
 * 1m candles (a row of 60), 5m candles (12 slots of the day's row), 1h candle (a slot of the day's
 * row) are recomputed from the slice's raw points and upserted, the 1d candle of its day is made
 * again from the day's 1h candles, and the progress mark moves to a + 3600 — all in one
 * transaction that first locks the mark's row. So: a second worker waits, then finds the mark
 * moved and takes the next slice; a kill rolls the slice back whole (it is done again from the
 * same points, never counted twice); a worker that was down catches up slice by slice.
 *
 * Open and close are the first and last point of a bucket: min/max of (t × 16384 + units), which a
 * plain aggregate computes without sorting (units ≤ 10,000 < 16,384).
 */

export interface RollupResult {
  /** Slices rolled up by this call. */
  slices: number;
  /** Raw points read by them. */
  points: number;
  /** The progress mark after the call (null: no raw point was ever written). */
  doneUntil: number | null;
}

/** Rolls one slice up (inside the caller's transaction). inputs: slice start. outputs: points read. */
export async function rollupSlice(tx: Queryable, a: number): Promise<number> {
  const day = Math.floor(a / 86_400) * 86_400;
  const base = (a - day) / 300; // 5m slots before this hour in the day's row
  const hslot = (a - day) / 3600 + 1;
  const rows: Array<{ series: number[] | null; points: number }> = await tx.query(sql`
    with m as (
      select series, (t - ${a}::int) / 60 as k,
             (min(t::bigint * 16384 + v) % 16384)::int as o, max(v) as h, min(v) as l,
             (max(t::bigint * 16384 + v) % 16384)::int as c, count(*)::int as n
      from (select series, t, round(chance * 10000)::int as v from raw_points where t >= ${a}::int and t < ${a + SLICE_SECONDS}::int) r
      group by 1, 2
    ), s as (
      select distinct series from m
    ), one as (
      insert into candles (series, step, p, o, h, l, c, n)
      select s.series, 60, ${a}::int,
             array_agg(m.o::smallint order by i), array_agg(m.h::smallint order by i), array_agg(m.l::smallint order by i),
             array_agg(m.c::smallint order by i), array_agg(m.n order by i)
      from s cross join generate_series(0, 59) i left join m on m.series = s.series and m.k = i
      group by s.series
      on conflict (series, step, p) do update set o = excluded.o, h = excluded.h, l = excluded.l, c = excluded.c, n = excluded.n
      returning 1
    ), f as (
      select series, k / 5 as j, (min(k * 16384 + o) % 16384)::int as o, max(h) as h, min(l) as l,
             (max(k * 16384 + c) % 16384)::int as c, sum(n)::int as n
      from m group by 1, 2
    ), five as (
      insert into candles (series, step, p, o, h, l, c, n)
      select s.series, 300, ${day}::int,
             array_fill(null::smallint, array[${base}::int]) || array_agg(coalesce(f.o, old.o[${base + 1}::int + i])::smallint order by i),
             array_fill(null::smallint, array[${base}::int]) || array_agg(coalesce(f.h, old.h[${base + 1}::int + i])::smallint order by i),
             array_fill(null::smallint, array[${base}::int]) || array_agg(coalesce(f.l, old.l[${base + 1}::int + i])::smallint order by i),
             array_fill(null::smallint, array[${base}::int]) || array_agg(coalesce(f.c, old.c[${base + 1}::int + i])::smallint order by i),
             array_fill(null::int, array[${base}::int]) || array_agg(case when f.o is not null then f.n else old.n[${base + 1}::int + i] end order by i)
      from s cross join generate_series(0, 11) i
      left join f on f.series = s.series and f.j = i
      left join candles old on old.series = s.series and old.step = 300 and old.p = ${day}::int
      group by s.series
      on conflict (series, step, p) do update
        set o[${base + 1}::int:${base + 12}::int] = excluded.o[${base + 1}::int:${base + 12}::int],
            h[${base + 1}::int:${base + 12}::int] = excluded.h[${base + 1}::int:${base + 12}::int],
            l[${base + 1}::int:${base + 12}::int] = excluded.l[${base + 1}::int:${base + 12}::int],
            c[${base + 1}::int:${base + 12}::int] = excluded.c[${base + 1}::int:${base + 12}::int],
            n[${base + 1}::int:${base + 12}::int] = excluded.n[${base + 1}::int:${base + 12}::int]
      returning 1
    ), hour as (
      insert into candles (series, step, p, o, h, l, c, n)
      select series, 3600, ${day}::int,
             array_fill(null::smallint, array[${hslot - 1}::int]) || array[o::smallint], array_fill(null::smallint, array[${hslot - 1}::int]) || array[h::smallint],
             array_fill(null::smallint, array[${hslot - 1}::int]) || array[l::smallint], array_fill(null::smallint, array[${hslot - 1}::int]) || array[c::smallint],
             array_fill(null::int, array[${hslot - 1}::int]) || array[n]
      from (
        select series, (min(k * 16384 + o) % 16384)::int as o, max(h) as h, min(l) as l, (max(k * 16384 + c) % 16384)::int as c, sum(n)::int as n
        from m group by 1
      ) g
      on conflict (series, step, p) do update
        set o[${hslot}::int] = excluded.o[${hslot}::int], h[${hslot}::int] = excluded.h[${hslot}::int], l[${hslot}::int] = excluded.l[${hslot}::int],
            c[${hslot}::int] = excluded.c[${hslot}::int], n[${hslot}::int] = excluded.n[${hslot}::int]
      returning series
    )
    select (select array_agg(series) from hour) as series,
           (select coalesce(sum(n), 0) from m)::int as points,
           (select count(*) from one)::int as ones, (select count(*) from five)::int as fives
  `);
  const row = rows[0];
  const touched = row?.series ?? [];
  await rollDays(tx, touched, [day]);
  return row?.points ?? 0;
}

/** The oldest raw point's hour, from the oldest partition that holds any (null: none). */
async function firstRawHour(db: Queryable): Promise<number | null> {
  for (const name of await rawPartitions(db)) {
    const rows: Array<{ t: number | null }> = await db.query(sql`select min(t) as t from ${sql.ident(name.name)}`);
    const t = rows[0]?.t;
    if (t !== null && t !== undefined) return Math.floor(t / SLICE_SECONDS) * SLICE_SECONDS;
  }
  return null;
}

/** Raw partitions, oldest first: name and day number. */
export async function rawPartitions(db: Queryable): Promise<Array<{ name: string; day: number }>> {
  return dayPartitions(db, 'raw_points', 'raw_points_d');
}

/** The progress mark (null: the rollup has not started: no raw point yet). */
export async function rollupMark(db: Queryable): Promise<number | null> {
  const rows: Array<{ done_until: number }> = await db.query(sql`select done_until from history_progress where name = ${ROLLUP_PROGRESS}`);
  return rows[0]?.done_until ?? null;
}

/**
 * Rolls up every closed slice after the mark, each in its own transaction, at most `maxSlices`.
 * `beforeCommit` runs inside each slice's transaction before its commit (tests stop a process there).
 */
export async function runRollup(
  db: Db,
  opts: { now: number; maxSlices?: number; beforeCommit?: (slice: number) => Promise<void> },
): Promise<RollupResult> {
  const maxSlices = opts.maxSlices ?? 24 * 7;
  const result: RollupResult = { slices: 0, points: 0, doneUntil: await rollupMark(db) };
  if (result.doneUntil === null) {
    const first = await firstRawHour(db);
    if (first === null) return result;
    await db.query(sql`insert into history_progress (name, done_until) values (${ROLLUP_PROGRESS}, ${first}::int) on conflict (name) do nothing`);
  }
  while (result.slices < maxSlices) {
    const step = await db.tx(async (tx) => {
      const rows: Array<{ done_until: number }> = await tx.query(sql`select done_until from history_progress where name = ${ROLLUP_PROGRESS} for update`);
      const a = rows[0]?.done_until;
      if (a === undefined) return null;
      if (a + SLICE_SECONDS + LATE_POINT_SECONDS > opts.now) return { a, points: -1 };
      const points = await rollupSlice(tx, a);
      await tx.query(sql`update history_progress set done_until = ${a + SLICE_SECONDS}::int where name = ${ROLLUP_PROGRESS}`);
      await opts.beforeCommit?.(a);
      return { a: a + SLICE_SECONDS, points };
    });
    if (step === null) break;
    result.doneUntil = step.a;
    if (step.points < 0) break;
    result.slices++;
    result.points += step.points;
  }
  return result;
}

export interface UpkeepResult {
  /** Raw partitions dropped. */
  dropped: string[];
  /** Candle rows past their tier's retention deleted. */
  expired: number;
}

/**
 * Makes the raw partitions of yesterday to the day after tomorrow; drops a raw partition once it is
 * wholly older than the raw retention AND rolled up (a worker that was down keeps its points until
 * it caught up); deletes the 1m and 5m rows past their retention.
 */
export async function runUpkeep(db: Db, opts: { now: number }): Promise<UpkeepResult> {
  await ensureRawPartitions(db, opts.now - 86_400, opts.now + 2 * 86_400);
  const mark = await rollupMark(db);
  const dropped: string[] = [];
  const limit = Math.min(opts.now - RAW_RETENTION_SECONDS, mark ?? -Infinity);
  for (const part of await rawPartitions(db)) {
    if ((part.day + 1) * 86_400 > limit) break;
    // Only partitions wholly behind both lines; a day of the future is never dropped.
    if (part.day >= dayOf(opts.now)) break;
    await db.query(sql`drop table if exists ${sql.ident(part.name)}`);
    dropped.push(part.name);
  }
  const rows: Array<{ n: number }> = await db.query(sql`
    with d as (
      delete from candles
      where (step = 60 and p + 3600 <= ${opts.now - (RETENTION_SECONDS['1m'] as number)}::int)
         or (step = 300 and p + 86400 <= ${opts.now - (RETENTION_SECONDS['5m'] as number)}::int)
      returning 1
    ) select count(*)::int as n from d
  `);
  return { dropped, expired: rows[0]?.n ?? 0 };
}
