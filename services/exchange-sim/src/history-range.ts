import type { HistoryPoint, HistoryQuery } from './protocol.js';

/** Span of each /prices-history `interval`, in seconds (`max`/`all`: everything there is). */
const INTERVAL_SECONDS: Record<string, number> = {
  '1h': 3_600,
  '6h': 21_600,
  '1d': 86_400,
  '1w': 604_800,
  '1m': 2_592_000,
  max: Number.POSITIVE_INFINITY,
  all: Number.POSITIVE_INFINITY,
};

/** Points per request beyond which the simulator refuses, as the exchange refuses absurd ranges. */
export const MAX_HISTORY_POINTS = 100_000;

export class HistoryRangeError extends Error {
  override name = 'HistoryRangeError';
}

export interface HistoryRange {
  start: number;
  end: number;
  /** Minutes between points. */
  fidelity: number;
}

export function isKnownInterval(interval: string): boolean {
  return interval in INTERVAL_SECONDS;
}

/** Resolve interval/startTs/endTs/fidelity against the series' own bounds (Unix seconds). */
export function resolveRange(query: HistoryQuery, latest: number, earliest: number): HistoryRange {
  const end = Math.min(query.endTs ?? latest, latest);
  const span = INTERVAL_SECONDS[query.interval ?? (query.startTs === undefined ? '1d' : 'max')] ?? 86_400;
  const start = Math.max(query.startTs ?? end - span, earliest);
  const fidelity = query.fidelity ?? Math.max(1, Math.ceil((end - start) / 60 / 500));
  if (end > start && (end - start) / (fidelity * 60) > MAX_HISTORY_POINTS) {
    throw new HistoryRangeError(`too many points for fidelity ${fidelity}: ask a coarser fidelity or a shorter range`);
  }
  return { start, end, fidelity };
}

/** Keep at most one point per fidelity bucket (recorded histories are served at the asked fidelity). */
export function downsample(points: readonly HistoryPoint[], range: HistoryRange): HistoryPoint[] {
  const step = range.fidelity * 60;
  const out: HistoryPoint[] = [];
  let lastBucket = Number.NEGATIVE_INFINITY;
  for (const point of points) {
    if (point.t < range.start || point.t > range.end) continue;
    const bucket = Math.floor(point.t / step);
    if (bucket === lastBucket) continue;
    lastBucket = bucket;
    out.push(point);
  }
  return out;
}
