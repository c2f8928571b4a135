import type { HistoryPoint } from '../protocol.js';
import type { HistoryRange } from '../history-range.js';
import { hashUnit } from './prng.js';

/**
 * Deterministic price history of a market's first outcome: smooth value noise over four time scales
 * around the market's opening price, bent over the last day so it ends exactly at the current price.
 * Points older than a day therefore never change, whatever the book does now.
 */
const OCTAVES: ReadonlyArray<[number, number]> = [
  [3_600, 0.05],
  [21_600, 0.15],
  [86_400, 0.3],
  [604_800, 0.55],
];
const RAMP_SECONDS = 86_400;

const logit = (p: number) => Math.log(p / (1 - p));
const logistic = (x: number) => 1 / (1 + Math.exp(-x));
const clampP = (p: number) => Math.min(0.995, Math.max(0.005, p));

/**
 * The noise's lattice values, kept per series key: every catalog page renders every market's price a
 * day ago and at its end (three noise calls of eight hashes each), and hashing was a third of the
 * simulator's time at 5,000 open events, enough to slow the stack it serves in bench:api. Per key and
 * time scale, a few lattice cells (by k mod SLOTS) hold their two values: the times a render and a
 * history series ask for fall in the same cells over and over. The values are a pure function of
 * (key, scale, k), so keeping them changes nothing. One entry per series key, forgotten when its
 * market leaves the world (forgetSeries); emptied when full all the same.
 */
interface Cell {
  k: number;
  a: number;
  b: number;
}
const SLOTS = 4;
const cells = new Map<string, Cell[]>();
const KEYS_MAX = 100_000;

/** The market behind `key` is gone (pruned from the world): its lattice values are never asked for again. */
export function forgetSeries(key: string): void {
  cells.delete(key);
}

/** Series keys whose lattice values are held. */
export function seriesHeld(): number {
  return cells.size;
}

function noise(key: string, t: number): number {
  let mine = cells.get(key);
  if (mine === undefined) {
    if (cells.size >= KEYS_MAX) cells.clear();
    mine = Array.from({ length: OCTAVES.length * SLOTS }, () => ({ k: Number.NaN, a: 0, b: 0 }));
    cells.set(key, mine);
  }
  let sum = 0;
  for (let o = 0; o < OCTAVES.length; o++) {
    const [scale, amplitude] = OCTAVES[o]!;
    const k = Math.floor(t / scale);
    const f = t / scale - k;
    const s = f * f * (3 - 2 * f);
    const cell = mine[o * SLOTS + (k & (SLOTS - 1))]!;
    if (cell.k !== k) {
      cell.k = k;
      cell.a = hashUnit(`${key}:${scale}:${k}`);
      cell.b = hashUnit(`${key}:${scale}:${k + 1}`);
    }
    sum += amplitude * (cell.a + (cell.b - cell.a) * s);
  }
  return sum;
}

export interface SeriesSpec {
  key: string;
  initial: number;
  /** The price the series must end at (current display price, or the final price). */
  current: number;
  /** Unix seconds of the last point. */
  endSec: number;
}

export function priceAt(spec: SeriesSpec, t: number): number {
  const anchor = logit(clampP(spec.initial));
  const base = anchor + noise(spec.key, t);
  const baseEnd = anchor + noise(spec.key, spec.endSec);
  const w = Math.min(1, Math.max(0, 1 - (spec.endSec - t) / RAMP_SECONDS));
  // A resolved market ends at 0 or 1 exactly; the bend goes to the clamp, then the last point is exact.
  const p = logistic(base + w * (logit(clampP(spec.current)) - baseEnd));
  return t >= spec.endSec ? spec.current : p;
}

export function series(spec: SeriesSpec, range: HistoryRange, invert: boolean): HistoryPoint[] {
  const step = range.fidelity * 60;
  const out: HistoryPoint[] = [];
  const value = (t: number) => {
    const p = priceAt(spec, t);
    return Math.round((invert ? 1 - p : p) * 10_000) / 10_000;
  };
  for (let t = Math.ceil(range.start / step) * step; t <= range.end; t += step) out.push({ t, p: value(t) });
  const last = out[out.length - 1];
  if (range.end === spec.endSec && (!last || last.t < range.end)) out.push({ t: range.end, p: value(range.end) });
  return out;
}
