import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sql } from '@pm/shared/db';
import { createTestDatabase, resetDatabase, type TestDatabase } from '@pm/shared/testing';
import { ensureRawPartitions, insertRawPoints, rawPartitions, rollupMark, runRollup, runUpkeep, type RawPoint } from '@pm/shared/history';
import { PRICE_UNITS, recordTrades } from '@pm/shared/trades';

/**
 * The rollup of raw points into the candle tiers against a real Postgres: exact against a plain
 * recomputation from the points, repeated after a kill without counting a point twice, caught up
 * after a day of downtime, and raw partitions dropped only past retention and once rolled up.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const DAY = 86_400;
/** A day boundary, so slices cross from one day's rows into the next. */
const T0 = 20_000 * DAY;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('history_rollup');
});
afterAll(async () => {
  await tdb?.drop();
});
beforeEach(async () => {
  await resetDatabase(tdb.db);
});

type Cell = [o: number, h: number, l: number, c: number, n: number];

/** Every stored candle of a step: `series:t` → [o, h, l, c, n] in units. */
async function stored(step: number): Promise<Map<string, Cell>> {
  const rows: Array<{ series: number; p: number; o: Array<number | null>; h: number[]; l: number[]; c: number[]; n: number[] }> = await tdb.db.query(
    sql`select series, p, o, h, l, c, n from candles where step = ${step}`,
  );
  const out = new Map<string, Cell>();
  for (const r of rows) {
    r.o.forEach((o, i) => {
      if (o !== null) out.set(`${r.series}:${r.p + i * step}`, [o, r.h[i]!, r.l[i]!, r.c[i]!, r.n[i]!]);
    });
  }
  return out;
}

type Quotes = Array<number | null>;

/** Every stored bid/ask candle of a step: `series:t` → [bo, bh, bl, bc, ao, ah, al, ac] (slots with a quoted side). */
async function storedQuotes(step: number): Promise<Map<string, Quotes>> {
  const rows: Array<{ series: number; p: number; q: Array<Array<number | null>> | null }> = await tdb.db.query(
    sql`select series, p, case when bo is not null then array[bo, bh, bl, bc, ao, ah, al, ac] end as q from candles where step = ${step}`,
  );
  const out = new Map<string, Quotes>();
  for (const r of rows) {
    if (r.q === null) continue;
    for (let i = 0; i < r.q[0]!.length; i++) {
      const cell = r.q.map((a) => a[i] ?? null);
      if (cell[0] !== null || cell[4] !== null) out.set(`${r.series}:${r.p + i * step}`, cell);
    }
  }
  return out;
}

/** The plain recomputation of the book tops: per series and bucket, each side's first, highest, lowest and last quoted price. */
function recomputeQuotes(points: readonly RawPoint[], step: number, before: number): Map<string, Quotes> {
  const out = new Map<string, Quotes>();
  const sorted = [...points].filter((p) => p.t < before).sort((a, b) => a.t - b.t);
  for (const p of sorted) {
    const key = `${p.series}:${Math.floor(p.t / step) * step}`;
    const cell = out.get(key) ?? [null, null, null, null, null, null, null, null];
    [p.bid, p.ask].forEach((price, side) => {
      if (price === null || price === undefined) return;
      const u = Math.round(price * 10_000);
      const j = 4 * side;
      cell[j] ??= u;
      cell[j + 1] = Math.max(cell[j + 1] ?? u, u);
      cell[j + 2] = Math.min(cell[j + 2] ?? u, u);
      cell[j + 3] = u;
    });
    if (cell[0] !== null || cell[4] !== null) out.set(key, cell);
  }
  return out;
}

/** A print on the tape as `trade_prints` gives it: exchange time in ms, price in dollars, size in shares. */
interface Trade {
  series: number;
  atMs: number;
  price: number;
  size: number;
  side: 'BUY' | 'SELL';
}

/** Trades onto the tape through its writer (each with its own identity key); the rollup reads them back from it. */
/** Identity keys: every print drawn is a distinct trade. */
let nextKey = 1;

async function insertTrades(trades: readonly Trade[]): Promise<void> {
  await tdb.db.query(sql`insert into series (id, token_id) select s, 't' || s from generate_series(1, 6) s on conflict do nothing`);
  const stored = await recordTrades(
    tdb.db,
    trades.map((t) => ({ series: t.series, atMs: t.atMs, px: Math.round(t.price * PRICE_UNITS), sz: t.side === 'SELL' ? -t.size : t.size, key: String(nextKey++) })),
  );
  expect(stored).toHaveLength(trades.length);
}

type Flow = [v: number, nv: number, tn: number];

/** Every stored bucket with a trade of a step: `series:t` → [volume in 10^-6 shares, notional, trades]. */
async function storedFlows(step: number): Promise<Map<string, Flow>> {
  const rows: Array<{ series: number; p: number; v: Array<number | null>; nv: number[]; tn: number[] }> = await tdb.db.query(
    sql`select series, p, v::float8[] as v, nv, tn from candles where step = ${step} and v is not null`,
  );
  const out = new Map<string, Flow>();
  for (const r of rows) r.v.forEach((v, i) => v !== null && out.set(`${r.series}:${r.p + i * step}`, [v, r.nv[i]!, r.tn[i]!]));
  return out;
}

/** The plain recomputation from the tape: per series and bucket (by the exchange's time), Σ size, Σ price × size, count. */
function recomputeFlows(trades: readonly Trade[], step: number, before: number): Map<string, Flow> {
  const out = new Map<string, Flow>();
  for (const t of trades) {
    if (t.atMs >= before * 1000) continue;
    const key = `${t.series}:${Math.floor(t.atMs / 1000 / step) * step}`;
    const held = out.get(key) ?? [0, 0, 0];
    out.set(key, [held[0] + Math.round(t.size * 1e6), held[1] + t.price * t.size, held[2] + 1]);
  }
  return out;
}

function expectFlows(got: Map<string, Flow>, want: Map<string, Flow>, label: string): void {
  expect([...got.keys()].sort(), label).toEqual([...want.keys()].sort());
  for (const [key, [v, nv, tn]] of want) {
    const [gv, gnv, gtn] = got.get(key)!;
    expect([gv, gtn], `${label} ${key}`).toEqual([v, tn]);
    expect(gnv, `${label} ${key} notional`).toBeCloseTo(nv, 6);
  }
}

/** The plain recomputation: per series and bucket, first, highest, lowest, last point and count. */
function recompute(points: readonly RawPoint[], step: number, before: number): Map<string, Cell> {
  const out = new Map<string, Cell>();
  const sorted = [...points].filter((p) => p.t < before).sort((a, b) => a.t - b.t);
  for (const p of sorted) {
    const key = `${p.series}:${Math.floor(p.t / step) * step}`;
    const v = Math.round(p.chance * 10_000);
    const held = out.get(key);
    out.set(key, held === undefined ? [v, v, v, v, 1] : [held[0], Math.max(held[1], v), Math.min(held[2], v), v, held[4] + 1]);
  }
  return out;
}

async function insert(points: readonly RawPoint[]): Promise<void> {
  // Distinct (series, t): the table keeps the first of a second, as the recorder writes one a flush.
  const seen = new Set<string>();
  const unique = points.filter((p) => !seen.has(`${p.series}:${p.t}`) && seen.add(`${p.series}:${p.t}`));
  for (let i = 0; i < unique.length; i += 5_000) await insertRawPoints(tdb.db, unique.slice(i, i + 5_000));
}

function dedupe(points: readonly RawPoint[]): RawPoint[] {
  const seen = new Set<string>();
  return points.filter((p) => !seen.has(`${p.series}:${p.t}`) && seen.add(`${p.series}:${p.t}`));
}

async function expectExact(points: readonly RawPoint[], before: number, label: string, trades: readonly Trade[] = []): Promise<void> {
  for (const step of [60, 300, 3600, 86_400]) {
    expectFlows(await storedFlows(step), recomputeFlows(trades, step, before), `${label} trades step ${step}`);
    // The day holding the mark is partial in the 1d tier (its hours so far): it is compared with
    // those hours, as every other tier is with the points before the mark.
    expect(await stored(step), `${label} step ${step}`).toEqual(recompute(points, step, before));
    expect(await storedQuotes(step), `${label} quotes step ${step}`).toEqual(recomputeQuotes(points, step, before));
  }
}

const tradeArb = fc.record({
  series: fc.integer({ min: 2, max: 4 }),
  atMs: fc.integer({ min: (T0 - 3 * 3600) * 1000, max: (T0 + 5 * 3600) * 1000 - 1 }),
  price: fc.integer({ min: 1, max: 999 }).map((u) => u / 1000),
  size: fc.integer({ min: 1, max: 50_000_000 }).map((u) => u / 1_000_000),
  side: fc.constantFrom('BUY' as const, 'SELL' as const),
});

const pointArb = fc.record({
  series: fc.integer({ min: 1, max: 3 }),
  t: fc.integer({ min: T0 - 3 * 3600, max: T0 + 5 * 3600 - 1 }),
  chance: fc.integer({ min: 0, max: 10_000 }).map((u) => u / 10_000),
  bid: fc.option(fc.integer({ min: 0, max: 10_000 }).map((u) => u / 10_000), { nil: null }),
  ask: fc.option(fc.integer({ min: 0, max: 10_000 }).map((u) => u / 10_000), { nil: null }),
});

describe('rollup', () => {
  it('random points and trades → every tier (chance, book tops, volume) equals a plain recomputation from them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(pointArb, { minLength: 1, maxLength: 400 }), fc.array(tradeArb, { maxLength: 300 }), async (raw, drawn) => {
        await resetDatabase(tdb.db);
        const points = dedupe(raw);
        // The rollup starts at the first point's hour: trades before it are not in any tier.
        const first = Math.floor(Math.min(...points.map((q) => q.t)) / 3600) * 3600;
        const trades = drawn.filter((t) => t.atMs >= first * 1000);
        await insert(points);
        await insertTrades(drawn);
        const now = T0 + 5 * 3600 + 600;
        const result = await runRollup(tdb.db, { now });
        expect(result.doneUntil).toBe(T0 + 5 * 3600);
        expect(result.points).toBe(points.filter((p) => p.t >= first).length);
        expect(result.trades).toBe(trades.length);
        await expectExact(points, T0 + 5 * 3600, 'once', trades);
        // Again from an earlier mark (the same slices recomputed): the same candles, no trade twice
        // (and now every trade drawn: the mark is before them all).
        await tdb.db.query(sql`update history_progress set done_until = ${T0 - 3 * 3600}`);
        await runRollup(tdb.db, { now });
        await expectExact(points, T0 + 5 * 3600, 'again', drawn);
      }),
      { numRuns: 12 },
    );
  }, 120_000);

  it('waits for the late-point margin: an hour is rolled up only 2 minutes after it closed', async () => {
    await insert([{ series: 1, t: T0 + 10, chance: 0.5 }]);
    expect((await runRollup(tdb.db, { now: T0 + 3600 + 60 })).slices).toBe(0);
    expect((await runRollup(tdb.db, { now: T0 + 3600 + 121 })).slices).toBe(1);
    expect(await rollupMark(tdb.db)).toBe(T0 + 3600);
  });

  it('after a day of downtime catches up every hour, then leaves no gap and no double with two workers at once', async () => {
    const points: RawPoint[] = [];
    for (let t = T0; t < T0 + 30 * 3600; t += 47) points.push({ series: 1 + (t % 2), t, chance: ((t * 7) % 10_000) / 10_000, bid: t % 5 === 0 ? null : ((t * 3) % 9_000) / 10_000, ask: ((t * 3) % 9_000 + 500) / 10_000 });
    const trades: Trade[] = [];
    for (let ms = T0 * 1000; ms < (T0 + 30 * 3600) * 1000; ms += 61_003) {
      trades.push({ series: 1 + (ms % 3), atMs: ms, price: (1 + (ms % 997)) / 1000, size: (ms % 7_000_000) / 1_000_000 + 1, side: ms % 2 === 0 ? 'BUY' : 'SELL' });
    }
    await insert(points.filter((p) => p.t < T0 + 2 * 3600));
    await insertTrades(trades.filter((t) => t.atMs < (T0 + 2 * 3600) * 1000));
    await runRollup(tdb.db, { now: T0 + 2 * 3600 + 200 });
    expect(await rollupMark(tdb.db)).toBe(T0 + 2 * 3600);
    // The worker is down for a day while points and trades keep arriving.
    await insert(points.filter((p) => p.t >= T0 + 2 * 3600));
    await insertTrades(trades.filter((t) => t.atMs >= (T0 + 2 * 3600) * 1000));
    const now = T0 + 30 * 3600 + 200;
    const [a, b] = await Promise.all([runRollup(tdb.db, { now }), runRollup(tdb.db, { now })]);
    expect(a.slices + b.slices).toBe(28);
    expect(a.trades + b.trades).toBe(trades.filter((t) => t.atMs >= (T0 + 2 * 3600) * 1000).length);
    expect(await rollupMark(tdb.db)).toBe(T0 + 30 * 3600);
    await expectExact(points, T0 + 30 * 3600, 'caught up', trades);
  });

  it('a rollup killed (SIGKILL) inside a slice is repeated without counting a point or a trade twice', async () => {
    const points: RawPoint[] = [];
    for (let t = T0; t < T0 + 3 * 3600; t += 13) points.push({ series: 1 + (t % 3), t, chance: ((t * 13) % 10_000) / 10_000, bid: ((t * 11) % 9_000) / 10_000, ask: t % 7 === 0 ? null : ((t * 11) % 9_000 + 100) / 10_000 });
    const trades: Trade[] = [];
    for (let ms = T0 * 1000; ms < (T0 + 3 * 3600) * 1000; ms += 7_919) {
      trades.push({ series: 1 + (ms % 4), atMs: ms, price: (1 + (ms % 997)) / 1000, size: (ms % 3_000_000) / 1_000_000 + 0.5, side: 'BUY' });
    }
    await insert(points);
    await insertTrades(trades);
    const now = T0 + 3 * 3600 + 200;
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'rollup-child.ts'), JSON.stringify({ databaseUrl: tdb.url, now })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // The child is inside the first slice's transaction, its candles and mark written, not committed.
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => {
        if (d.toString().includes('in-slice')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`child exited early (${code})`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(await stored(60)).toEqual(new Map());
    // Its connection is gone with it; the rerun takes the lock once Postgres has noticed.
    const result = await runRollup(tdb.db, { now });
    expect(result.slices).toBe(3);
    expect(result.points).toBe(points.length);
    expect(result.trades).toBe(trades.length);
    await expectExact(points, T0 + 3 * 3600, 'after the kill', trades);
  });

  it('drops raw partitions past 48 hours once rolled up, never one the rollup still needs', async () => {
    const points: RawPoint[] = [];
    for (let t = T0; t < T0 + 4 * DAY; t += 600) points.push({ series: 1, t, chance: 0.5 });
    await insert(points);
    const now = T0 + 4 * DAY;
    await ensureRawPartitions(tdb.db, now, now);
    // Not rolled up yet: nothing is dropped, however old.
    const early = await runUpkeep(tdb.db, { now });
    expect(early.dropped).toEqual([]);
    // Rolled up to 2 days in: the first two days are behind both the 48 h line and the mark.
    await runRollup(tdb.db, { now: T0 + 2 * DAY + 200 });
    const later = await runUpkeep(tdb.db, { now });
    // (Earlier tests' partitions of the days before T0 go too: they are as old.)
    expect(later.dropped).toEqual(expect.arrayContaining([`raw_points_d${T0 / DAY}`, `raw_points_d${T0 / DAY + 1}`]));
    const days = (await rawPartitions(tdb.db)).map((p) => p.day);
    expect(days[0]).toBe(T0 / DAY + 2);
    // Upkeep made tomorrow's and the day after's.
    expect(days).toContain(now / DAY + 2);
    // The candles stay.
    expect((await stored(3600)).size).toBe(48);
    const raw: Array<{ n: number }> = await tdb.db.query(sql`select count(*)::int as n from raw_points`);
    expect(raw[0]?.n).toBe(points.filter((p) => p.t >= T0 + 2 * DAY).length);
  });

  it('deletes 1m candles after 7 days and 5m candles after 60 days; 1h and 1d stay', async () => {
    await insert([{ series: 1, t: T0 + 10, chance: 0.5 }]);
    await runRollup(tdb.db, { now: T0 + 3600 + 200 });
    const counts = async () => Promise.all([60, 300, 3600, 86_400].map(async (s) => (await stored(s)).size));
    expect(await counts()).toEqual([1, 1, 1, 1]);
    await runUpkeep(tdb.db, { now: T0 + 8 * DAY });
    expect(await counts()).toEqual([0, 1, 1, 1]);
    await runUpkeep(tdb.db, { now: T0 + 62 * DAY });
    expect(await counts()).toEqual([0, 0, 1, 1]);
  });
});
