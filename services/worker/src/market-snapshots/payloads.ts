import { chanceChange, leagueLabel, NO_QUOTE, oddsForChance, shownChance } from '@pm/shared/domain';
import { CATEGORIES, CATEGORY_DISPLAY_ORDER, type Event, type EventCard, type Game, type LeagueEntry, type Market, type Outcome, type QuotedOutcome } from '@pm/shared/api';
import { LIST_SNAPSHOT_SIZE, type EventSnapshot, type MarketListSnapshot, type MarketSearchSnapshot } from '@pm/shared/snapshots';
import type { SnapshotName } from '@pm/shared/redis';
import type { CatalogEvent, CatalogMarket, CatalogOutcome, Chances, DayAgo, GameState, Quotes, Splits } from './model.js';

/**
 * Pure payload builders: catalog rows + live chances → the snapshot payloads of shared/src/snapshots.ts.
 * No I/O here, so every field rule is unit-tested without Postgres or Redis.
 */

/** How many markets an event card shows (docs/api.md: "its top three markets"). */
export const CARD_MARKETS = 3;

/** The odds of an outcome's chance (shared with the API's live-price overlay). */
export { oddsForChance };

/**
 * An outcome's chance: the final one once its market is settled, else the live one from Redis, else
 * the catalog price, else 0 (no price known at all; rare: the catalog prices every tradable outcome),
 * as the service shows chances (`shownChance`: 0, 1 or 0.001–0.999, so `/odds` answers its odds).
 */
export function outcomeChance(outcome: CatalogOutcome, chances: Chances): number {
  return shownChance(outcome.finalChance ?? chances.get(outcome.tokenId) ?? outcome.catalogPrice ?? 0);
}

/**
 * Parse a chance as stored in Redis ("0.535"). Anything that is not a number in [0, 1] is treated as
 * missing, so a corrupt value falls back to the catalog price instead of breaking the snapshot.
 */
export function parseChance(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value >= 0 && value <= 1 ? value : undefined;
}

export function buildOutcomes(market: CatalogMarket, chances: Chances): Outcome[] {
  return market.outcomes.map((o) => {
    const chance = outcomeChance(o, chances);
    return { name: o.name, chance, odds: oddsForChance(chance) };
  });
}

/**
 * A market page's outcomes: each with its quotes, the top of book its live chance came from; none
 * (nulls) for an outcome showing a final chance or with no live chance yet (the catalog price); and
 * its closing chance, null until the market closed (docs/skill.md).
 */
export function buildQuotedOutcomes(market: CatalogMarket, chances: Chances, quotes: Quotes | undefined): QuotedOutcome[] {
  const closing = market.closed ? market.closingChances : null;
  return market.outcomes.map((o) => {
    const chance = outcomeChance(o, chances);
    const live = o.finalChance === null && chances.has(o.tokenId);
    const q = (live ? quotes?.get(o.tokenId) : undefined) ?? NO_QUOTE;
    return {
      name: o.name,
      chance,
      odds: oddsForChance(chance),
      best_bid: q.best_bid,
      best_ask: q.best_ask,
      spread: q.spread,
      last_trade_price: q.last_trade_price,
      closing_chance: closing?.[o.index] ?? null,
    };
  });
}

/** People per outcome in outcome order; [] when the market has no market_splits rows. */
export function platformSplit(market: CatalogMarket, splits: Splits): number[] {
  const rows = splits.get(market.id);
  if (rows === undefined || rows.size === 0) return [];
  return market.outcomes.map((o) => rows.get(o.index) ?? 0);
}

export function eventUrl(webUrl: string, slug: string): string {
  return `${webUrl}/e/${encodeURIComponent(slug)}`;
}

export function marketUrl(webUrl: string, marketId: string): string {
  return `${webUrl}/m/${encodeURIComponent(marketId)}`;
}

/**
 * 24-hour change of a market: its first outcome's chance now minus its chance at or before 24 h ago
 * (from price history), rounded to 4 decimals. Where history does not reach back 24 h, the catalog's
 * oneDayPriceChange; without either, 0.
 */
export function change24h(market: CatalogMarket, chances: Chances, dayAgo: DayAgo | undefined): number {
  const first = market.outcomes[0];
  const then = first === undefined ? undefined : dayAgo?.get(first.tokenId);
  if (first !== undefined && then !== undefined) return chanceChange(outcomeChance(first, chances), then);
  return chanceChange(market.oneDayPriceChange ?? 0, 0);
}

export function buildMarket(market: CatalogMarket, chances: Chances, splits: Splits, webUrl: string, dayAgo?: DayAgo, quotes?: Quotes): Market {
  return {
    id: market.id,
    question: market.question,
    // The ingestor stores groupItemTitle, or '' when the exchange sent none: fall back to the question.
    label: market.label !== '' ? market.label : market.question,
    kind: market.kind,
    outcomes: buildQuotedOutcomes(market, chances, quotes),
    platform_split: platformSplit(market, splits),
    closes_at: market.closesAt?.toISOString() ?? null,
    closed: market.closed,
    resolved_outcome: market.resolution?.outcome ?? null,
    resolved_at: market.resolution?.at.toISOString() ?? null,
    settling: market.settling ?? null,
    change_24h: change24h(market, chances, dayAgo),
    url: marketUrl(webUrl, market.id),
  };
}

export function buildGame(event: CatalogEvent, game: GameState | undefined): Game | null {
  if (game === undefined) return null;
  return {
    live: game.live,
    score: game.score,
    clock: game.clock,
    period: game.period,
    // Our league key (the `league` parameter's value) where we have one; the feed's free-text
    // abbreviation (e.g. `sea` for Serie A) only for an event we could not place in a league.
    league: event.league ?? game.league,
    teams: event.teams,
  };
}

export interface EventInputs {
  chances: Chances;
  splits: Splits;
  game: GameState | undefined;
  webUrl: string;
  /** First-outcome chances 24 h ago, for change_24h; absent: the catalog's figure. */
  dayAgo?: DayAgo;
  /** Quotes by token (absent: none shown). */
  quotes?: Quotes;
}

/** The single-event resource: every market, in catalog position order. */
export function buildEvent(event: CatalogEvent, inputs: EventInputs): Event {
  return {
    slug: event.slug,
    title: event.title,
    category: event.category,
    closes_at: event.closesAt?.toISOString() ?? null,
    volume: event.volume,
    game: buildGame(event, inputs.game),
    markets: event.markets.map((m) => buildMarket(m, inputs.chances, inputs.splits, inputs.webUrl, inputs.dayAgo, inputs.quotes)),
    market_count: event.markets.length,
    url: eventUrl(inputs.webUrl, event.slug),
  };
}

/**
 * What a live chance moves on the event's page, for the API's live-price overlay (EventSnapshot
 * `overlay`): every market whose chances follow the order book (none of its outcomes has a final
 * chance) and whose outcomes sit at the positions of their indexes, with its first outcome's chance
 * 24 h ago when `change_24h` follows the live chance (null: it is the catalog's figure, whatever the
 * chance).
 */
export function overlayBasis(event: CatalogEvent, dayAgo: DayAgo | undefined): NonNullable<EventSnapshot['overlay']> {
  const basis: NonNullable<EventSnapshot['overlay']> = {};
  for (const m of event.markets) {
    // A price message names its outcome by index, the page by position: only where the two agree.
    if (m.outcomes.some((o, i) => o.finalChance !== null || o.index !== i)) continue;
    const first = m.outcomes[0];
    basis[m.id] = { day_ago: (first === undefined ? undefined : dayAgo?.get(first.tokenId)) ?? null };
  }
  return basis;
}

export function buildEventSnapshot(event: CatalogEvent, inputs: EventInputs): EventSnapshot {
  return { event: buildEvent(event, inputs), overlay: overlayBasis(event, inputs.dayAgo) };
}

/** The markets an event card shows: the first three OPEN ones in position order. */
export function cardMarkets(event: CatalogEvent): CatalogMarket[] {
  return event.markets.filter((m) => !m.closed).slice(0, CARD_MARKETS);
}

/** The list resource: the first three OPEN markets in position order; market_count counts all. */
export function buildEventCard(event: CatalogEvent, chances: Chances, webUrl: string): EventCard {
  return {
    slug: event.slug,
    title: event.title,
    category: event.category,
    markets: cardMarkets(event).map((m) => ({ id: m.id, question: m.question, outcomes: buildOutcomes(m, chances) })),
    market_count: event.markets.length,
    url: eventUrl(webUrl, event.slug),
  };
}

/**
 * Whether an event belongs on the open lists: open, with at least one open market (its card shows
 * open markets only, so an event whose markets all closed would be listed as an empty card).
 */
export function listedOpen(event: CatalogEvent): boolean {
  return !event.closed && event.markets.some((m) => !m.closed);
}

/** Busiest first: 24-hour volume descending, ties by slug (docs/design.md). */
export function busiestFirst(events: readonly CatalogEvent[]): CatalogEvent[] {
  return [...events].sort((a, b) => b.volume24h - a.volume24h || compareText(a.slug, b.slug));
}

/** One entry per distinct (category, league) among open events, by CATEGORY_DISPLAY_ORDER, then label. */
export function buildLeagueEntries(openEvents: readonly CatalogEvent[]): LeagueEntry[] {
  const seen = new Map<string, LeagueEntry>();
  for (const e of openEvents) {
    if (e.league === null || e.league === '') continue;
    const id = `${e.category}\u0000${e.league}`;
    if (!seen.has(id)) seen.set(id, { group: e.category, label: leagueLabel(e.league), league: e.league });
  }
  const groupRank = (group: string) => CATEGORY_DISPLAY_ORDER.indexOf(group as (typeof CATEGORY_DISPLAY_ORDER)[number]);
  return [...seen.values()].sort(
    (a, b) => groupRank(a.group) - groupRank(b.group) || compareText(a.label, b.label) || compareText(a.league, b.league),
  );
}

/** The keys that get a `markets:league:<key>` list: every league entry's, once, in code-point order. */
export function listedLeagueKeys(leagues: readonly LeagueEntry[]): string[] {
  return [...new Set(leagues.map((l) => l.league))].sort(compareText);
}

/** The lower-cased text `q` matches: the title and ALL market questions, one per line. */
export function searchText(event: CatalogEvent): string {
  return [event.title, ...event.markets.map((m) => m.question)].join('\n').toLowerCase();
}

export interface ListSnapshots {
  lists: Array<{ name: SnapshotName; payload: MarketListSnapshot }>;
  search: { name: SnapshotName; payload: MarketSearchSnapshot };
  /** League keys that have a `markets:league:<key>` list in this build. */
  leagueKeys: string[];
}

/**
 * Every list snapshot from the open events: `markets:trending`, one `markets:category:<C>` per category
 * (even when empty, so the API always finds one), one `markets:league:<key>` per league with open events,
 * and `markets:search`. Cards are built once and shared by all lists.
 */
export function buildListSnapshots(openEvents: readonly CatalogEvent[], chances: Chances, webUrl: string, ranking?: number): ListSnapshots {
  const ordered = busiestFirst(openEvents.filter(listedOpen));
  const cards = new Map(ordered.map((e) => [e.id, buildEventCard(e, chances, webUrl)] as const));
  const cardOf = (e: CatalogEvent): EventCard => cards.get(e.id) ?? buildEventCard(e, chances, webUrl);
  const categories = [...CATEGORY_DISPLAY_ORDER];
  const leagues = buildLeagueEntries(ordered);
  const list = (events: CatalogEvent[]): MarketListSnapshot => ({
    ...(ranking === undefined ? {} : { ranking }),
    categories,
    leagues,
    events: events.slice(0, LIST_SNAPSHOT_SIZE).map(cardOf),
  });

  const lists: ListSnapshots['lists'] = [{ name: 'markets:trending', payload: list(ordered) }];
  for (const category of CATEGORIES) {
    lists.push({ name: `markets:category:${category}`, payload: list(ordered.filter((e) => e.category === category)) });
  }
  const leagueKeys = listedLeagueKeys(leagues);
  for (const key of leagueKeys) {
    lists.push({ name: `markets:league:${key}`, payload: list(ordered.filter((e) => e.league === key)) });
  }
  const search: MarketSearchSnapshot = {
    ...(ranking === undefined ? {} : { ranking }),
    categories,
    leagues,
    entries: ordered.map((e) => ({ text: searchText(e), category: e.category, league: e.league, card: cardOf(e) })),
  };
  return { lists, search: { name: 'markets:search', payload: search }, leagueKeys };
}

/** An empty list (a league that no longer has open events), so its stale list is not served. */
export function emptyList(openEvents: readonly CatalogEvent[]): MarketListSnapshot {
  return { categories: [...CATEGORY_DISPLAY_ORDER], leagues: buildLeagueEntries(openEvents.filter(listedOpen)), events: [] };
}

/** Code-point order: deterministic across machines, unlike localeCompare. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
