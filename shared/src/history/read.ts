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

/**
 * A packed row as text: its o, h, l and c arrays one after the other (always of one length: they are
 * written together), joined by ',' ('' for a null slot). Parsed by `unpack` in one pass: node-pg's own
 * parse of int arrays walks them a character at a time with an object per character, and was the
 * largest single cost of a 10-market read. One array_to_string of the four made into one is ~20 %
 * cheaper in Postgres than one of each.
 */
const PACKED = sql`array_to_string(o || h || l || c, ',', '')`;

/** Row kinds of the one statement, in the order they come. */
const MARK = 0;
const STORED = 1;
const SEED_STORED = 2;
const RAW = 3;
const SEED_RAW = 4;

type Row = { k: number; series: number; p: number; v: string | null };

/** What one series' rows say: step candles from the tiers and from raw points (flat t, o, h, l, c), and the close before the window. */
interface Parts {
  stored: number[];
  raw: number[];
  seed: { t: number; c: number } | undefined;
}

const NULL_SLOT = -1;

/** The values of the row last parsed (NULL_SLOT for a null slot): o of every slot, then h, l and c. */
let values: Int32Array = new Int32Array(4 * 288);

/**
 * `PACKED` text → its values into `values`; returns the slots per array. A raw row's 'o;h;l;c' reads
 * as four arrays of one.
 */
function parsePacked(v: string): number {
  let n = 0;
  let value = NULL_SLOT;
  for (let i = 0; i < v.length; i++) {
    const ch = v.charCodeAt(i);
    if (ch === 44 /* , */ || ch === 59 /* ; */) {
      if (n === values.length) values = grown(values);
      values[n++] = value;
      value = NULL_SLOT;
    } else {
      value = (value === NULL_SLOT ? 0 : value * 10) + (ch - 48);
    }
  }
  if (n === values.length) values = grown(values);
  values[n++] = value;
  const slots = n / 4;
  if (!Number.isInteger(slots)) throw new Error(`a candles row whose arrays differ in length: ${v.slice(0, 80)}`);
  return slots;
}

function grown(a: Int32Array): Int32Array {
  const bigger = new Int32Array(2 * a.length);
  bigger.set(a);
  return bigger;
}

/** The candles of a packed row with from ≤ t < to, each as (t, o, h, l, c) onto `into`. */
function unpack(row: Row, step: number, from: number, to: number, into: number[]): void {
  const slots = parsePacked(row.v as string);
  for (let i = 0; i < slots; i++) {
    const o = values[i] as number;
    if (o === NULL_SLOT) continue;
    const t = row.p + i * step;
    if (t < from || t >= to) continue;
    into.push(t, o, values[slots + i] as number, values[2 * slots + i] as number, values[3 * slots + i] as number);
  }
}

/**
 * Candles in units of 1/10,000, flat: t, open, high, low, close of each candle in turn, ascending t.
 * What the API writes its bodies from without making an object (and four boxed numbers) per candle.
 */
export type PackedCandles = readonly number[];

/** inputs: the query. outputs: series → candles, ascending t (a series with none is absent). */
export async function readCandles(db: HistoryDb, q: CandleQuery): Promise<Map<number, Candle[]>> {
  const out = new Map<number, Candle[]>();
  for (const [id, units] of await readPackedCandles(db, q)) {
    const candles: Candle[] = new Array(units.length / 5);
    for (let i = 0, k = 0; i < units.length; i += 5, k++) {
      candles[k] = { t: units[i] as number, open: fromUnits(units[i + 1] as number), high: fromUnits(units[i + 2] as number), low: fromUnits(units[i + 3] as number), close: fromUnits(units[i + 4] as number) };
    }
    out.set(id, candles);
  }
  return out;
}

/**
 * The ends of resolved series: when the market resolved and the final chance of the series' token
 * (1 or 0 by the winner; a voided market's last catalog price), as `CandleQuery.ends` takes them.
 * inputs: series ids. outputs: series → end (series of open markets, or with no final price, absent).
 */
export async function resolvedEnds(db: HistoryDb, series: readonly number[]): Promise<Map<number, { t: number; chance: number }>> {
  const out = new Map<number, { t: number; chance: number }>();
  if (series.length === 0) return out;
  const rows: Array<{ series: number; t: number; chance: number | null }> = await db.query(sql`
    select s.id as series, extract(epoch from m.resolved_at)::float8 as t,
           case when not m.voided and m.resolved_outcome_index is not null then (m.resolved_outcome_index = o.outcome_index)::int::float8
                else o.catalog_price::float8 end as chance
    from series s
    join outcomes o on o.token_id = s.token_id
    join markets m on m.id = o.market_id
    where s.id = any(${[...series]}::int[]) and m.resolved_at is not null
  `);
  for (const r of rows) if (r.chance !== null) out.set(r.series, { t: r.t, chance: r.chance });
  return out;
}

/** readCandles, each series' candles packed (PackedCandles). */
export async function readPackedCandles(db: HistoryDb, q: CandleQuery): Promise<Map<number, PackedCandles>> {
  const out = new Map<number, PackedCandles>();
  if (q.series.length === 0) return out;
  const { step } = q;
  const bucket = q.bucket ?? step;
  const period = PERIOD_SECONDS[step];
  if (period === undefined || bucket % step !== 0) throw new Error(`no tier of step ${step} for buckets of ${bucket}`);
  const s0 = floorTo(q.start, bucket);
  const end = q.end;
  const series = [...q.series];

  // One statement (one round trip, one snapshot: the mark and the rows it splits agree), its rows
  // ordered by kind, series and time. The mark: raw points at or after it are not in the tiers yet
  // (0 when the rollup never ran).
  const rows = (await db.query(sql`
    with m as (select coalesce((select done_until from history_progress where name = ${ROLLUP_PROGRESS}), 0) as mark)
    select ${MARK}::int as k, 0 as series, mark as p, null::text as v from m
    union all
    -- inputs: series, step, window. outputs: packed rows that overlap the window.
    select ${STORED}::int, series, p, ${PACKED} from candles
    where series = any(${series}::int[]) and step = ${step}::int and p > ${s0 - period}::int and p < ${end}::int
    union all
    -- inputs: series, step, start. outputs: the last two packed rows before the window, for the close it starts from.
    select ${SEED_STORED}::int, k.series, k.p, k.v from unnest(${series}::int[]) as s(id)
    cross join lateral (
      select series, p, ${PACKED} as v from candles where series = s.id and step = ${step}::int and p < ${s0}::int order by p desc limit 2
    ) k
    union all
    -- inputs: series, step, [max(mark, start), end). outputs: per series and step bucket, its candle from raw points as 'o;h;l;c'.
    select ${RAW}::int, series, (t / ${step}::int) * ${step}::int,
           concat_ws(';', (min(t::bigint * 16384 + round(chance * 10000)::int) % 16384)::int, max(round(chance * 10000))::int,
                          min(round(chance * 10000))::int, (max(t::bigint * 16384 + round(chance * 10000)::int) % 16384)::int)
    from raw_points where series = any(${series}::int[]) and t >= ${s0}::int and t >= (select mark from m) and t < ${end}::int
    group by 2, 3
    union all
    -- inputs: series, [mark, start). outputs: the last raw point before the window not yet rolled up.
    select ${SEED_RAW}::int, s.id, k.t, round(k.chance * 10000)::int::text from unnest(${series}::int[]) as s(id)
    cross join lateral (
      select t, chance from raw_points where series = s.id and t >= (select mark from m) and t < ${s0}::int order by t desc limit 1
    ) k
    order by 1, 2, 3
  `)) as Row[];

  let mark = 0;
  const parts = new Map<number, Parts>();
  const of = (id: number) => {
    let p = parts.get(id);
    if (p === undefined) parts.set(id, (p = { stored: [], raw: [], seed: undefined }));
    return p;
  };
  const before: number[] = [];
  for (const row of rows) {
    if (row.k === MARK) mark = row.p;
    else if (row.k === STORED) unpack(row, step, s0, end, of(row.series).stored);
    else if (row.k === SEED_STORED) {
      // Ascending p: the last candle before the window is the last one found.
      before.length = 0;
      unpack(row, step, -Infinity, s0, before);
      if (before.length > 0) of(row.series).seed = { t: before[before.length - 5] as number, c: before[before.length - 1] as number };
    } else if (row.k === RAW) {
      parsePacked(row.v as string);
      of(row.series).raw.push(row.p, values[0] as number, values[1] as number, values[2] as number, values[3] as number);
    } else if (row.k === SEED_RAW) of(row.series).seed = { t: row.p, c: Number(row.v) };
  }

  const steps: number[] = [];
  for (const id of series) {
    const part = parts.get(id);
    if (part === undefined) continue;
    const resolved = q.ends?.get(id);
    const last = floorTo(Math.min(end - 1, q.now, resolved?.t ?? Infinity), bucket);
    mergeSteps(part.stored, part.raw, mark, steps);
    // Compose step candles into buckets, gaps carried forward from the previous close; nothing
    // before the first point: without a close before the window, start at its first candle.
    const units: number[] = [];
    let prev = part.seed?.c;
    let next = prev !== undefined ? s0 : undefined;
    for (let i = 0; i < steps.length; i += 5) {
      const t = steps[i] as number;
      if (resolved !== undefined && t > resolved.t) break;
      const b = floorTo(t, bucket);
      if (b > last) break;
      const o = steps[i + 1] as number;
      const h = steps[i + 2] as number;
      const l = steps[i + 3] as number;
      const c = steps[i + 4] as number;
      if (units.length > 0 && units[units.length - 5] === b) {
        const j = units.length - 5;
        units[j + 2] = Math.max(units[j + 2] as number, h);
        units[j + 3] = Math.min(units[j + 3] as number, l);
        units[j + 4] = c;
      } else {
        if (next !== undefined && prev !== undefined) for (; next < b; next += bucket) units.push(next, prev, prev, prev, prev);
        units.push(b, o, h, l, c);
        next = b + bucket;
      }
      prev = c;
    }
    if (next !== undefined && prev !== undefined) for (; next <= last; next += bucket) units.push(next, prev, prev, prev, prev);
    if (units.length === 0) continue;
    const j = units.length - 5;
    if (resolved !== undefined && units[j] === floorTo(resolved.t, bucket)) {
      const final = Math.round(resolved.chance * 10_000);
      units[j + 2] = Math.max(units[j + 2] as number, final);
      units[j + 3] = Math.min(units[j + 3] as number, final);
      units[j + 4] = final;
    }
    out.set(id, units);
  }
  return out;
}

/**
 * One series' step candles in ascending t into `out` (flat t, o, h, l, c): stored before the mark;
 * from raw at or after it (stored when raw has none: a backfill); merged for the bucket holding the
 * mark (stored first, raw later).
 */
function mergeSteps(stored: readonly number[], raw: readonly number[], mark: number, out: number[]): void {
  out.length = 0;
  let i = 0;
  let j = 0;
  while (i < stored.length || j < raw.length) {
    const ts = i < stored.length ? (stored[i] as number) : Infinity;
    const tr = j < raw.length ? (raw[j] as number) : Infinity;
    if (ts < tr) {
      out.push(ts, stored[i + 1] as number, stored[i + 2] as number, stored[i + 3] as number, stored[i + 4] as number);
      i += 5;
    } else if (tr < ts || tr >= mark) {
      out.push(tr, raw[j + 1] as number, raw[j + 2] as number, raw[j + 3] as number, raw[j + 4] as number);
      if (ts === tr) i += 5;
      j += 5;
    } else {
      out.push(ts, stored[i + 1] as number, Math.max(stored[i + 2] as number, raw[j + 2] as number), Math.min(stored[i + 3] as number, raw[j + 3] as number), raw[j + 4] as number);
      i += 5;
      j += 5;
    }
  }
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
