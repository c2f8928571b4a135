import { classifyEvent, displayChance } from '@pm/shared/domain';
import type { Category } from '@pm/shared/api';
import type { Events, JsonRow, Markets, Outcomes } from '@pm/shared/db';
import type { GammaEvent, GammaMarket, GammaSport, GammaTag } from '@pm/shared/exchange';

/**
 * Maps parsed catalog events to the rows of `events`, `markets` and `outcomes` (pure; no I/O).
 * The row types are the generated table types (as JSON carries them), so the rows go to SQL as they are.
 */

/** One team in an event's `teams` (jsonb) column. */
export interface TeamRow {
  name: string;
  abbreviation: string;
  home: boolean;
}

/** An `events` row as the catalog upsert sends it (catalog-db.ts): the generated columns but `updated_at` and `closed_at` (set by a trigger, migration 0009). */
export type EventRow = Omit<JsonRow<Omit<Events, 'updated_at' | 'closed_at'>, 'volume' | 'volume_24h' | 'liquidity'>, 'category' | 'teams' | 'tags'> & {
  category: Category;
  teams: TeamRow[];
  tags: GammaTag[];
};

/** A `markets` row as the catalog upsert sends it: the columns the catalog knows (not resolution or settlement). */
export type MarketRow = JsonRow<
  Pick<
    Markets,
    'id' | 'event_id' | 'condition_id' | 'position' | 'question' | 'slug' | 'label' | 'kind' | 'line' | 'closes_at' | 'active' | 'closed' | 'accepting_orders' | 'volume' | 'one_day_price_change' | 'neg_risk'
  >,
  'line' | 'volume' | 'one_day_price_change'
>;

/** An `outcomes` row as the catalog upsert sends it. */
export type OutcomeRow = JsonRow<Outcomes, 'catalog_price'>;

/** A market the catalog shows as resolved (closed with final prices, or resolved without a winner = void). */
export interface CatalogResolution {
  marketId: string;
  eventId: string;
  winningOutcomeIndex: number | null;
  voided: boolean;
}

export interface CatalogRows {
  events: EventRow[];
  markets: MarketRow[];
  outcomes: OutcomeRow[];
  resolutions: CatalogResolution[];
}

/** `moneyline`, `bothTeamsToScore`, `both-teams-to-score` → snake_case; empty → null. */
export function toSnakeCase(s: string | null): string | null {
  if (s === null) return null;
  const out = s
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[\s\-.]+/g, '_')
    .toLowerCase();
  return out === '' ? null : out;
}

/**
 * The catalog's verdict on a market: a closed market whose final prices are one `1` and the rest
 * `0` has that winner (`["1","0"]` → 0); any other closed market whose UMA resolution says
 * `resolved` is void (e.g. 50-50). A closed market still awaiting resolution gives null.
 */
export function catalogResolution(m: GammaMarket): { winningOutcomeIndex: number | null; voided: boolean } | null {
  if (m.closed !== true) return null;
  const prices = (m.outcomePrices ?? []).map((p) => Number(p));
  if (prices.length === m.outcomes.length && prices.length > 0) {
    const ones = prices.flatMap((p, i) => (p === 1 ? [i] : []));
    const zeros = prices.filter((p) => p === 0).length;
    const winner = ones[0];
    if (ones.length === 1 && winner !== undefined && zeros === prices.length - 1) {
      return { winningOutcomeIndex: winner, voided: false };
    }
  }
  if (m.umaResolutionStatus?.trim().toLowerCase() === 'resolved') return { winningOutcomeIndex: null, voided: true };
  return null;
}

function priceOrNull(p: string | number | null | undefined): number | null {
  if (p === undefined || p === null || (typeof p === 'string' && p.trim() === '')) return null;
  const n = Number(p);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : null;
}

/**
 * The chance a market's outcome shows before its first book (docs/protocol.md §1): the exchange's rule
 * applied to the catalog's `bestBid`/`bestAsk`/`lastTradePrice`, which are the first outcome's
 * (the second of a binary market is its mirror: bid = 1 − ask, ask = 1 − bid); `outcomePrices` is
 * the fallback, and the only source for markets of more than two outcomes.
 */
export function catalogChance(m: GammaMarket, outcomeIndex: number): number | null {
  const listed = priceOrNull(m.outcomePrices?.[outcomeIndex]);
  const bid = priceOrNull(m.bestBid);
  const ask = priceOrNull(m.bestAsk);
  const trade = priceOrNull(m.lastTradePrice);
  // A closed market's final prices are its last word; its book fields may be stale.
  if (m.closed === true || m.outcomes.length !== 2 || (bid === null && ask === null && trade === null)) return listed;
  const mirror = (p: number | null) => (p === null ? null : 1 - p);
  const first = outcomeIndex === 0;
  return displayChance({
    bestBid: first ? bid : mirror(ask),
    bestAsk: first ? ask : mirror(bid),
    lastTrade: first ? trade : mirror(trade),
    catalogPrice: listed,
  });
}

/**
 * The exchange's sports list (`GET /sports`) as a lookup: a league by its series id, or by a tag id
 * only one league carries (every sports event also carries generic tags such as `sports`/`games`,
 * listed by many leagues, which say nothing).
 */
export interface SportsIndex {
  bySeries: ReadonlyMap<string, string>;
  byTag: ReadonlyMap<string, string>;
}

export const EMPTY_SPORTS: SportsIndex = { bySeries: new Map(), byTag: new Map() };

export function indexSports(sports: readonly GammaSport[]): SportsIndex {
  const bySeries = new Map<string, string>();
  const tagLeagues = new Map<string, Set<string>>();
  for (const s of sports) {
    if (s.seriesId !== null && !bySeries.has(s.seriesId)) bySeries.set(s.seriesId, s.sport);
    for (const t of s.tagIds) tagLeagues.set(t, (tagLeagues.get(t) ?? new Set()).add(s.sport));
  }
  const byTag = new Map<string, string>();
  for (const [t, leagues] of tagLeagues) if (leagues.size === 1) byTag.set(t, [...leagues][0]!);
  return { bySeries, byTag };
}

function exchangeLeagueOf(e: GammaEvent, sports: SportsIndex): string | null {
  for (const id of e.seriesIds) {
    const key = sports.bySeries.get(id);
    if (key !== undefined) return key;
  }
  for (const t of e.tags) {
    const key = sports.byTag.get(t.id.trim());
    if (key !== undefined) return key;
  }
  return null;
}

/** When a match starts: the event's `startTime`, else its markets' earliest `gameStartTime`, else the listing's `startDate`. */
function kickOff(e: GammaEvent): string | null {
  if (e.startTime !== null) return e.startTime;
  const starts = e.markets.flatMap((m) => (m.gameStartTime === null ? [] : [m.gameStartTime])).sort();
  return starts[0] ?? e.startDate;
}

/** The first of the exchange's volume fields that is present (they vary by endpoint and age). */
const firstNumber = (...values: Array<number | null | undefined>): number | null => values.find((v) => typeof v === 'number' && Number.isFinite(v)) ?? null;

const marketVolume = (m: GammaMarket) => firstNumber(m.volumeNum, m.volume, m.volumeClob);
const marketVolume24h = (m: GammaMarket) => firstNumber(m.volume24hr, m.volume24hrClob);

/** An event's volume as the event states it, else the sum over its markets of whatever they state. */
function eventVolume(own: number | null, markets: GammaMarket[], of: (m: GammaMarket) => number | null): number {
  if (own !== null) return own;
  return markets.reduce((sum, m) => sum + (of(m) ?? 0), 0);
}

export function mapEvent(e: GammaEvent, sports: SportsIndex = EMPTY_SPORTS): CatalogRows {
  const { category, league } = classifyEvent({
    tags: e.tags,
    title: e.title,
    seriesSlug: e.seriesSlug ?? undefined,
    hasGame: e.gameId !== null,
    exchangeLeague: exchangeLeagueOf(e, sports),
  });
  const event: EventRow = {
    id: e.id,
    slug: e.slug,
    title: e.title,
    description: e.description,
    category,
    league,
    starts_at: kickOff(e),
    closes_at: e.endDate,
    volume: eventVolume(e.volume, e.markets, marketVolume),
    volume_24h: eventVolume(e.volume24hr, e.markets, marketVolume24h),
    liquidity: e.liquidity ?? 0,
    active: e.active ?? true,
    closed: e.closed ?? false,
    game_id: e.gameId,
    teams: e.teams.map((t) => ({
      name: t.name ?? '',
      abbreviation: t.abbreviation ?? '',
      home: t.ordering?.trim().toLowerCase() === 'home',
    })),
    tags: e.tags,
    neg_risk: e.negRisk ?? e.markets.some((m) => m.negRisk === true),
  };
  const markets: MarketRow[] = [];
  const outcomes: OutcomeRow[] = [];
  const resolutions: CatalogResolution[] = [];
  for (const m of e.markets) {
    const label = m.groupItemTitle?.trim() ? m.groupItemTitle : m.question;
    markets.push({
      id: m.id,
      event_id: e.id,
      condition_id: m.conditionId ?? '',
      position: m.position,
      question: m.question,
      slug: m.slug ?? '',
      label,
      kind: toSnakeCase(m.sportsMarketType),
      line: m.line,
      closes_at: m.endDate,
      active: m.active ?? true,
      // An event closed as a whole closes its markets, even where a market row lags behind.
      closed: (m.closed ?? false) || event.closed,
      accepting_orders: m.acceptingOrders ?? true,
      volume: marketVolume(m) ?? 0,
      one_day_price_change: m.oneDayPriceChange,
      neg_risk: m.negRisk ?? event.neg_risk,
    });
    m.outcomes.forEach((name, i) => {
      outcomes.push({
        market_id: m.id,
        outcome_index: i,
        name,
        token_id: m.clobTokenIds[i]!.trim(),
        catalog_price: catalogChance(m, i),
      });
    });
    const resolution = catalogResolution(m);
    if (resolution) resolutions.push({ marketId: m.id, eventId: e.id, ...resolution });
  }
  return { events: [event], markets, outcomes, resolutions };
}

/**
 * Map a page of events. Duplicates (the same event on two pages when the order shifts mid-sync,
 * or the same token twice) keep the first, so one statement never touches a row twice (Postgres
 * refuses `on conflict do update` hitting one row twice).
 */
export function mapEvents(events: GammaEvent[], sports: SportsIndex = EMPTY_SPORTS): CatalogRows {
  const out: CatalogRows = { events: [], markets: [], outcomes: [], resolutions: [] };
  const seenEvents = new Set<string>();
  const seenSlugs = new Set<string>();
  const seenMarkets = new Set<string>();
  const seenTokens = new Set<string>();
  for (const e of events) {
    if (seenEvents.has(e.id) || seenSlugs.has(e.slug)) continue;
    seenEvents.add(e.id);
    seenSlugs.add(e.slug);
    const rows = mapEvent(e, sports);
    out.events.push(...rows.events);
    for (const m of rows.markets) {
      if (seenMarkets.has(m.id)) continue;
      const mine = rows.outcomes.filter((o) => o.market_id === m.id);
      const tokens = new Set(mine.map((o) => o.token_id));
      if (tokens.size !== mine.length || mine.some((o) => seenTokens.has(o.token_id))) continue;
      seenMarkets.add(m.id);
      mine.forEach((o) => seenTokens.add(o.token_id));
      out.markets.push(m);
      out.outcomes.push(...mine);
    }
    out.resolutions.push(...rows.resolutions.filter((r) => seenMarkets.has(r.marketId)));
  }
  return out;
}
