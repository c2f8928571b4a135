import { HISTORY_RANGES, HISTORY_RANGE_WINDOWS, type HistoryRange } from '@pm/shared/snapshots';
import type { HistoryPoint } from '@pm/shared/api';

/**
 * The bucket math of price history (pure). The SQL downsample (history.ts) groups by the same
 * bucket number; these functions state the rule once so it is unit-tested without Postgres.
 *
 * Rule: a point at Unix second t falls in bucket floor(t / bucketSeconds) (buckets are aligned to
 * the Unix epoch, so the same bucket boundaries hold whichever moment the snapshot is built). Each
 * bucket is represented by its LAST point, at that point's own time: a chart then ends exactly at
 * the latest recorded chance, and a bucket with one sharp move shows where the price settled rather
 * than an average nobody ever traded at.
 */

export function bucketOf(t: number, bucketSeconds: number): number {
  return Math.floor(t / bucketSeconds);
}

/** The earliest Unix second a range covers at `nowSeconds` (null: everything). */
export function rangeStart(range: HistoryRange, nowSeconds: number): number | null {
  const { spanSeconds } = HISTORY_RANGE_WINDOWS[range];
  return spanSeconds === null ? null : nowSeconds - spanSeconds;
}

/**
 * Downsample points (any order) to the last point of each bucket, ascending, dropping points before
 * the range's start. Chances are rounded to 4 decimals (the display precision).
 */
export function downsample(points: readonly HistoryPoint[], range: HistoryRange, nowSeconds: number): HistoryPoint[] {
  const { bucketSeconds } = HISTORY_RANGE_WINDOWS[range];
  const start = rangeStart(range, nowSeconds);
  const last = new Map<number, HistoryPoint>();
  for (const p of points) {
    if (start !== null && p.t < start) continue;
    const b = bucketOf(p.t, bucketSeconds);
    const held = last.get(b);
    if (held === undefined || p.t >= held.t) last.set(b, p);
  }
  return [...last.values()].sort((a, b) => a.t - b.t).map((p) => ({ t: Math.floor(p.t), chance: roundChance(p.chance) }));
}

export function roundChance(chance: number): number {
  return Math.round(chance * 10_000) / 10_000;
}

/**
 * How often a market's range snapshot may be rebuilt after its points changed: the short range
 * more often (its 5-minute buckets move visibly), the others at most once a minute.
 */
export const REBUILD_EVERY_MS: Readonly<Record<HistoryRange, number>> = { '1d': 10_000, '1w': 60_000, '1m': 60_000, max: 60_000 };

/** The ranges of a market due for a rebuild at `now`, given when each was last built. */
export function dueRanges(lastBuilt: Partial<Record<HistoryRange, number>>, now: number): HistoryRange[] {
  return HISTORY_RANGES.filter((r) => {
    const at = lastBuilt[r];
    return at === undefined || now - at >= REBUILD_EVERY_MS[r];
  });
}

/** How a resolved market ended: when, and the final chance of its first outcome (1 or 0; a voided market's final price). */
export interface HistoryEnd {
  /** Unix seconds. */
  t: number;
  chance: number;
}

/**
 * A resolved market's history ends at its resolution (docs/design.md "Resolution is data"): points after
 * `resolved_at` are dropped (books linger after the exchange resolves) and the last point is the
 * final price at `resolved_at`. That point is the last of its bucket, so any earlier point of the
 * same bucket gives way to it, as the downsample's rule says. Points come ascending, downsampled.
 */
export function endAtResolution(points: readonly HistoryPoint[], range: HistoryRange, end: HistoryEnd): HistoryPoint[] {
  const { bucketSeconds } = HISTORY_RANGE_WINDOWS[range];
  const endBucket = bucketOf(end.t, bucketSeconds);
  const kept = points.filter((p) => p.t <= end.t && bucketOf(p.t, bucketSeconds) !== endBucket);
  return [...kept, { t: Math.floor(end.t), chance: roundChance(end.chance) }];
}
