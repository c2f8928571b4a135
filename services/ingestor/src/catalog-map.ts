import { classifyEvent } from '@pm/shared/domain';
import type { Category } from '@pm/shared';
import type { GammaEvent, GammaMarket, GammaTag } from '@pm/shared/exchange';

/**
 * Maps parsed catalog events to the rows of `events`, `markets` and `outcomes` (pure; no I/O).
 * Column names match the schema (0001_model.sql) so the rows go to SQL as they are.
 */

export interface TeamRow {
  name: string;
  abbreviation: string;
  home: boolean;
}

export interface EventRow {
  id: string;
  slug: string;
  title: string;
  description: string;
  category: Category;
  league: string | null;
  starts_at: string | null;
  closes_at: string | null;
  volume: number;
  volume_24h: number;
  liquidity: number;
  active: boolean;
  closed: boolean;
  game_id: string | null;
  teams: TeamRow[];
  tags: GammaTag[];
}

export interface MarketRow {
  id: string;
  event_id: string;
  condition_id: string;
  position: number;
  question: string;
  slug: string;
  label: string;
  kind: string | null;
  line: number | null;
  closes_at: string | null;
  active: boolean;
  closed: boolean;
  accepting_orders: boolean;
  volume: number;
  one_day_price_change: number | null;
}

export interface OutcomeRow {
  market_id: string;
  outcome_index: number;
  name: string;
  token_id: string;
  catalog_price: number | null;
}

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

function priceOrNull(p: string | undefined): number | null {
  if (p === undefined || p.trim() === '') return null;
  const n = Number(p);
  return Number.isFinite(n) && n >= 0 && n <= 1 ? n : null;
}

export function mapEvent(e: GammaEvent): CatalogRows {
  const { category, league } = classifyEvent({
    tags: e.tags,
    title: e.title,
    seriesSlug: e.seriesSlug ?? undefined,
    hasGame: e.gameId !== null,
  });
  const event: EventRow = {
    id: e.id,
    slug: e.slug,
    title: e.title,
    description: e.description,
    category,
    league,
    starts_at: e.startDate,
    closes_at: e.endDate,
    volume: e.volume ?? 0,
    volume_24h: e.volume24hr ?? 0,
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
      volume: m.volumeNum ?? m.volume ?? 0,
      one_day_price_change: m.oneDayPriceChange,
    });
    m.outcomes.forEach((name, i) => {
      outcomes.push({
        market_id: m.id,
        outcome_index: i,
        name,
        token_id: m.clobTokenIds[i]!.trim(),
        catalog_price: priceOrNull(m.outcomePrices?.[i]),
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
export function mapEvents(events: GammaEvent[]): CatalogRows {
  const out: CatalogRows = { events: [], markets: [], outcomes: [], resolutions: [] };
  const seenEvents = new Set<string>();
  const seenSlugs = new Set<string>();
  const seenMarkets = new Set<string>();
  const seenTokens = new Set<string>();
  for (const e of events) {
    if (seenEvents.has(e.id) || seenSlugs.has(e.slug)) continue;
    seenEvents.add(e.id);
    seenSlugs.add(e.slug);
    const rows = mapEvent(e);
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
