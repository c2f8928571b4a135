import { roundTo } from './rounding.js';

/**
 * The same chance written five ways (SPEC.md "Odds object"); every value is a string.
 * Structurally identical to the `Odds` resource schema in `api/resources.ts`.
 */
export interface Odds {
  /** Whole percent with a % sign, e.g. `25%`; with decimals where whole would say 0% or 100% (`0.3%`, `99.9%`). */
  percent: string;
  /** Decimal odds with two decimals, e.g. `4.00`. */
  decimal: string;
  /** numerator/denominator, e.g. `3/1`. */
  fractional: string;
  /** Signed whole number with a leading + or -, e.g. `+300`. */
  american: string;
  /** Whole cents with a cent sign, e.g. `25¢`. */
  price: string;
}

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
 * Largest denominator of the fractional format (DESIGN.md "Odds at the extremes": d ≤ 1000). With
 * the exchange's 0.001 tick, (1 − c)/c = (1000 − k)/k, so every quoted chance gets its exact
 * fraction: 0.999 → `1/999`, 0.001 → `999/1`, 0.535 → `93/107`.
 */
export const MAX_DENOMINATOR = 1000;

/** Relative slack when comparing approximation errors, so float noise never beats a simpler fraction. */
const ERROR_EPSILON = 1e-12;

/** The exchange's extreme ticks: the odds of a settled outcome (chance 0 or 1) are written at these. */
export const SETTLED_ODDS_AT = { low: 0.001, high: 0.999 } as const;

/**
 * Writes a chance in the five odds formats of DESIGN.md:
 * - percent `round(100c)%`, with as many decimals as it takes (at least one) when whole-number
 *   rounding would say `0%` or `100%` of a chance that is neither: 0.003 → `0.3%`, 0.999 → `99.9%`,
 *   0.995 → `99.5%` (0.005 → `1%`: whole rounding says 1%, which is neither);
 * - price `round(100c)¢` (SPEC.md: whole cents);
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
export function oddsFor(chance: number): Odds {
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
 * The odds shown for an outcome whose chance may be 0 or 1 (a resolved market's loser and winner):
 * percent and price say `0%`/`0¢` or `100%`/`100¢`, and the payout formats are those of the
 * exchange's extreme ticks ({@link SETTLED_ODDS_AT}), so every string keeps its format rather than
 * becoming a placeholder a client cannot parse. Any other chance is {@link oddsFor}.
 */
export function oddsForDisplay(chance: number): Odds {
  if (!(chance > 0)) return { ...oddsFor(SETTLED_ODDS_AT.low), percent: '0%', price: '0¢' };
  if (chance >= 1) return { ...oddsFor(SETTLED_ODDS_AT.high), percent: '100%', price: '100¢' };
  return oddsFor(chance);
}

/**
 * The odds of an outcome's chance on a page, which may be 0 (a resolved loser, or an outcome with no
 * price at all) or 1 (a resolved winner): {@link oddsForDisplay} of it, capped at 1. The worker's
 * snapshots and the API's live-price overlay both use it, so the five strings never differ between them.
 */
export function oddsForChance(chance: number): Odds {
  return oddsForDisplay(Math.min(chance, 1));
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
