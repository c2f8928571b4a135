import { DEFAULT_HISTORY_RANGE } from '@pm/shared/snapshots';
import type { Handler } from '../app/handler.js';
import { historySnapshotSchema } from '../snapshots/snapshot-schemas.js';
import { eventMarket, eventPart } from './event-market.js';

/**
 * GET /api/v1/markets/{eventSlug}/history. The event snapshot says which markets belong to the
 * event (and gives the question and the first outcome's name); the worker's
 * `history:<marketId>:<range>` snapshot gives the downsampled points. A market whose history the
 * worker has not built yet (no points recorded so far) answers with no points rather than a 404:
 * the market exists, it just has no past yet. A closed market's missing history is one retired with
 * its closed event: built again on request (event-market.ts `eventPart`).
 */
export const getMarketHistory: Handler<'/api/v1/markets/{eventSlug}/history'> = async (params, ctx) => {
  const range = params.range ?? DEFAULT_HISTORY_RANGE;
  const { market } = await eventMarket(ctx, params.eventSlug, params.market);
  const history = market.closed
    ? await eventPart(ctx, { of: 'history', marketId: market.id, range }, historySnapshotSchema)
    : await ctx.snapshots.read(`history:${market.id}:${range}`, historySnapshotSchema);
  const points = history?.data.points ?? [];
  return {
    data: {
      market_id: market.id,
      question: market.question,
      outcome: market.outcomes[0]?.name ?? '',
      range,
      points,
    },
  };
};
