import type { BookMessage, CatalogEvent, GammaEvent, GammaMarket, NewMarketMessage } from '../protocol.js';
import { bookHash, formatPrice, toLevels } from './book.js';
import { priceAt, type SeriesSpec } from './history.js';
import type { SimEvent, SimMarket } from './model.js';

/**
 * The synthetic state rendered as the exchange shows it: Gamma catalog events (JSON-encoded string
 * fields and all), CLOB book snapshots, and new_market announcements.
 */

/**
 * Formatted dates, kept: a catalog page renders every market's dates, which hardly ever change, and
 * formatting them was a sixth of the simulator's time at 5,000 open events. Emptied when full.
 */
const isoDates = new Map<number, string>();
const nonIsoDates = new Map<number, string>();
const DATES_MAX = 100_000;

/** Gamma writes ISO without milliseconds, and sometimes "2026-04-05 15:10:00+00". */
export function formatDate(ms: number, nonIso = false): string {
  const memo = nonIso ? nonIsoDates : isoDates;
  let text = memo.get(ms);
  if (text === undefined) {
    const iso = new Date(ms).toISOString();
    text = nonIso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}+00` : `${iso.slice(0, 19)}Z`;
    if (memo.size >= DATES_MAX) memo.clear();
    memo.set(ms, text);
  }
  return text;
}

/**
 * The displayed chance of the first outcome in milli: midpoint, or the last trade when the spread is
 * wider than 0.10, or the fair price when the book is one-sided (docs/protocol.md §1 display rule).
 */
export function displayMilli(m: SimMarket): number {
  const bid = m.book.bestBid();
  const ask = m.book.bestAsk();
  const fallback = m.lastTrade ?? Math.round(m.fair * 1000);
  if (bid === null || ask === null) return fallback;
  if (ask - bid > 100) return fallback;
  return Math.round((bid + ask) / 2);
}

/** The key of a market's price series (history.ts), one per seed and market. */
export function seriesKey(seed: number, marketId: string): string {
  return `${seed}:${marketId}`;
}

export function seriesSpec(seed: number, m: SimMarket, nowMs: number): SeriesSpec {
  const final = m.finalPrices ? Number(m.finalPrices[0]) : null;
  return {
    key: seriesKey(seed, m.id),
    initial: m.initialFair,
    current: final ?? displayMilli(m) / 1000,
    endSec: Math.floor((m.resolvedAt ?? nowMs) / 1000),
  };
}

function bookLiquidity(m: SimMarket): number {
  let sum = 0;
  for (const [p, s] of m.book.bids) sum += (s / 100) * (p / 1000);
  for (const [p, s] of m.book.asks) sum += (s / 100) * (1 - p / 1000);
  return Math.round(sum * 100) / 100;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

function renderMarket(e: SimEvent, m: SimMarket, seed: number, nowMs: number): GammaMarket {
  const yes = displayMilli(m);
  const prices = m.finalPrices ?? [formatPrice(yes), formatPrice(1000 - yes)];
  const bid = m.book.bestBid();
  const ask = m.book.bestAsk();
  const liquidity = bookLiquidity(m);
  const spec = seriesSpec(seed, m, nowMs);
  const market: GammaMarket = {
    id: m.id,
    conditionId: m.conditionId,
    question: m.question,
    slug: m.slug,
    groupItemTitle: m.groupItemTitle,
    description: m.description,
    startDate: formatDate(m.createdAt, e.nonIsoDates),
    endDate: formatDate(e.endDate, e.nonIsoDates),
    outcomes: JSON.stringify(m.outcomes),
    outcomePrices: JSON.stringify(prices),
    clobTokenIds: JSON.stringify(m.tokens),
    active: true,
    closed: m.closed,
    acceptingOrders: !m.closed,
    enableOrderBook: true,
    volume: String(round4(m.volume)),
    volumeNum: round4(m.volume),
    volume24hr: round4(m.volume24hr),
    liquidity: String(liquidity),
    liquidityNum: liquidity,
    orderPriceMinTickSize: m.book.tick / 1000,
    sportsMarketType: m.sportsMarketType,
    line: m.line,
    umaResolutionStatus: m.closed ? 'resolved' : null,
    negRisk: e.exclusive,
  };
  if (!m.closed) {
    if (bid !== null) market.bestBid = bid / 1000;
    if (ask !== null) market.bestAsk = ask / 1000;
    if (bid !== null && ask !== null) market.spread = round4((ask - bid) / 1000);
    market.oneDayPriceChange = round4(yes / 1000 - priceAt(spec, spec.endSec - 86_400));
  }
  if (m.lastTrade !== null) market.lastTradePrice = m.lastTrade / 1000;
  if (m.resolvedAt !== null) market.closedTime = formatDate(m.resolvedAt, e.nonIsoDates);
  if (e.game) market.gameStartTime = formatDate(e.game.kickoff, e.nonIsoDates);
  return market;
}

/** An event's totals as its catalog entry shows them: one definition for renderEvent and listFields. */
function totals(e: SimEvent): { volume: number; volume24hr: number; liquidity: number } {
  let volume = 0;
  let volume24hr = 0;
  let liquidity = 0;
  for (const m of e.markets) {
    volume += round4(m.volume);
    volume24hr += round4(m.volume24hr);
    liquidity += bookLiquidity(m);
  }
  return { volume: round4(volume), volume24hr: round4(volume24hr), liquidity: round4(e.liquidityBase + liquidity) };
}

/**
 * The fields of renderEvent's answer that the list queries filter and sort on (catalog-query.ts),
 * without rendering the markets: the whole catalog is sorted for every page, and only the page is
 * rendered (protocol.ts ListedEvent).
 */
export function listFields(e: SimEvent): CatalogEvent {
  return {
    id: e.id,
    slug: e.slug,
    active: true,
    closed: e.closed,
    live: e.game ? e.game.phase === 'live' : null,
    gameId: e.game ? e.game.gameId : null,
    ...totals(e),
    startDate: formatDate(e.startDate, e.nonIsoDates),
    endDate: formatDate(e.endDate, e.nonIsoDates),
    tags: e.tags,
  };
}

export function renderEvent(e: SimEvent, seed: number, nowMs: number): GammaEvent {
  const markets = e.markets.map((m) => renderMarket(e, m, seed, nowMs));
  const sums = totals(e);
  const event: GammaEvent = {
    id: e.id,
    ticker: e.slug,
    slug: e.slug,
    title: e.title,
    description: e.description,
    startDate: formatDate(e.startDate, e.nonIsoDates),
    creationDate: formatDate(e.createdAt, e.nonIsoDates),
    endDate: formatDate(e.endDate, e.nonIsoDates),
    active: true,
    closed: e.closed,
    archived: false,
    volume: sums.volume,
    volume24hr: sums.volume24hr,
    liquidity: sums.liquidity,
    negRisk: e.exclusive,
    tags: e.tags ? e.tags.map((t) => ({ ...t })) : null,
    markets,
  };
  if (e.closedAt !== null) event.closedTime = formatDate(e.closedAt, e.nonIsoDates);
  const g = e.game;
  if (g) {
    event.gameId = g.gameId;
    event.startTime = formatDate(g.kickoff, e.nonIsoDates);
    event.teams = [
      { name: g.home.name, abbreviation: g.home.abbreviation.toLowerCase(), ordering: 'home' },
      { name: g.away.name, abbreviation: g.away.abbreviation.toLowerCase(), ordering: 'away' },
    ];
    event.score = g.phase === 'scheduled' ? '' : `${g.homeScore}-${g.awayScore}`;
    event.period = g.period;
    event.elapsed = g.elapsed;
    event.live = g.phase === 'live';
    event.ended = g.phase === 'ended';
  }
  return event;
}

export function bookMessage(m: SimMarket, outcome: 0 | 1, timestamp: string): BookMessage {
  const view = m.book.view(outcome);
  const bids = toLevels(view.bids);
  const asks = toLevels(view.asks);
  const asset = m.tokens[outcome];
  const message: BookMessage = {
    event_type: 'book',
    asset_id: asset,
    market: m.conditionId,
    bids,
    asks,
    timestamp,
    hash: bookHash(asset, JSON.stringify(bids), JSON.stringify(asks)),
    tick_size: formatPrice(m.book.tick),
  };
  if (m.lastTrade !== null) message.last_trade_price = formatPrice(outcome === 0 ? m.lastTrade : 1000 - m.lastTrade);
  return message;
}

export function newMarketMessages(e: SimEvent, timestamp: string): NewMarketMessage[] {
  return e.markets.map((m) => ({
    event_type: 'new_market',
    id: m.id,
    question: m.question,
    market: m.conditionId,
    slug: m.slug,
    description: m.description,
    assets_ids: [...m.tokens],
    outcomes: [...m.outcomes],
    event_message: { id: e.id, ticker: e.slug, slug: e.slug, title: e.title, description: e.description },
    tags: (e.tags ?? []).map((t) => t.slug),
    sports_market_type: m.sportsMarketType ?? '',
    group_item_title: m.groupItemTitle,
    line: m.line === null ? '' : String(m.line),
    order_price_min_tick_size: formatPrice(m.book.tick),
    timestamp,
  }));
}
