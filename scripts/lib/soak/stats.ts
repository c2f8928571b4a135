/**
 * What a soak prints from its samples: for each process or store and each measure, the first and last
 * value and the least-squares slope per hour over the samples after the warm-up (a start fills caches,
 * pools and V8's heap; what counts is whether it keeps growing once it has).
 */

export interface Point {
  /** Milliseconds since the soak started. */
  t: number;
  value: number;
}

/** Least-squares slope of `value` per hour; null with fewer than two points or no spread in time. */
export function slopePerHour(points: readonly Point[]): number | null {
  if (points.length < 2) return null;
  const n = points.length;
  const xs = points.map((p) => p.t / 3_600_000);
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = points.reduce((a, p) => a + p.value, 0) / n;
  let sxx = 0;
  let sxy = 0;
  points.forEach((p, i) => {
    const dx = xs[i]! - mx;
    sxx += dx * dx;
    sxy += dx * (p.value - my);
  });
  return sxx === 0 ? null : sxy / sxx;
}

export interface Summary {
  start: number | null;
  end: number | null;
  /** Slope per hour after the warm-up (null when too few samples fall after it). */
  slope: number | null;
  max: number | null;
}

/** Start (the first sample), end (the last), the slope after `warmupMs`, and the maximum after it. */
export function summarise(points: readonly Point[], warmupMs: number): Summary {
  const after = points.filter((p) => p.t >= warmupMs);
  return {
    start: points[0]?.value ?? null,
    end: points.at(-1)?.value ?? null,
    slope: slopePerHour(after),
    max: after.length ? Math.max(...after.map((p) => p.value)) : null,
  };
}

/** A number for the printed line: fixed decimals, `-` when there is none. */
export function fmt(value: number | null, decimals = 1): string {
  return value === null || !Number.isFinite(value) ? '-' : value.toFixed(decimals);
}
