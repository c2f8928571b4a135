export * from './resources.js';
export * from './records-resources.js';
export * from './endpoints.js';
export * from './openapi.js';
export * from './live-examples.js';
export * from './stream.js';
export * from './exports.js';
/** The candle intervals, their steps and retention: the API's vocabulary for history. */
export { CANDLE_INTERVALS, DEFAULT_CANDLE_INTERVAL, STEP_SECONDS, RETENTION_SECONDS, LATE_POINT_SECONDS, floorTo, ceilTo, type CandleInterval } from '../history/tiers.js';
