import type { HandlerMap } from '../app/handler.js';
import { convertOdds } from './convert-odds.js';
import { getMarketEvent } from './get-market-event.js';
import { getMarketHistory } from './get-market-history.js';
import { getMarketCandles } from './get-market-candles.js';
import { getMarketBook } from './get-market-book.js';
import { getMarketTrades } from './get-market-trades.js';
import { getMarketById } from './get-market-by-id.js';
import { getMarketsById } from './get-markets-by-id.js';
import { listLiveMatches } from './list-live-matches.js';
import { listMarkets } from './list-markets.js';
import { listCalls } from './list-calls.js';
import { getCall } from './get-call.js';
import { getUser } from './get-user.js';
import { listUserCalls } from './list-user-calls.js';
import { getLeaderboard } from './get-leaderboard.js';
import { listCombos } from './list-combos.js';
import { listExports } from './list-exports.js';

/** Every endpoint of the table (shared/src/api/endpoints.ts) and its handler. */
export const handlers: HandlerMap = {
  '/api/v1/markets': listMarkets,
  '/api/v1/markets/{eventSlug}': getMarketEvent,
  '/api/v1/markets/by-id/{marketId}': getMarketById,
  '/api/v1/markets/by-id': getMarketsById,
  '/api/v1/markets/{eventSlug}/history': getMarketHistory,
  '/api/v1/markets/{eventSlug}/candles': getMarketCandles,
  '/api/v1/markets/{eventSlug}/book': getMarketBook,
  '/api/v1/markets/{eventSlug}/trades': getMarketTrades,
  '/api/v1/live': listLiveMatches,
  '/api/v1/calls': listCalls,
  '/api/v1/calls/{id}': getCall,
  '/api/v1/users/{handle}': getUser,
  '/api/v1/users/{handle}/calls': listUserCalls,
  '/api/v1/leaderboard': getLeaderboard,
  '/api/v1/combos': listCombos,
  '/api/v1/odds': convertOdds,
  '/api/v1/exports': listExports,
};
