import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@pm/shared/db';
import { createTestDatabase, resetDatabase, type TestDatabase } from '@pm/shared/testing';
import { insertRawPoints, readCandles, runRollup, type Candle, type CandleQuery, type QuoteCandle, type RawPoint } from '@pm/shared/history';
import { PRICE_UNITS, recordTrades } from '@pm/shared/trades';

/**
 * Reading candles against a real Postgres: whatever the rollup's mark (points before it read from
 * the tiers, after it from the raw points, the bucket holding it from both), every window, step and
 * bucket gives the candles a plain recomputation from the points gives — first, highest, lowest and
 * last point of each bucket, gaps carried forward, nothing before a series' first point, and a
 * resolved series ending at its final price; the book top's bid and ask candles likewise (a side's
 * first and last quoted point, null where it was empty throughout); and the trades of each candle's
 * bucket summed from the tape (0 without one, null before the series' trade data begins).
 */

const DAY = 86_400;
/** A day boundary, so windows cross from one day's rows into the next. */
const T0 = 20_000 * DAY;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('history_read');
});
afterAll(async () => {
  await tdb?.drop();
});

const floorTo = (t: number, step: number) => Math.floor(t / step) * step;
const units = (chance: number) => Math.round(chance * 10_000);

interface Trade {
  series: number;
  atMs: number;
  price: number;
  size: number;
}

/** Trades onto the tape through its writer (which also notes when each series' data begins). */
/** Identity keys: every print drawn is a distinct trade. */
let nextKey = 1;

async function insertTrades(trades: readonly Trade[]): Promise<void> {
  await tdb.db.query(sql`insert into series (id, token_id) select s, 't' || s from generate_series(1, 6) s on conflict do nothing`);
  await recordTrades(tdb.db, trades.map((t) => ({ series: t.series, atMs: t.atMs, px: Math.round(t.price * PRICE_UNITS), sz: t.size, key: String(nextKey++) })));
}

/** Which series' trades count for each series read: 1 takes 5's (an outcome 1 read through outcome 0's chance), the others their own. */
const FLOWS = new Map([
  [1, 5],
  [2, 2],
  [3, 3],
  [4, 4],
]);

/** A side's candle over points in time order (first, highest, lowest, last quoted price), null when never quoted. */
function sideCandle(prices: ReadonlyArray<number | null | undefined>): QuoteCandle | null {
  const quoted = prices.filter((p): p is number => p !== null && p !== undefined).map(units);
  if (quoted.length === 0) return null;
  return { open: quoted[0]! / 10_000, high: Math.max(...quoted) / 10_000, low: Math.min(...quoted) / 10_000, close: quoted.at(-1)! / 10_000 };
}

const flat = (side: QuoteCandle | null): QuoteCandle | null => (side === null ? null : { open: side.close, high: side.close, low: side.close, close: side.close });

/** The candles of one query, recomputed from the points alone (and the trades, for volume). */
function recompute(points: readonly RawPoint[], q: CandleQuery, trades: readonly Trade[] = []): Map<number, Candle[]> {
  const bucket = q.bucket ?? q.step;
  const s0 = floorTo(q.start, bucket);
  const out = new Map<number, Candle[]>();
  for (const id of q.series) {
    const resolved = q.ends?.get(id);
    const mine = points.filter((p) => p.series === id && p.t < q.end).sort((a, b) => a.t - b.t);
    const before = mine.filter((p) => p.t < s0).at(-1);
    // A step bucket starting after the resolution is not read; the one holding it is, whole.
    const inside = mine.filter((p) => p.t >= s0 && (resolved === undefined || floorTo(p.t, q.step) <= resolved.t));
    const byBucket = new Map<number, [number, number, number, number]>();
    for (const p of inside) {
      const b = floorTo(p.t, bucket);
      const v = units(p.chance);
      const held = byBucket.get(b);
      byBucket.set(b, held === undefined ? [v, v, v, v] : [held[0], Math.max(held[1], v), Math.min(held[2], v), v]);
    }
    const last = floorTo(Math.min(q.end - 1, q.now, resolved?.t ?? Infinity), bucket);
    let prev = before === undefined ? undefined : units(before.chance);
    const from = prev !== undefined ? s0 : Math.min(...byBucket.keys());
    const candles: Array<[number, number, number, number, number]> = [];
    for (let b = from; b <= last; b += bucket) {
      const held = byBucket.get(b);
      if (held !== undefined) {
        candles.push([b, ...held]);
        prev = held[3];
      } else if (prev !== undefined) {
        candles.push([b, prev, prev, prev, prev]);
      }
    }
    const tail = candles.at(-1);
    if (resolved !== undefined && tail !== undefined && tail[0] === floorTo(resolved.t, bucket)) {
      const final = units(resolved.chance);
      candles[candles.length - 1] = [tail[0], tail[1], Math.max(tail[2], final), Math.min(tail[3], final), final];
    }
    if (candles.length === 0) continue;
    const list: Candle[] = candles.map(([t, o, h, l, c]) => ({ t, open: o / 10_000, high: h / 10_000, low: l / 10_000, close: c / 10_000 }));
    if (q.quotes) {
      // Buckets of one step: a bucket's sides from its points; a gap carries the previous bucket's closes.
      const lastStep = before === undefined ? undefined : floorTo(before.t, q.step);
      const seedPoints = lastStep === undefined ? [] : mine.filter((p) => p.t >= lastStep && p.t < s0);
      let bid = flat(sideCandle(seedPoints.map((p) => p.bid)));
      let ask = flat(sideCandle(seedPoints.map((p) => p.ask)));
      for (const candle of list) {
        const here = inside.filter((p) => floorTo(p.t, bucket) === candle.t);
        if (here.length > 0) {
          bid = sideCandle(here.map((p) => p.bid));
          ask = sideCandle(here.map((p) => p.ask));
          candle.bid = bid;
          candle.ask = ask;
        } else {
          candle.bid = flat(bid);
          candle.ask = flat(ask);
        }
        bid = flat(bid);
        ask = flat(ask);
      }
    }
    const flowSeries = q.flows?.get(id);
    if (flowSeries !== undefined) {
      const theirs = trades.filter((t) => t.series === flowSeries && t.atMs < q.end * 1000);
      const begins = Math.min(...trades.filter((t) => t.series === flowSeries).map((t) => t.atMs)) / 1000;
      for (const candle of list) {
        if (candle.t + bucket <= begins) {
          Object.assign(candle, { volume: null, notional: null, trades: null });
          continue;
        }
        const mine = theirs.filter((t) => t.atMs >= candle.t * 1000 && t.atMs < (candle.t + bucket) * 1000);
        candle.volume = mine.reduce((n, t) => n + Math.round(t.size * 1e6), 0) / 1e6;
        candle.notional = mine.reduce((n, t) => n + t.price * t.size, 0);
        candle.trades = mine.length;
      }
    }
    out.set(id, list);
  }
  return out;
}

/** Candles compared exactly, but notional to a millionth of a dollar (a sum of products of doubles, summed in another order). */
function expectCandles(got: Map<number, Candle[]>, want: Map<number, Candle[]>, label: string): void {
  const strip = (m: Map<number, Candle[]>) => new Map([...m].map(([k, list]) => [k, list.map(({ notional, ...c }) => ({ ...c, notional: notional === undefined || notional === null ? notional : Math.round(notional * 1e6) }))]));
  expect(strip(got), label).toEqual(strip(want));
}

const pointArb = fc.record({
  series: fc.integer({ min: 1, max: 3 }),
  t: fc.integer({ min: T0 - 3 * 3600, max: T0 + 5 * 3600 - 1 }),
  chance: fc.integer({ min: 0, max: 10_000 }).map((u) => u / 10_000),
  bid: fc.option(fc.integer({ min: 0, max: 10_000 }).map((u) => u / 10_000), { nil: null }),
  ask: fc.option(fc.integer({ min: 0, max: 10_000 }).map((u) => u / 10_000), { nil: null }),
});

const tradeArb = fc.record({
  series: fc.constantFrom(1, 2, 5),
  atMs: fc.integer({ min: (T0 - 3 * 3600) * 1000, max: (T0 + 5 * 3600) * 1000 - 1 }),
  price: fc.integer({ min: 1, max: 999 }).map((u) => u / 1000),
  size: fc.integer({ min: 1, max: 50_000_000 }).map((u) => u / 1_000_000),
});

/** A query over series 1-4 (4 never has a point): a step, a bucket of 1-3 steps, an aligned end. */
const queryArb = fc
  .record({
    step: fc.constantFrom(60, 300, 3600, 86_400),
    buckets: fc.integer({ min: 1, max: 3 }),
    start: fc.integer({ min: T0 - 4 * 3600, max: T0 + 5 * 3600 }),
    span: fc.integer({ min: 1, max: 400 }),
    now: fc.integer({ min: T0 - 3600, max: T0 + 6 * 3600 }),
    resolved: fc.option(fc.record({ series: fc.integer({ min: 1, max: 3 }), t: fc.integer({ min: T0 - 3 * 3600, max: T0 + 5 * 3600 }), chance: fc.constantFrom(0, 1, 0.37) })),
  })
  .map(({ step, buckets, start, span, now, resolved }): CandleQuery => {
    const bucket = step * buckets;
    // The API's end is aligned up to the step; a tier's stored bucket runs past an unaligned end.
    const end = Math.ceil((start + span * step) / step) * step;
    const ends = resolved === null ? undefined : new Map([[resolved.series, { t: resolved.t, chance: resolved.chance }]]);
    return { series: [1, 2, 3, 4], step, bucket, start, end, now, ...(ends ? { ends } : {}), quotes: buckets === 1, flows: FLOWS };
  });

function dedupe(points: readonly RawPoint[]): RawPoint[] {
  const seen = new Set<string>();
  return points.filter((p) => !seen.has(`${p.series}:${p.t}`) && seen.add(`${p.series}:${p.t}`));
}

describe('readCandles', () => {
  it('random points, the rollup stopped at any hour, random windows → the candles recomputed from the points', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(pointArb, { minLength: 1, maxLength: 300 }),
        fc.integer({ min: -3, max: 5 }),
        fc.array(queryArb, { minLength: 4, maxLength: 4 }),
        fc.array(tradeArb, { maxLength: 200 }),
        async (raw, rolledHours, queries, drawn) => {
          await resetDatabase(tdb.db);
          const points = dedupe(raw);
          // The rollup starts at the first point's hour: the tape begins there too (as it does live).
          const first = Math.floor(Math.min(...points.map((p) => p.t)) / 3600) * 3600;
          const trades = drawn.filter((t) => t.atMs >= first * 1000);
          for (let i = 0; i < points.length; i += 5_000) await insertRawPoints(tdb.db, points.slice(i, i + 5_000));
          await insertTrades(trades);
          // Every closed hour up to T0 + rolledHours goes into the tiers; the rest stays raw only.
          await runRollup(tdb.db, { now: T0 + rolledHours * 3600 + 120 });
          for (const q of queries) {
            expectCandles(await readCandles(tdb.db, q), recompute(points, q, trades), JSON.stringify({ ...q, ends: q.ends ? [...q.ends] : undefined, flows: undefined }));
          }
        },
      ),
      { numRuns: 25 },
    );
  }, 240_000);
});
