import { roundTo } from './rounding.js';

/**
 * The same chance written five ways (docs/api.md "Odds object").
 * Structurally identical to the `Odds` resource schema in `api/resources.ts`.
 */
export interface Odds {
  /** Whole percent with a % sign, e.g. `25%`; with decimals where whole would say 0% or 100% (`0.3%`, `99.9%`). */
  percent: string;
  /** Decimal odds with two decimals, e.g. `4.00`; `1.00` for a certainty (chance 1), null for chance 0 (no finite payout). */
  decimal: string | null;
  /** numerator/denominator, e.g. `3/1`; null for chance 0 or 1 (no honest fraction). */
  fractional: string | null;
  /** Signed whole number with a leading + or -, e.g. `+300`; null for chance 0 or 1 (no line). */
  american: string | null;
  /** Whole cents with a cent sign, e.g. `25¢`. */
  price: string;
}

/** The payout formats of a chance strictly between 0 and 1: never null. */
export type OpenOdds = { [K in keyof Odds]: string };

/**
 * The smallest chance the payout formats (decimal, fractional, american) are computed from.
 *
 * Why: 1/c grows without bound (1/5e-324 is Infinity, and `toFixed` switches to exponent notation
 * from 1e21). `/odds` accepts at most 20 characters, so the smallest chance it can be asked about is
 * 1e-18 and every answer it gives follows from c exactly; only a caller passing a smaller number
 * (none does) gets the payout formats of 1e-18.
 */
export const MIN_ODDS_CHANCE = 1e-18;

/**
 * Largest denominator of the fractional format (docs/design.md "Odds at the extremes": d ≤ 1000). With
 * the exchange's 0.001 tick, (1 − c)/c = (1000 − k)/k, so every quoted chance gets its exact
 * fraction: 0.999 → `1/999`, 0.001 → `999/1`, 0.535 → `93/107`.
 */
export const MAX_DENOMINATOR = 1000;

/** Relative slack when comparing approximation errors, so float noise never beats a simpler fraction. */
const ERROR_EPSILON = 1e-12;

/**
 * The exchange's extreme ticks. A chance the service shows is 0, 1 (a settled outcome, or a price
 * that says so), or within these: a chance past them has no faithful payout in the formats' precision
 * (0.9999 would be fractional `0/1` and a profit on 10 of 0.00, a win that pays nothing).
 */
export const SHOWN_CHANCE = { low: 0.001, high: 0.999 } as const;

/**
 * The chance the service shows for a price: 0 and 1 as they are, anything between pulled to the
 * exchange's extreme ticks (a catalog price of 0.9995 is shown as 0.999: nobody can trade above it).
 * Not a number, or outside [0, 1]: clamped to 0 or 1.
 */
export function shownChance(chance: number): number {
  if (!(chance > 0)) return 0;
  if (chance >= 1) return 1;
  return Math.min(SHOWN_CHANCE.high, Math.max(SHOWN_CHANCE.low, chance));
}

/** Whether the service can show this chance (and `/odds` answers it): 0, 1, or from 0.001 to 0.999. */
export function isShownChance(chance: number): boolean {
  return chance === 0 || chance === 1 || (chance >= SHOWN_CHANCE.low && chance <= SHOWN_CHANCE.high);
}

/**
 * Writes a chance in the five odds formats of docs/design.md:
 * - percent `round(100c)%`, with as many decimals as it takes (at least one) when whole-number
 *   rounding would say `0%` or `100%` of a chance that is neither: 0.003 → `0.3%`, 0.999 → `99.9%`,
 *   0.995 → `99.5%` (0.005 → `1%`: whole rounding says 1%, which is neither);
 * - price `round(100c)¢` (docs/api.md: whole cents);
 * - decimal `1/c` to 2 places;
 * - fractional: the n/d with d ≤ 1000 closest to the profit ratio (1−c)/c, ties to the smaller d
 *   (0.25 → `3/1`, 0.8 → `1/4`, 0.999 → `1/999`, 0.001 → `999/1`);
 * - american `-round(100c/(1−c))` when c > 0.5, else `+round(100(1−c)/c)` (0.25 → `+300`,
 *   0.8 → `-400`, 0.999 → `-99900`, 0.001 → `+99900`).
 * Every string is finite and plain (no exponent) for every chance `/odds` accepts.
 *
 * A chance of 0 or 1 has no odds (nothing to win, or no price to pay): see {@link oddsForDisplay}
 * for outcomes that are settled.
 *
 * @throws RangeError when c is not a finite number in (0, 1). Callers validate input first
 *   (the `/odds` endpoint answers 400), so reaching this is a programming error.
 */
export function oddsFor(chance: number): OpenOdds {
  if (typeof chance !== 'number' || !Number.isFinite(chance) || chance <= 0 || chance >= 1) {
    throw new RangeError(`chance must be a finite number in (0, 1), got ${String(chance)}`);
  }
  const payoutChance = Math.max(chance, MIN_ODDS_CHANCE);
  return {
    percent: `${percentOf(chance)}%`,
    decimal: roundTo(1 / payoutChance, 2).toFixed(2),
    fractional: fractionalOdds(payoutChance),
    american: americanOdds(payoutChance),
    price: `${roundTo(100 * chance, 0)}¢`,
  };
}

/**
 * The odds of a certainty (docs/design.md): the formats that have a value keep it — percent and price say
 * `100%`/`100¢` or `0%`/`0¢`, decimal `1.00` for 1 (the stake back, nothing more) — and the others are
 * null rather than invented from 0.999 or 0.001: no fraction or line describes a bet that cannot lose
 * or cannot win, and chance 0 has no finite decimal payout.
 */
export function certaintyOdds(chance: 0 | 1): Odds {
  return chance === 1
    ? { percent: '100%', decimal: '1.00', fractional: null, american: null, price: '100¢' }
    : { percent: '0%', decimal: null, fractional: null, american: null, price: '0¢' };
}

/**
 * The odds of the chance an outcome shows ({@link shownChance} of it): the one function behind every
 * outcome's `odds` (the worker's snapshots, the API's live-price overlay) and `/odds`, so
 * `/odds?chance=c` answers exactly what an outcome of chance c shows.
 */
export function oddsForChance(chance: number): Odds {
  const shown = shownChance(chance);
  return shown === 0 || shown === 1 ? certaintyOdds(shown) : oddsFor(shown);
}

/** 100c rounded to whole, or to the fewest decimals (1 to 15) that say neither 0 nor 100. */
function percentOf(chance: number): string {
  const whole = roundTo(100 * chance, 0);
  if (whole !== 0 && whole !== 100) return String(whole);
  for (let places = 1; places <= 15; places += 1) {
    const value = roundTo(100 * chance, places);
    if (value !== 0 && value !== 100) return value.toFixed(places);
  }
  return String(whole);
}

/**
 * The fraction n/d (d ≤ MAX_DENOMINATOR) closest to (1−c)/c, ties to the smaller denominator: the
 * last continued-fraction convergent within the bound or the best semiconvergent after it (the
 * classic bounded best approximation, as Python's Fraction.limit_denominator), in O(log) steps
 * rather than a loop over every denominator — it runs for every outcome of every snapshot build.
 * A unit test holds it equal to the exhaustive search.
 */
function fractionalOdds(chance: number): string {
  const ratio = (1 - chance) / chance;
  // Convergents p/q of the continued fraction of `ratio`, computed on the float.
  let [p0, q0, p1, q1] = [0, 1, 1, 0];
  let x = ratio;
  for (let i = 0; i < 64; i += 1) {
    const a = Math.floor(x);
    const q2 = q0 + a * q1;
    if (q2 > MAX_DENOMINATOR) break;
    [p0, q0, p1, q1] = [p1, q1, p0 + a * p1, q2];
    const frac = x - a;
    if (frac < 1e-12 * Math.max(1, x)) break;
    x = 1 / frac;
  }
  // p1/q1: the last convergent within the bound. The best semiconvergent with q ≤ MAX_DENOMINATOR:
  const k = Math.floor((MAX_DENOMINATOR - q0) / q1);
  const [sp, sq] = [p0 + k * p1, q0 + k * q1];
  const convergentError = Math.abs(ratio - p1 / q1);
  const semiError = Math.abs(ratio - sp / sq);
  // Better by more than float noise wins; within float noise it is a tie, and ties go to the smaller
  // denominator (0.8's ratio is 0.24999999999999994, which must stay 1/4).
  const tolerance = ERROR_EPSILON * Math.max(1, ratio);
  const semiWins = semiError < convergentError - tolerance || (Math.abs(semiError - convergentError) <= tolerance && sq < q1);
  const [n, d] = semiWins ? [sp, sq] : [p1, q1];
  const divisor = gcd(n, d);
  return `${n / divisor}/${d / divisor}`;
}

function americanOdds(chance: number): string {
  if (chance > 0.5) return `-${roundTo((100 * chance) / (1 - chance), 0)}`;
  return `+${roundTo((100 * (1 - chance)) / chance, 0)}`;
}

function gcd(a: number, b: number): number {
  let x = Math.abs(a);
  let y = Math.abs(b);
  while (y !== 0) [x, y] = [y, x % y];
  return x === 0 ? 1 : x;
}
