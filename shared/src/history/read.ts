import { sql, type Queryable, type SQLQuery } from '../db/connection.js';
import { floorTo, fromUnits, PERIOD_SECONDS, ROLLUP_PROGRESS } from './tiers.js';
import { printsBetween } from './prints.js';

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

/** Open, high, low and close of one side of the book top over a bucket. */
export interface QuoteCandle {
  open: number;
  high: number;
  low: number;
  close: number;
}

export interface Candle {
  /** Bucket start, Unix seconds. */
  t: number;
  open: number;
  high: number;
  low: number;
  close: number;
  /** With `quotes`: the best bid's and ask's candles (null: that side empty throughout). */
  bid?: QuoteCandle | null;
  ask?: QuoteCandle | null;
  /** With `flows`: shares printed, Σ price × size, trades (0 without a trade; null before the series' trade data begins). */
  volume?: number | null;
  notional?: number | null;
  trades?: number | null;
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
  /** Read the book top's bid and ask candles of each series too (candles of one step: `bucket` = `step`). */
  quotes?: boolean;
  /**
   * Attach trades to each series' candles: series → the series whose trades count (its own token,
   * or the other token of a binary market for outcome 1, whose chance is read as 1 − outcome 0's).
   */
  flows?: ReadonlyMap<number, number>;
}

/**
 * A packed row as text: its o, h, l and c arrays one after the other (always of one length: they are
 * written together), joined by ',' ('' for a null slot). Parsed by `parseInto` in one pass: node-pg's
 * own parse of int arrays walks them a character at a time with an object per character, and was the
 * largest single cost of a 10-market read. One array_to_string of the four made into one is ~20 %
 * cheaper in Postgres than one of each. The quote group (eight arrays) is packed the same way.
 */
const PACKED = sql`array_to_string(o || h || l || c, ',', '')`;
const QUOTED = sql`array_to_string(bo || bh || bl || bc || ao || ah || al || ac, ',', '')`;
/** The trade group: volume, notional and count, each array joined by ',', the three by ';'. */
const FLOWED = sql`array_to_string(v, ',', '') || ';' || array_to_string(nv, ',', '') || ';' || array_to_string(tn, ',', '')`;

/** Row kinds of the one statement, in the order they come. */
const MARK = 0;
const STORED = 1;
const SEED_STORED = 2;
const RAW = 3;
const SEED_RAW = 4;
const FLOW_STORED = 5;
const FLOW_RAW = 6;
const FLOW_FIRST = 7;

type Row = { k: number; series: number; p: number; v: string | null; w: string | null };

/** What one series' rows say: step records from the tiers and from raw points (flat, `width` each), and the one before the window. */
interface Parts {
  stored: number[];
  raw: number[];
  seed: number[] | undefined;
}

/** One series' trades: per step bucket t, volume (10^-6 shares), notional, count; from the tiers then from the tape; when its data begins (Unix ms). */
interface Flows {
  steps: number[];
  firstMs: number | undefined;
}

/** A null slot (an empty bucket, an empty book side), in units. */
export const NULL_UNITS = -1;

/** The values of the row last parsed (NULL_UNITS for a null slot): the chance group, and the quote group. */
let values: Int32Array = new Int32Array(4 * 288);
let quoteValues: Int32Array = new Int32Array(8 * 288);

/** Packed text → its values into `into` (grown as needed); returns the values and their count. A raw row's 'a;b;…' reads alike. */
function parseInto(v: string, into: Int32Array): { buf: Int32Array; n: number } {
  let buf = into;
  let n = 0;
  let value = NULL_UNITS;
  for (let i = 0; i < v.length; i++) {
    const ch = v.charCodeAt(i);
    if (ch === 44 /* , */ || ch === 59 /* ; */) {
      if (n === buf.length) buf = grown(buf);
      buf[n++] = value;
      value = NULL_UNITS;
    } else {
      value = (value === NULL_UNITS ? 0 : value * 10) + (ch - 48);
    }
  }
  if (n === buf.length) buf = grown(buf);
  buf[n++] = value;
  return { buf, n };
}

/** The chance group of a packed text into `values`; returns its slots per array. */
function parsePacked(v: string): number {
  const { buf, n } = parseInto(v, values);
  values = buf;
  const slots = n / 4;
  if (!Number.isInteger(slots)) throw new Error(`a candles row whose arrays differ in length: ${v.slice(0, 80)}`);
  return slots;
}

/** The quote group of a packed text into `quoteValues`; returns its slots per array (0 for none). */
function parseQuotes(v: string | null): number {
  if (v === null) return 0;
  const { buf, n } = parseInto(v, quoteValues);
  quoteValues = buf;
  const slots = n / 8;
  if (!Number.isInteger(slots)) throw new Error(`a candles row whose quote arrays differ in length: ${v.slice(0, 80)}`);
  return slots;
}

function grown(a: Int32Array): Int32Array {
  const bigger = new Int32Array(2 * a.length);
  bigger.set(a);
  return bigger;
}

/** Appends the 8 quote values of slot i (nulls past the group's end) to `into`. */
function pushQuotes(into: number[], slots: number, i: number): void {
  for (let g = 0; g < 8; g++) into.push(i < slots ? (quoteValues[g * slots + i] as number) : NULL_UNITS);
}

/** The candles of a packed row with from ≤ t < to, each as (t, o, h, l, c[, 8 quote values]) onto `into`. */
function unpack(row: Row, step: number, from: number, to: number, into: number[], quotes: boolean): void {
  const slots = parsePacked(row.v as string);
  const qslots = quotes ? parseQuotes(row.w) : 0;
  for (let i = 0; i < slots; i++) {
    const o = values[i] as number;
    if (o === NULL_UNITS) continue;
    const t = row.p + i * step;
    if (t < from || t >= to) continue;
    into.push(t, o, values[slots + i] as number, values[2 * slots + i] as number, values[3 * slots + i] as number);
    if (quotes) pushQuotes(into, qslots, i);
  }
}

/** A stored trade group ('v…;nv…;tn…') of a row: (t, v, nv, tn) of each bucket with a trade, from ≤ t < to, onto `into`. */
function unpackFlows(row: Row, step: number, from: number, to: number, into: number[]): void {
  const [v, nv, tn] = (row.v as string).split(';').map((a) => a.split(',')) as [string[], string[], string[]];
  for (let i = 0; i < v.length; i++) {
    if (v[i] === '') continue;
    const t = row.p + i * step;
    if (t < from || t >= to) continue;
    into.push(t, Number(v[i]), Number(nv[i]), Number(tn[i]));
  }
}

/**
 * Candles in units of 1/10,000, flat: t, open, high, low, close of each candle in turn, ascending t.
 * What the API writes its bodies from without making an object (and four boxed numbers) per candle.
 */
export type PackedCandles = readonly number[];

/** One series' candles as read: packed, with the groups asked for aligned to them. */
export interface CandleSet {
  ohlc: PackedCandles;
  /** With `quotes`: per candle bid o, h, l, c then ask o, h, l, c, in units; NULL_UNITS where that side was empty throughout. */
  quotes?: readonly number[];
  /** With `flows`: per candle volume (10^-6 shares), notional (dollars), trades; NaN for all three before the trade data begins. */
  flows?: readonly number[];
}

const quoteOf = (q: readonly number[], j: number): QuoteCandle | null =>
  q[j] === NULL_UNITS ? null : { open: fromUnits(q[j] as number), high: fromUnits(q[j + 1] as number), low: fromUnits(q[j + 2] as number), close: fromUnits(q[j + 3] as number) };

/** inputs: the query. outputs: series → candles, ascending t (a series with none is absent). */
export async function readCandles(db: HistoryDb, q: CandleQuery): Promise<Map<number, Candle[]>> {
  const out = new Map<number, Candle[]>();
  for (const [id, set] of await readPackedCandles(db, q)) {
    const units = set.ohlc;
    const candles: Candle[] = new Array(units.length / 5);
    for (let i = 0, k = 0; i < units.length; i += 5, k++) {
      const candle: Candle = { t: units[i] as number, open: fromUnits(units[i + 1] as number), high: fromUnits(units[i + 2] as number), low: fromUnits(units[i + 3] as number), close: fromUnits(units[i + 4] as number) };
      if (set.quotes !== undefined) {
        candle.bid = quoteOf(set.quotes, 8 * k);
        candle.ask = quoteOf(set.quotes, 8 * k + 4);
      }
      if (set.flows !== undefined) {
        const v = set.flows[3 * k] as number;
        candle.volume = Number.isNaN(v) ? null : v / SHARE_UNITS;
        candle.notional = Number.isNaN(v) ? null : (set.flows[3 * k + 1] as number);
        candle.trades = Number.isNaN(v) ? null : (set.flows[3 * k + 2] as number);
      }
      candles[k] = candle;
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

/** Volume is stored in units of 10^-6 share (the exchange's precision): sums stay exact. */
export const SHARE_UNITS = 1_000_000;

/** Dollars rounded to 10^-6, as the candles endpoint and the archive give notional and vwap. */
export const roundMicro = (x: number) => Math.round(x * 1e6) / 1e6;

/** readCandles, each series' candles packed (CandleSet). */
export async function readPackedCandles(db: HistoryDb, q: CandleQuery): Promise<Map<number, CandleSet>> {
  const out = new Map<number, CandleSet>();
  if (q.series.length === 0) return out;
  const { step } = q;
  const bucket = q.bucket ?? step;
  const period = PERIOD_SECONDS[step];
  if (period === undefined || bucket % step !== 0) throw new Error(`no tier of step ${step} for buckets of ${bucket}`);
  const s0 = floorTo(q.start, bucket);
  const end = q.end;
  const series = [...q.series];
  const quotes = q.quotes === true;
  // A gap carries the close of the step before it: of the previous candle only when candles are steps.
  if (quotes && bucket !== step) throw new Error('quotes are read in candles of one step');
  const width = quotes ? 13 : 5;
  const flowSeries = q.flows === undefined ? [] : [...new Set(q.flows.values())];
  const quoted = quotes ? QUOTED : sql`null::text`;

  // One statement (one round trip, one snapshot: the mark and the rows it splits agree), its rows
  // ordered by kind, series and time. The mark: raw points (and trades) at or after it are not in
  // the tiers yet (0 when the rollup never ran).
  const rows = (await db.query(sql`
    with m as (select coalesce((select done_until from history_progress where name = ${ROLLUP_PROGRESS}), 0) as mark)
    select ${MARK}::int as k, 0 as series, mark as p, null::text as v, null::text as w from m
    union all
    -- inputs: series, step, window. outputs: packed rows that overlap the window.
    select ${STORED}::int, series, p, ${PACKED}, ${quoted} from candles
    where series = any(${series}::int[]) and step = ${step}::int and p > ${s0 - period}::int and p < ${end}::int
    union all
    -- inputs: series, step, start. outputs: the last two packed rows before the window, for the close it starts from.
    select ${SEED_STORED}::int, k.series, k.p, k.v, k.w from unnest(${series}::int[]) as s(id)
    cross join lateral (
      select series, p, ${PACKED} as v, ${quoted} as w from candles where series = s.id and step = ${step}::int and p < ${s0}::int order by p desc limit 2
    ) k
    union all
    -- inputs: series, step, [max(mark, start), end). outputs: per series and step bucket, its candle from raw points as 'o;h;l;c'
    -- (and the book top's as 'bo;bh;bl;bc;ao;ah;al;ac': a side's open and close its first and last quoted point).
    select ${RAW}::int, series, (t / ${step}::int) * ${step}::int,
           concat_ws(';', (min(t::bigint * 16384 + round(chance * 10000)::int) % 16384)::int, max(round(chance * 10000))::int,
                          min(round(chance * 10000))::int, (max(t::bigint * 16384 + round(chance * 10000)::int) % 16384)::int),
           ${quotes ? sql`concat_ws(';', coalesce(((min(t::bigint * 16384 + bid) % 16384)::int)::text, ''), coalesce(max(bid)::text, ''), coalesce(min(bid)::text, ''), coalesce(((max(t::bigint * 16384 + bid) % 16384)::int)::text, ''),
                          coalesce(((min(t::bigint * 16384 + ask) % 16384)::int)::text, ''), coalesce(max(ask)::text, ''), coalesce(min(ask)::text, ''), coalesce(((max(t::bigint * 16384 + ask) % 16384)::int)::text, ''))` : sql`null::text`}
    from raw_points where series = any(${series}::int[]) and t >= ${s0}::int and t >= (select mark from m) and t < ${end}::int
    group by 2, 3
    union all
    -- inputs: series, [mark, start). outputs: the last raw point before the window not yet rolled up; with quotes, the close
    -- of each book side in that point's step bucket as 'bid;ask' (its last quoted point there; '' for none).
    select ${SEED_RAW}::int, s.id, k.t, round(k.chance * 10000)::int::text,
           ${quotes ? sql`concat_ws(';', coalesce((${sideClose(sql`bid`, step, s0)})::text, ''), coalesce((${sideClose(sql`ask`, step, s0)})::text, ''))` : sql`null::text`}
    from unnest(${series}::int[]) as s(id)
    cross join lateral (
      select t, chance from raw_points where series = s.id and t >= (select mark from m) and t < ${s0}::int order by t desc limit 1
    ) k
    ${flowSeries.length === 0 ? sql`` : sql`
    union all
    -- inputs: trade series, step, window. outputs: the trade group of the packed rows that overlap it.
    select ${FLOW_STORED}::int, series, p, ${FLOWED}, null from candles
    where series = any(${flowSeries}::int[]) and step = ${step}::int and p > ${s0 - period}::int and p < ${end}::int and v is not null
    union all
    -- inputs: trade series, step, [max(mark, start), end) by the exchange's time. outputs: per series and step bucket 'v;nv;tn' from the tape.
    select ${FLOW_RAW}::int, series, (floor(at_ms / 1000)::int / ${step}::int) * ${step}::int,
           concat_ws(';', sum(round(size * 1000000))::bigint, sum(price * size), count(*)), null
    from ${printsBetween(sql`greatest(${s0}::bigint, (select mark from m)) * 1000`, sql`${end}::bigint * 1000`, flowSeries)} tp
    group by 2, 3
    union all
    -- inputs: trade series. outputs: when each one's trade data begins.
    select ${FLOW_FIRST}::int, series, 0, first_ms::text, null from trade_series where series = any(${flowSeries}::int[])`}
    order by 1, 2, 3
  `)) as Row[];

  let mark = 0;
  const parts = new Map<number, Parts>();
  const of = (id: number) => {
    let p = parts.get(id);
    if (p === undefined) parts.set(id, (p = { stored: [], raw: [], seed: undefined }));
    return p;
  };
  const flows = new Map<number, Flows>();
  const flowsOf = (id: number) => {
    let f = flows.get(id);
    if (f === undefined) flows.set(id, (f = { steps: [], firstMs: undefined }));
    return f;
  };
  const before: number[] = [];
  for (const row of rows) {
    if (row.k === MARK) mark = row.p;
    else if (row.k === STORED) unpack(row, step, s0, end, of(row.series).stored, quotes);
    else if (row.k === SEED_STORED) {
      // Ascending p: the last candle before the window is the last one found.
      before.length = 0;
      unpack(row, step, -Infinity, s0, before, quotes);
      if (before.length > 0) of(row.series).seed = before.slice(before.length - width);
    } else if (row.k === RAW) {
      parsePacked(row.v as string);
      const into = of(row.series).raw;
      into.push(row.p, values[0] as number, values[1] as number, values[2] as number, values[3] as number);
      if (quotes) pushQuotes(into, parseQuotes(row.w), 0);
    } else if (row.k === SEED_RAW) {
      const c = Number(row.v);
      const seed = [row.p, c, c, c, c];
      if (quotes) {
        let [b, a] = (row.w as string).split(';').map((x) => (x === '' ? NULL_UNITS : Number(x))) as [number, number];
        // A day bucket holding the mark has its earlier hours in the tier: a side quoted only there closes there.
        const held = of(row.series).seed;
        if (held !== undefined && floorTo(held[0] as number, step) === floorTo(row.p, step)) {
          if (b === NULL_UNITS) b = held[8] as number;
          if (a === NULL_UNITS) a = held[12] as number;
        }
        seed.push(b, b, b, b, a, a, a, a);
      }
      of(row.series).seed = seed;
    } else if (row.k === FLOW_STORED) unpackFlows(row, step, s0, end, flowsOf(row.series).steps);
    else if (row.k === FLOW_RAW) {
      const [v, nv, tn] = (row.v as string).split(';').map(Number) as [number, number, number];
      const f = flowsOf(row.series).steps;
      // After the stored ones (kinds are ordered); the day bucket holding the mark is in both: summed.
      if (f.length > 0 && f[f.length - 4] === row.p) {
        f[f.length - 3] = (f[f.length - 3] as number) + v;
        f[f.length - 2] = (f[f.length - 2] as number) + nv;
        f[f.length - 1] = (f[f.length - 1] as number) + tn;
      } else f.push(row.p, v, nv, tn);
    } else if (row.k === FLOW_FIRST) flowsOf(row.series).firstMs = Number(row.v);
  }

  const steps: number[] = [];
  for (const id of series) {
    const part = parts.get(id);
    if (part === undefined) continue;
    const resolved = q.ends?.get(id);
    const last = floorTo(Math.min(end - 1, q.now, resolved?.t ?? Infinity), bucket);
    mergeSteps(part.stored, part.raw, mark, width, steps);
    // Compose step candles into buckets, gaps carried forward from the previous close; nothing
    // before the first point: without a close before the window, start at its first candle.
    const units: number[] = [];
    const q8: number[] = [];
    let prev = part.seed?.[4];
    /** The book top's closes before (bid, ask), carried into gaps like the chance's. */
    let prevBid = part.seed?.[8] ?? NULL_UNITS;
    let prevAsk = part.seed?.[12] ?? NULL_UNITS;
    const gap = (t: number) => {
      units.push(t, prev as number, prev as number, prev as number, prev as number);
      if (quotes) q8.push(prevBid, prevBid, prevBid, prevBid, prevAsk, prevAsk, prevAsk, prevAsk);
    };
    let next = prev !== undefined ? s0 : undefined;
    for (let i = 0; i < steps.length; i += width) {
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
        if (quotes) combineQuotes(q8, q8.length - 8, steps, i + 5);
      } else {
        if (next !== undefined && prev !== undefined) for (; next < b; next += bucket) gap(next);
        units.push(b, o, h, l, c);
        if (quotes) for (let g = 5; g < 13; g++) q8.push(steps[i + g] as number);
        next = b + bucket;
      }
      prev = c;
      if (quotes) {
        // A side's close is null exactly when it was empty throughout the step: the gap after it is too.
        prevBid = steps[i + 8] as number;
        prevAsk = steps[i + 12] as number;
      }
    }
    if (next !== undefined && prev !== undefined) for (; next <= last; next += bucket) gap(next);
    if (units.length === 0) continue;
    const j = units.length - 5;
    if (resolved !== undefined && units[j] === floorTo(resolved.t, bucket)) {
      const final = Math.round(resolved.chance * 10_000);
      units[j + 2] = Math.max(units[j + 2] as number, final);
      units[j + 3] = Math.min(units[j + 3] as number, final);
      units[j + 4] = final;
    }
    const set: CandleSet = { ohlc: units };
    if (quotes) set.quotes = q8;
    const flowId = q.flows?.get(id);
    if (flowId !== undefined) set.flows = bucketFlows(units, bucket, flows.get(flowId));
    out.set(id, set);
  }
  return out;
}

/** The last quoted price of a book side in the step bucket of the raw point `k` (at or after the mark, before the window). */
const sideClose = (side: SQLQuery, step: number, s0: number) => sql`
  select r.${side} from raw_points r
  where r.series = s.id and r.t >= greatest((select mark from m), (k.t / ${step}::int) * ${step}::int) and r.t < ${s0}::int and r.${side} is not null
  order by r.t desc limit 1`;

/** Bucket k's quotes (at `at` in q8) followed by a later step's (at `from` in `steps`): a side's open the first quoted, close the last. */
function combineQuotes(q8: number[], at: number, steps: readonly number[], from: number): void {
  for (let side = 0; side < 8; side += 4) {
    const o = steps[from + side] as number;
    if (o === NULL_UNITS) continue;
    const j = at + side;
    if (q8[j] === NULL_UNITS) {
      for (let g = 0; g < 4; g++) q8[j + g] = steps[from + side + g] as number;
    } else {
      q8[j + 1] = Math.max(q8[j + 1] as number, steps[from + side + 1] as number);
      q8[j + 2] = Math.min(q8[j + 2] as number, steps[from + side + 2] as number);
      q8[j + 3] = steps[from + side + 3] as number;
    }
  }
}

/**
 * Per candle of `units` (ascending buckets), the trades of its bucket summed from the step buckets:
 * 0 without a trade, NaN (null) when the bucket ends before the series' trade data begins or it has none.
 */
function bucketFlows(units: readonly number[], bucket: number, flows: Flows | undefined): number[] {
  const out: number[] = [];
  const steps = flows?.steps ?? [];
  const begins = flows?.firstMs === undefined ? Infinity : flows.firstMs / 1000;
  let i = 0;
  for (let j = 0; j < units.length; j += 5) {
    const b = units[j] as number;
    while (i < steps.length && (steps[i] as number) < b) i += 4;
    if (b + bucket <= begins) {
      out.push(NaN, NaN, NaN);
      continue;
    }
    let v = 0;
    let nv = 0;
    let tn = 0;
    for (; i < steps.length && (steps[i] as number) < b + bucket; i += 4) {
      v += steps[i + 1] as number;
      nv += steps[i + 2] as number;
      tn += steps[i + 3] as number;
    }
    out.push(v, nv, tn);
  }
  return out;
}

/**
 * One series' step candles in ascending t into `out` (flat, `width` each: t, o, h, l, c and the
 * quotes when read): stored before the mark; from raw at or after it (stored when raw has none: a
 * backfill); merged for the bucket holding the mark (stored first, raw later).
 */
function mergeSteps(stored: readonly number[], raw: readonly number[], mark: number, width: number, out: number[]): void {
  out.length = 0;
  let i = 0;
  let j = 0;
  while (i < stored.length || j < raw.length) {
    const ts = i < stored.length ? (stored[i] as number) : Infinity;
    const tr = j < raw.length ? (raw[j] as number) : Infinity;
    if (ts < tr) {
      for (let g = 0; g < width; g++) out.push(stored[i + g] as number);
      i += width;
    } else if (tr < ts || tr >= mark) {
      for (let g = 0; g < width; g++) out.push(raw[j + g] as number);
      if (ts === tr) i += width;
      j += width;
    } else {
      out.push(ts, stored[i + 1] as number, Math.max(stored[i + 2] as number, raw[j + 2] as number), Math.min(stored[i + 3] as number, raw[j + 3] as number), raw[j + 4] as number);
      if (width > 5) {
        const at = out.length;
        for (let g = 5; g < 13; g++) out.push(stored[i + g] as number);
        combineQuotes(out, at, raw, j + 5);
      }
      i += width;
      j += width;
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
