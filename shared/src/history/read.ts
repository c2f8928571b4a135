import { sql, type Queryable } from '../db/connection.js';
import { floorTo, fromUnits, PERIOD_SECONDS, ROLLUP_PROGRESS } from './tiers.js';

/**
 * Reading candles: the stored tier up to the rollup's mark, raw points after it (the hour or so the
 * rollup has not reached yet), merged per step, composed into buckets of a multiple of the step,
 * gaps carried forward flat from the previous close, nothing before a series' first point, and a
 * resolved market ending at its final price.
 *
 * Every read is by index: the candles' primary key (series, step, p) and the raw points' (series, t).
 * It takes the query function it runs on (a pool, a transaction, a read replica's pool), so the
 * API and the worker read the same way from whatever they are given.
 */

/** Anything with `query` (a pool or a transaction). */
export type HistoryDb = Pick<Queryable, 'query'>;

export interface Candle {
  /** Bucket start, Unix seconds. */
  t: number;
  open: number;
  high: number;
  low: number;
  close: number;
}

/** A step candle in units of 1/10,000; n = raw points. */
interface Units {
  t: number;
  o: number;
  h: number;
  l: number;
  c: number;
  n: number;
}

export interface CandleQuery {
  series: readonly number[];
  /** The tier: 60, 300, 3600 or 86400. */
  step: number;
  /** Candle size, a multiple of `step` (default `step`). */
  bucket?: number;
  /** Window [start, end), Unix seconds; `start` is aligned down to the bucket. */
  start: number;
  end: number;
  /** Unix seconds: no candle starts after it. */
  now: number;
  /** Resolved series: when, and the final chance of the series' token. */
  ends?: ReadonlyMap<number, { t: number; chance: number }>;
}

type Row = { series: number; p: number; o: Array<number | null>; h: Array<number | null>; l: Array<number | null>; c: Array<number | null>; n: Array<number | null> };

/** a then b (b later): the candle of both. */
function merge(a: Units, b: Units): Units {
  return { t: a.t, o: a.o, h: Math.max(a.h, b.h), l: Math.min(a.l, b.l), c: b.c, n: a.n + b.n };
}

function unpack(row: Row, step: number, from: number, to: number, into: (u: Units) => void): void {
  for (let i = 0; i < row.o.length; i++) {
    const o = row.o[i];
    if (o === null || o === undefined) continue;
    const t = row.p + i * step;
    if (t < from || t >= to) continue;
    into({ t, o, h: row.h[i] as number, l: row.l[i] as number, c: row.c[i] as number, n: row.n[i] ?? 0 });
  }
}

/** The rollup's mark: raw points at or after it are not in the tiers yet (0 when it never ran). */
async function markOf(db: HistoryDb): Promise<number> {
  const rows: Array<{ done_until: number }> = await db.query(sql`select done_until from history_progress where name = ${ROLLUP_PROGRESS}`);
  return rows[0]?.done_until ?? 0;
}

/** inputs: the query. outputs: series → candles, ascending t (a series with none is absent). */
export async function readCandles(db: HistoryDb, q: CandleQuery): Promise<Map<number, Candle[]>> {
  const out = new Map<number, Candle[]>();
  if (q.series.length === 0) return out;
  const { step } = q;
  const bucket = q.bucket ?? step;
  const period = PERIOD_SECONDS[step];
  if (period === undefined || bucket % step !== 0) throw new Error(`no tier of step ${step} for buckets of ${bucket}`);
  const s0 = floorTo(q.start, bucket);
  const end = q.end;
  const series = [...q.series];
  const mark = await markOf(db);

  const rawFrom = Math.max(mark, s0);
  const [stored, raw, seedStored, seedRaw] = await Promise.all([
    // inputs: series, step, window. outputs: packed rows that overlap the window.
    db.query(sql`
      select series, p, o, h, l, c, n from candles
      where series = any(${series}::int[]) and step = ${step}::int and p > ${s0 - period}::int and p < ${end}::int
    `) as Promise<Row[]>,
    // inputs: series, step, [max(mark, start), end). outputs: per series and step bucket, its candle from raw points.
    rawFrom < end
      ? (db.query(sql`
          select series, (t / ${step}::int) * ${step}::int as t,
                 (min(t::bigint * 16384 + round(chance * 10000)::int) % 16384)::int as o, max(round(chance * 10000))::int as h,
                 min(round(chance * 10000))::int as l, (max(t::bigint * 16384 + round(chance * 10000)::int) % 16384)::int as c, count(*)::int as n
          from raw_points where series = any(${series}::int[]) and t >= ${rawFrom}::int and t < ${end}::int
          group by 1, 2
        `) as Promise<Units[] & Array<{ series: number }>>)
      : Promise.resolve([] as Array<Units & { series: number }>),
    // inputs: series, step, start. outputs: the last two packed rows before the window, for the close it starts from.
    db.query(sql`
      select k.* from unnest(${series}::int[]) as s(id)
      cross join lateral (
        select series, p, o, h, l, c, n from candles where series = s.id and step = ${step}::int and p < ${s0}::int order by p desc limit 2
      ) k
    `) as Promise<Row[]>,
    // inputs: series, [mark, start). outputs: the last raw point before the window not yet rolled up.
    mark < s0
      ? (db.query(sql`
          select s.id as series, k.t, round(k.chance * 10000)::int as c from unnest(${series}::int[]) as s(id)
          cross join lateral (
            select t, chance from raw_points where series = s.id and t >= ${mark}::int and t < ${s0}::int order by t desc limit 1
          ) k
        `) as Promise<Array<{ series: number; t: number; c: number }>>)
      : Promise.resolve([] as Array<{ series: number; t: number; c: number }>),
  ]);

  // Step candles per series: stored before the mark; from raw at or after it (stored when raw has none:
  // a backfill); merged for the bucket holding the mark.
  const steps = new Map<number, Map<number, Units>>();
  const at = (id: number) => {
    let m = steps.get(id);
    if (m === undefined) steps.set(id, (m = new Map()));
    return m;
  };
  for (const row of stored) unpack(row, step, s0, end, (u) => at(row.series).set(u.t, u));
  for (const r of raw) {
    const m = at(r.series);
    const u: Units = { t: r.t, o: r.o, h: r.h, l: r.l, c: r.c, n: r.n };
    const held = m.get(r.t);
    if (held === undefined || r.t >= mark) m.set(r.t, u);
    else m.set(r.t, merge(held, u));
  }
  const seeds = new Map<number, { t: number; c: number }>();
  for (const row of seedStored) {
    unpack(row, step, -Infinity, s0, (u) => {
      const held = seeds.get(row.series);
      if (held === undefined || u.t > held.t) seeds.set(row.series, { t: u.t, c: u.c });
    });
  }
  for (const r of seedRaw) seeds.set(r.series, { t: r.t, c: r.c });

  for (const id of series) {
    const resolved = q.ends?.get(id);
    const last = floorTo(Math.min(end - 1, q.now, resolved?.t ?? Infinity), bucket);
    // Compose step candles into buckets.
    const byBucket = new Map<number, Units>();
    const own = [...(steps.get(id)?.values() ?? [])].sort((a, b) => a.t - b.t);
    for (const u of own) {
      if (resolved !== undefined && u.t > resolved.t) break;
      const b = floorTo(u.t, bucket);
      const held = byBucket.get(b);
      byBucket.set(b, held === undefined ? { ...u, t: b } : merge(held, u));
    }
    let prev = seeds.get(id)?.c;
    const candles: Units[] = [];
    // Nothing before the first point: without a close before the window, start at its first candle.
    const from = prev !== undefined ? s0 : Math.min(...byBucket.keys());
    for (let b = from; b <= last; b += bucket) {
      const u = byBucket.get(b);
      if (u !== undefined) {
        candles.push(u);
        prev = u.c;
      } else if (prev !== undefined) {
        candles.push({ t: b, o: prev, h: prev, l: prev, c: prev, n: 0 });
      }
    }
    if (resolved !== undefined && candles.length > 0) {
      const final = Math.round(resolved.chance * 10_000);
      const tail = candles.at(-1) as Units;
      if (tail.t === floorTo(resolved.t, bucket)) candles[candles.length - 1] = { ...tail, h: Math.max(tail.h, final), l: Math.min(tail.l, final), c: final };
    }
    if (candles.length > 0) out.set(id, candles.map((u) => ({ t: u.t, open: fromUnits(u.o), high: fromUnits(u.h), low: fromUnits(u.l), close: fromUnits(u.c) })));
  }
  return out;
}

/** Candles (ascending) composed into buckets of `bucket` seconds (a multiple of theirs). */
export function composeCandles(candles: readonly Candle[], bucket: number): Candle[] {
  const out: Candle[] = [];
  for (const c of candles) {
    const t = floorTo(c.t, bucket);
    const held = out.at(-1);
    if (held !== undefined && held.t === t) out[out.length - 1] = { t, open: held.open, high: Math.max(held.high, c.high), low: Math.min(held.low, c.low), close: c.close };
    else out.push({ ...c, t });
  }
  return out;
}
