import type { SnapshotName } from '@pm/shared/redis';
import { categorySchema, type Event, type EventCard } from '@pm/shared/api';
import { LIST_SNAPSHOT_SIZE, type MarketSearchSnapshot, type RankingSnapshot } from '@pm/shared/snapshots';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { eventSnapshotSchema, marketListSnapshotSchema, marketSearchSnapshotSchema, rankingSnapshotSchema } from '../snapshots/snapshot-schemas.js';
import { firstPageHasMore } from './paging.js';

const NOT_READY = 'market data is not ready yet; please try again shortly';
const EXPIRED =
  'cursor has expired: the ranking it walks was replaced more than 15 minutes ago; start again from the first page (no cursor)';
const CARD_MARKETS = 3;

type SearchEntry = MarketSearchSnapshot['entries'][number];

/** Per search snapshot (by its parsed object, held while the version is): slug → entry. */
const entriesBySlug = new WeakMap<MarketSearchSnapshot, Map<string, SearchEntry>>();
/** Per ranking snapshot: slug → its position. */
const positions = new WeakMap<RankingSnapshot, Map<string, number>>();

function entryMap(search: MarketSearchSnapshot): Map<string, SearchEntry> {
  let map = entriesBySlug.get(search);
  if (map === undefined) entriesBySlug.set(search, (map = new Map(search.entries.map((e) => [e.card.slug, e]))));
  return map;
}

function positionMap(ranking: RankingSnapshot): Map<string, number> {
  let map = positions.get(ranking);
  if (map === undefined) positions.set(ranking, (map = new Map(ranking.events.map(([slug], i) => [slug, i]))));
  return map;
}

/** An event's card made from its page (an event no longer on the open lists): its first markets, open ones first. */
function cardOf(event: Event): EventCard {
  const shown = [...event.markets.filter((m) => !m.closed), ...event.markets.filter((m) => m.closed)].slice(0, CARD_MARKETS);
  return {
    slug: event.slug,
    title: event.title,
    category: event.category,
    markets: shown.map((m) => ({ id: m.id, question: m.question, outcomes: m.outcomes.map(({ name, chance, odds }) => ({ name, chance, odds })) })),
    market_count: event.market_count,
    url: event.url,
  };
}

/** The text `q` matches of an event page: title and every market question, lower-cased (as the worker's search text). */
const textOf = (event: Event) => [event.title, ...event.markets.map((m) => m.question)].join('\n').toLowerCase();

/**
 * GET /api/v1/markets.
 *
 * Open (default), first page: without `q` the pre-built list of the league, the category or trending
 * (league overrides category); with `q` the search snapshot filtered by the text, then by league or
 * category. A list whose snapshot is missing while trending exists is empty (leagues and categories
 * come and go); with no trending snapshot the worker has not run yet, which is a 503. Every list and
 * the search snapshot name the ranking version they were cut from (`markets:ranking:<version>`):
 * `next_cursor` pins it, and the pages after the first walk that ranking from the position of the
 * last event shown, with the same filters, each event as it is now (its card from the search
 * snapshot, or from its page once it closed). A version the worker no longer keeps is a 400.
 *
 * Closed: events whose markets are all closed, newest closed first, from Postgres (pages.ts), each
 * event's card from its page.
 */
export const listMarkets: Handler<'/api/v1/markets'> = async (params, ctx) => {
  const { limit, category } = params;
  const league = params.league?.trim().toLowerCase() || undefined;
  const q = params.q?.trim().toLowerCase() || undefined;
  const status = params.status ?? 'open';
  // What a cursor's list is: the filters as they select (league overrides category).
  const pairs: Array<[string, string]> = league ? [['league', league]] : category ? [['category', category]] : [];
  if (q) pairs.push(['q', q]);
  const filter = new URLSearchParams(pairs).toString();
  const matches = (c: string, l: string | null) => (league ? l?.toLowerCase() === league : category ? c === category : true);

  if (status === 'closed') {
    const trending = await ctx.snapshots.read('markets:trending', marketListSnapshotSchema);
    if (!trending) throw new ApiError('unavailable', NOT_READY);
    const identity = { list: 'markets-closed', filter } as const;
    const after = params.cursor === undefined ? null : ctx.cursors.read(params.cursor, identity);
    const page = await ctx.pages.closedEvents({
      category: league ? null : (category ?? null),
      league: league ?? null,
      q: q ?? null,
      after: after === null ? null : { at: after.after, id: after.id },
      limit,
    });
    const events = await Promise.all(
      page.rows.map(async (row): Promise<EventCard> => {
        const snapshot = await ctx.snapshots.read(`event:${row.slug}`, eventSnapshotSchema);
        if (snapshot) return cardOf(snapshot.data.event);
        const category = categorySchema.parse(row.category);
        return { slug: row.slug, title: row.title, category, markets: [], market_count: row.market_count, url: `${ctx.config.PUBLIC_WEB_URL}/e/${encodeURIComponent(row.slug)}` };
      }),
    );
    const last = page.rows.at(-1);
    const next_cursor = page.more && last ? ctx.cursors.make({ ...identity, after: last.at, id: last.id }) : null;
    const { categories, leagues } = trending.data;
    return { data: { live: ctx.live(), count: events.length, categories, leagues, events, next_cursor } };
  }

  const identity = { list: 'markets-open', filter } as const;
  if (params.cursor !== undefined) {
    const { version, after } = ctx.cursors.read(params.cursor, identity);
    const ranking = await ctx.snapshots.read(`markets:ranking:${version}`, rankingSnapshotSchema);
    if (!ranking) throw new ApiError('bad_request', EXPIRED);
    const search = await ctx.snapshots.read('markets:search', marketSearchSnapshotSchema);
    if (!search) throw new ApiError('unavailable', NOT_READY);
    const current = entryMap(search.data);
    const order = ranking.data.events;
    const events: EventCard[] = [];
    let at = after;
    while (events.length < limit && at + 1 < order.length) {
      at += 1;
      const [slug, c, l] = order[at]!;
      if (!matches(c, l)) continue;
      const entry = current.get(slug);
      if (entry !== undefined) {
        if (q === undefined || entry.text.includes(q)) events.push(entry.card);
        continue;
      }
      // Closed since the walk began: shown as it is now, from its page.
      const page = await ctx.snapshots.read(`event:${slug}`, eventSnapshotSchema);
      if (page && (q === undefined || textOf(page.data.event).includes(q))) events.push(cardOf(page.data.event));
    }
    const next_cursor = at + 1 < order.length && events.length > 0 ? ctx.cursors.make({ ...identity, version, after: at }) : null;
    const { categories, leagues } = search.data;
    return { data: { live: ctx.live(), count: events.length, categories, leagues, events, next_cursor } };
  }

  /** The cursor after the event `slug` of ranking `version`, when there may be more. */
  const cursorAfter = async (version: number | undefined, slug: string | undefined, more: boolean): Promise<string | null> => {
    if (!more || version === undefined || slug === undefined) return null;
    const ranking = await ctx.snapshots.read(`markets:ranking:${version}`, rankingSnapshotSchema);
    const position = ranking ? positionMap(ranking.data).get(slug) : undefined;
    return position === undefined ? null : ctx.cursors.make({ ...identity, version, after: position });
  };

  if (q) {
    const search = await ctx.snapshots.read('markets:search', marketSearchSnapshotSchema);
    if (!search) throw new ApiError('unavailable', NOT_READY);
    const { data } = search;
    const events: EventCard[] = [];
    let at = -1;
    for (let i = 0; i < data.entries.length && events.length < limit; i++) {
      const entry = data.entries[i]!;
      if (!entry.text.includes(q) || !matches(entry.category, entry.league)) continue;
      events.push(entry.card);
      at = i;
    }
    const more = events.length === limit && at < data.entries.length - 1;
    const next_cursor = await cursorAfter(data.ranking, events.at(-1)?.slug, more);
    return { data: { live: ctx.live(), count: events.length, categories: data.categories, leagues: data.leagues, events, next_cursor } };
  }

  const name: SnapshotName = league ? `markets:league:${league}` : category ? `markets:category:${category}` : 'markets:trending';
  const list = await ctx.snapshots.read(name, marketListSnapshotSchema);
  if (list) {
    const { data } = list;
    const events = data.events.slice(0, limit);
    const more = firstPageHasMore(events.length, data.events.length, LIST_SNAPSHOT_SIZE);
    const next_cursor = await cursorAfter(data.ranking, events.at(-1)?.slug, more);
    return { data: { live: ctx.live(), count: events.length, categories: data.categories, leagues: data.leagues, events, next_cursor } };
  }
  if (name === 'markets:trending') throw new ApiError('unavailable', NOT_READY);

  const trending = await ctx.snapshots.read('markets:trending', marketListSnapshotSchema);
  if (!trending) throw new ApiError('unavailable', NOT_READY);
  const { data } = trending;
  return { data: { live: ctx.live(), count: 0, categories: data.categories, leagues: data.leagues, events: [], next_cursor: null } };
};
