export { marketsPendingSettlement, settleMarket, UnknownMarket, UnresolvedMarket, type SettledMarket, type Resolution } from './settle-market.js';
export { createSettleMarketProcessor } from './processor.js';
