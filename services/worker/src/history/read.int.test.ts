import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, resetDatabase, type TestDatabase } from '@pm/shared/testing';
import { insertRawPoints, readCandles, runRollup, type Candle, type CandleQuery, type RawPoint } from '@pm/shared/history';

/**
 * Reading candles against a real Postgres: whatever the rollup's mark (points before it read from
 * the tiers, after it from the raw points, the bucket holding it from both), every window, step and
 * bucket gives the candles a plain recomputation from the points gives — first, highest, lowest and
 * last point of each bucket, gaps carried forward, nothing before a series' first point, and a
 * resolved series ending at its final price.
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

/** The candles of one query, recomputed from the points alone. */
function recompute(points: readonly RawPoint[], q: CandleQuery): Map<number, Candle[]> {
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
    if (candles.length > 0) out.set(id, candles.map(([t, o, h, l, c]) => ({ t, open: o / 10_000, high: h / 10_000, low: l / 10_000, close: c / 10_000 })));
  }
  return out;
}

const pointArb = fc.record({
  series: fc.integer({ min: 1, max: 3 }),
  t: fc.integer({ min: T0 - 3 * 3600, max: T0 + 5 * 3600 - 1 }),
  chance: fc.integer({ min: 0, max: 10_000 }).map((u) => u / 10_000),
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
    return { series: [1, 2, 3, 4], step, bucket, start, end, now, ...(ends ? { ends } : {}) };
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
        async (raw, rolledHours, queries) => {
          await resetDatabase(tdb.db);
          const points = dedupe(raw);
          for (let i = 0; i < points.length; i += 5_000) await insertRawPoints(tdb.db, points.slice(i, i + 5_000));
          // Every closed hour up to T0 + rolledHours goes into the tiers; the rest stays raw only.
          await runRollup(tdb.db, { now: T0 + rolledHours * 3600 + 120 });
          for (const q of queries) expect(await readCandles(tdb.db, q), JSON.stringify({ ...q, ends: q.ends ? [...q.ends] : undefined })).toEqual(recompute(points, q));
        },
      ),
      { numRuns: 25 },
    );
  });
});
