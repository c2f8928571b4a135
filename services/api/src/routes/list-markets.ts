import type { SnapshotName } from '@pm/shared/redis';
import type { EventCard } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { marketListSnapshotSchema, marketSearchSnapshotSchema } from '../snapshots/snapshot-schemas.js';

const NOT_READY = 'market data is not ready yet; please try again shortly';

/**
 * GET /api/v1/markets. Without `q`: the pre-built list of the league, the category or trending
 * (league overrides category). With `q`: the search snapshot filtered by the text, then by league or
 * category. A list whose snapshot is missing while trending exists is empty (leagues and categories
 * come and go); with no trending snapshot the worker has not run yet, which is a 503.
 */
export const listMarkets: Handler<'/api/v1/markets'> = async (params, ctx) => {
  const { limit, category } = params;
  const league = params.league?.trim().toLowerCase() || undefined;
  const q = params.q?.trim().toLowerCase() || undefined;

  if (q) {
    const search = await ctx.snapshots.read('markets:search', marketSearchSnapshotSchema);
    if (!search) throw new ApiError('unavailable', NOT_READY);
    const { data } = search;
    const events: EventCard[] = [];
    for (const entry of data.entries) {
      if (events.length >= limit) break;
      if (!entry.text.includes(q)) continue;
      if (league ? entry.league?.toLowerCase() !== league : category ? entry.category !== category : false) continue;
      events.push(entry.card);
    }
    return { data: { live: ctx.live(), count: events.length, categories: data.categories, leagues: data.leagues, events } };
  }

  const name: SnapshotName = league ? `markets:league:${league}` : category ? `markets:category:${category}` : 'markets:trending';
  const list = await ctx.snapshots.read(name, marketListSnapshotSchema);
  if (list) {
    const { data } = list;
    const events = data.events.slice(0, limit);
    return { data: { live: ctx.live(), count: events.length, categories: data.categories, leagues: data.leagues, events } };
  }
  if (name === 'markets:trending') throw new ApiError('unavailable', NOT_READY);

  const trending = await ctx.snapshots.read('markets:trending', marketListSnapshotSchema);
  if (!trending) throw new ApiError('unavailable', NOT_READY);
  const { data } = trending;
  return { data: { live: ctx.live(), count: 0, categories: data.categories, leagues: data.leagues, events: [] } };
};
