import type { HandlerMap } from '../handler.js';
import { convertOdds } from './convert-odds.js';
import { getMarketEvent } from './get-market-event.js';
import { listMarkets } from './list-markets.js';

/** Every endpoint of the table (shared/src/api/endpoints.ts) and its handler. */
export const handlers: HandlerMap = {
  '/api/v1/markets': listMarkets,
  '/api/v1/markets/{eventSlug}': getMarketEvent,
  '/api/v1/odds': convertOdds,
};
