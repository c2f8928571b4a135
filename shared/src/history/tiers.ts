/**
 * The tiers of price history (docs/history.md): raw points, then candles at four steps. Chances in
 * candles are integers of 1/10,000 ("units"); every time is Unix seconds, buckets aligned in UTC.
 */

export const CANDLE_INTERVALS = ['1m', '5m', '1h', '1d'] as const;
export type CandleInterval = (typeof CANDLE_INTERVALS)[number];
export const DEFAULT_CANDLE_INTERVAL: CandleInterval = '1h';

/** Seconds per candle of each interval. */
export const STEP_SECONDS: Readonly<Record<CandleInterval, number>> = { '1m': 60, '5m': 300, '1h': 3600, '1d': 86_400 };

/** How long each tier keeps its candles (null: for good). The exchange's own floors for 1m and 5m. */
export const RETENTION_SECONDS: Readonly<Record<CandleInterval, number | null>> = { '1m': 7 * 86_400, '5m': 60 * 86_400, '1h': null, '1d': null };

/** Seconds of candles one packed row holds, per step (see migration 0008). */
export const PERIOD_SECONDS: Readonly<Record<number, number>> = { 60: 3_600, 300: 86_400, 3_600: 86_400, 86_400: 64 * 86_400 };

/** Raw points are kept at least this long (a day partition is dropped once wholly older, and rolled up). */
export const RAW_RETENTION_SECONDS = 48 * 3_600;

/**
 * A live point is written up to a flush window (5 s) after its time; a slice is rolled up, and a
 * window counts as immutable, only this long after its end.
 */
export const LATE_POINT_SECONDS = 120;

/** The rollup works in closed hours: every tier's buckets of an hour are made together. */
export const SLICE_SECONDS = 3_600;

/** The name of the rollup's progress row. */
export const ROLLUP_PROGRESS = 'rollup';

export const UNITS = 10_000;
export const toUnits = (chance: number): number => Math.round(chance * UNITS);
export const fromUnits = (units: number): number => units / UNITS;

export const floorTo = (t: number, step: number): number => Math.floor(t / step) * step;
export const ceilTo = (t: number, step: number): number => Math.ceil(t / step) * step;

/** The partition (day number) holding Unix second t. */
export const dayOf = (t: number): number => Math.floor(t / 86_400);

/**
 * Where each /history range reads: the tier (step), the bucket its points stand for (a multiple of
 * the step) and how far back it reaches (null: everything). A point is the close of the candle of
 * its bucket. `max` uses weeks instead of days once a history is longer than MAX_DAILY_POINTS days.
 */
export const HISTORY_RANGE_TIERS = {
  '1d': { step: 300, bucket: 300, span: 86_400 },
  '1w': { step: 3_600, bucket: 3_600, span: 7 * 86_400 },
  '1m': { step: 3_600, bucket: 10_800, span: 30 * 86_400 },
  max: { step: 86_400, bucket: 86_400, span: null },
} as const satisfies Record<string, { step: number; bucket: number; span: number | null }>;
export const MAX_DAILY_POINTS = 500;
