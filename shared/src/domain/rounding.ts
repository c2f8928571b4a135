/**
 * Decimal-safe rounding for the figures people read (money, percents, chances).
 *
 * `Math.round(x * 100) / 100` is wrong for inputs whose binary value sits just below a half:
 * 1.005 is stored as 1.00499999999999989…, so the naive form gives 1.00 where a person (and
 * Postgres `numeric`, which the records are stored in) gives 1.01. Scaling and then trimming the
 * result to 15 significant digits (the precision a double carries reliably) removes that float
 * noise before rounding, so the answer matches decimal arithmetic.
 */

/**
 * Rounds `value` to `places` decimals, halves away from zero (like Postgres `round(numeric)`).
 * Never returns `-0`. Non-finite input is returned unchanged; callers validate first.
 */
export function roundTo(value: number, places: number): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** places;
  // toPrecision(15) turns 100.49999999999999 (= 1.005 × 100) back into 100.5.
  const scaled = Number((Math.abs(value) * factor).toPrecision(15));
  const rounded = Math.round(scaled) / factor;
  if (rounded === 0) return 0;
  return value < 0 ? -rounded : rounded;
}

/** Rounds to 2 decimals (money). See {@link roundTo}. */
export function round2(value: number): number {
  return roundTo(value, 2);
}
