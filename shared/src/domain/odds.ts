import { roundTo } from './rounding.js';

/**
 * The same chance written five ways (SPEC.md "Odds object"); every value is a string.
 * Structurally identical to the `Odds` resource schema in `api/resources.ts`.
 */
export interface Odds {
  /** Whole percent with a % sign, e.g. `25%`. */
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
 * Why: `/odds` accepts any chance above 0, and 1/c grows without bound (1/5e-324 is Infinity,
 * and `toFixed` switches to exponent notation from 1e21). One in a million already reads as
 * "1000000.00" / "999999/1" / "+99999900"; nothing on the exchange trades below a 0.001 tick.
 * The percent and price formats keep the real chance (they round to `0%` / `0¢`).
 */
export const MIN_ODDS_CHANCE = 0.000001;

/** Largest denominator of the fractional format (DESIGN.md: d ≤ 100). */
const MAX_DENOMINATOR = 100;

/** Relative slack when comparing approximation errors, so float noise never beats a simpler fraction. */
const ERROR_EPSILON = 1e-12;

/**
 * Writes a chance in the five odds formats of DESIGN.md:
 * - percent `round(100c)%`; price `round(100c)¢`;
 * - decimal `1/c` to 2 places;
 * - fractional: the simplest n/d with d ≤ 100 closest to the profit ratio (1−c)/c
 *   (0.25 → `3/1`, 0.8 → `1/4`, 0.5 → `1/1`);
 * - american `-round(100c/(1−c))` when c > 0.5, else `+round(100(1−c)/c)` (0.25 → `+300`, 0.8 → `-400`).
 *
 * Edge cases (the docs are silent; chosen so every string is readable and never NaN/Infinity):
 * - near-certain c (≥ 200/201 ≈ 0.995): fractional is `0/1`, because with d ≤ 100 zero is the closest
 *   fraction to a profit ratio under 1/200 (the rule as written, not a special case).
 * - c = 1 (certain): decimal `1.00` and fractional `0/1` (exact: the stake comes back, no profit).
 *   American odds of a certainty are −∞, which is not a number anyone can use, so american is
 *   computed at 1 − {@link MIN_ODDS_CHANCE}: `-99999900`.
 * - tiny c: decimal, fractional and american are computed from max(c, {@link MIN_ODDS_CHANCE}),
 *   so 0.001 gives `1000.00`, `999/1`, `+99900` and 1e-9 gives `1000000.00`, `999999/1`,
 *   `+99999900`. Percent and price still round the real chance (0.001 → `0%`, `0¢`).
 *
 * @throws RangeError when c is not a finite number in (0, 1]. Callers validate input first
 *   (the `/odds` endpoint answers 400), so reaching this is a programming error.
 */
export function oddsFor(chance: number): Odds {
  if (typeof chance !== 'number' || !Number.isFinite(chance) || chance <= 0 || chance > 1) {
    throw new RangeError(`chance must be a finite number in (0, 1], got ${String(chance)}`);
  }
  const payoutChance = Math.max(chance, MIN_ODDS_CHANCE);
  const cents = roundTo(100 * chance, 0);
  return {
    percent: `${cents}%`,
    decimal: roundTo(1 / payoutChance, 2).toFixed(2),
    fractional: fractionalOdds(payoutChance),
    american: americanOdds(Math.min(payoutChance, 1 - MIN_ODDS_CHANCE)),
    price: `${cents}¢`,
  };
}

/** Simplest n/d (d ≤ 100) closest to (1−c)/c; ties go to the smaller denominator. */
function fractionalOdds(chance: number): string {
  const ratio = (1 - chance) / chance;
  let bestN = Math.round(ratio);
  let bestD = 1;
  let bestError = Math.abs(ratio - bestN);
  for (let d = 2; d <= MAX_DENOMINATOR && bestError > 0; d += 1) {
    const n = Math.round(ratio * d);
    const error = Math.abs(ratio - n / d);
    // Strictly better by more than float noise: 0.8 gives 0.24999999999999994, which must stay 1/4
    // rather than drift to some 25/100-like fraction on a last-bit difference.
    if (error < bestError - ERROR_EPSILON * Math.max(1, ratio)) {
      bestN = n;
      bestD = d;
      bestError = error;
    }
  }
  // The first denominator reaching the best error is already in lowest terms (a reducible n/d
  // equals a fraction with a smaller d, which would have been found first), but reduce anyway.
  const divisor = gcd(bestN, bestD);
  return `${bestN / divisor}/${bestD / divisor}`;
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
