/** Price history as tiers of candles (`@pm/shared/history`; docs/history.md). */
export * from './tiers.js';
export { seriesIds, insertRawPoints, ensureRawPartitions, storeBackfill, rollDays, type RawPoint } from './write.js';
export { rollupSlice, runRollup, runUpkeep, rollupMark, rawPartitions, type RollupResult, type UpkeepResult } from './rollup.js';
export { readCandles, readPackedCandles, resolvedEnds, composeCandles, roundMicro, NULL_UNITS, SHARE_UNITS, type Candle, type CandleQuery, type CandleSet, type HistoryDb, type PackedCandles, type QuoteCandle } from './read.js';
