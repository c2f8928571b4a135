/** The trade tape (`@pm/shared/trades`; docs/design.md "Trades"): identity, packed writes, reads, retention. */
export { tradeKey, storedTrade, ordinals, PRICE_UNITS, type StoredTrade } from './identity.js';
export { recordTrades, ensureTradePartitions, dayOfMs, type SeriesTrade } from './write.js';
export { readTape, tradeId, parseTradeId, type TapeTrade, type TapePosition, type TapeQuery } from './read.js';
export { runTradesUpkeep, tradePartitions, tradesFloorMs } from './retention.js';
