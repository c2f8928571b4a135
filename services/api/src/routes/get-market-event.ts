import type { Handler } from '../app/handler.js';
import { eventOf } from './event-market.js';

/** GET /api/v1/markets/{eventSlug}: one event with all its markets, from its `event:<slug>` snapshot. */
export const getMarketEvent: Handler<'/api/v1/markets/{eventSlug}'> = async (params, ctx) => {
  return { data: { live: ctx.live(), event: await eventOf(ctx, params.eventSlug) } };
};
