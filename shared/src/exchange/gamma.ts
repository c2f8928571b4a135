import { z } from 'zod';
import {
  idString,
  looseBoolean,
  looseNumber,
  looseStringArray,
  looseText,
  looseTime,
  parseEach,
} from './lenient.js';

/**
 * The catalog's (Gamma REST) event and market as the ingestor needs them (docs/protocol.md §3).
 * Lenient: JSON-encoded string arrays, numbers as strings, non-ISO times, null tags and missing
 * optional fields are all accepted. Parsing is per item: a bad market is dropped from its event and
 * counted, a bad event is dropped from its page and counted; neither aborts the rest.
 */

export const gammaTagSchema = z
  .object({ id: looseText, label: looseText, slug: looseText })
  .transform((t) => ({ id: t.id ?? '', label: t.label ?? '', slug: t.slug ?? '' }));
export type GammaTag = z.output<typeof gammaTagSchema>;

export const gammaTeamSchema = z.object({
  name: looseText,
  abbreviation: looseText,
  /** "home" | "away" (case varies); anything else means unknown. */
  ordering: looseText,
});
export type GammaTeam = z.output<typeof gammaTeamSchema>;

export const gammaMarketSchema = z
  .object({
    id: idString,
    conditionId: looseText,
    question: z.string(),
    slug: looseText,
    groupItemTitle: looseText,
    outcomes: looseStringArray,
    outcomePrices: looseStringArray,
    clobTokenIds: looseStringArray,
    endDate: looseTime,
    closed: looseBoolean,
    active: looseBoolean,
    acceptingOrders: looseBoolean,
    volume: looseNumber,
    volumeNum: looseNumber,
    volumeClob: looseNumber,
    volume24hr: looseNumber,
    volume24hrClob: looseNumber,
    bestBid: looseNumber,
    bestAsk: looseNumber,
    lastTradePrice: looseNumber,
    oneDayPriceChange: looseNumber,
    sportsMarketType: looseText,
    line: looseNumber,
    umaResolutionStatus: looseText,
    /** When the match starts (sports markets); the market's `startDate` is when it was listed. */
    gameStartTime: looseTime,
    negRisk: looseBoolean,
  })
  .transform((m, ctx) => {
    // A market is only usable with one token per outcome: the token ids are how the book feed
    // names its outcomes. Markets not yet on the order book have no token ids and are skipped.
    const outcomes = m.outcomes ?? [];
    const tokens = m.clobTokenIds ?? [];
    if (outcomes.length === 0 || outcomes.length !== tokens.length || tokens.some((t) => t.trim() === '')) {
      ctx.addIssue({ code: 'custom', message: 'outcomes and clobTokenIds missing or of different lengths' });
      return z.NEVER;
    }
    return { ...m, outcomes, clobTokenIds: tokens };
  });
export type GammaMarket = z.output<typeof gammaMarketSchema>;

/** Each market with its index in the event's `markets` array (its position, kept even when a sibling is skipped). */
function parseMarkets(raw: unknown): { items: Array<GammaMarket & { position: number }>; skipped: number } {
  if (!Array.isArray(raw)) return { items: [], skipped: 0 };
  const items: Array<GammaMarket & { position: number }> = [];
  let skipped = 0;
  raw.forEach((m: unknown, position) => {
    const r = gammaMarketSchema.safeParse(m);
    if (r.success) items.push({ ...r.data, position });
    else skipped++;
  });
  return { items, skipped };
}

const gammaSeriesSchema = z.object({ id: looseText, slug: looseText });

export const gammaEventSchema = z
  .object({
    id: idString,
    slug: z.string().min(1),
    title: z.string(),
    description: looseText,
    startDate: looseTime,
    /** Kick-off of a sports event (`startDate` is when the listing opened). */
    startTime: looseTime,
    endDate: looseTime,
    active: looseBoolean,
    closed: looseBoolean,
    volume: looseNumber,
    volume24hr: looseNumber,
    liquidity: looseNumber,
    negRisk: looseBoolean,
    tags: z.unknown().optional(),
    markets: z.unknown().optional(),
    gameId: looseText,
    teams: z.unknown().optional(),
    seriesSlug: looseText,
    series: z.unknown().optional(),
    // Match state as the catalog last saw it: fills a game at start and after a missed final frame.
    score: looseText,
    period: looseText,
    elapsed: looseText,
    live: looseBoolean,
    ended: looseBoolean,
  })
  .transform((e) => {
    const markets = parseMarkets(e.markets);
    const series = parseEach(gammaSeriesSchema, e.series).items;
    return {
      id: e.id,
      slug: e.slug,
      title: e.title,
      description: e.description ?? '',
      startDate: e.startDate,
      startTime: e.startTime,
      endDate: e.endDate,
      active: e.active,
      closed: e.closed,
      volume: e.volume,
      volume24hr: e.volume24hr,
      liquidity: e.liquidity,
      negRisk: e.negRisk,
      tags: parseEach(gammaTagSchema, e.tags).items,
      markets: markets.items,
      /** Markets of this event that could not be parsed and were left out. */
      marketsSkipped: markets.skipped,
      gameId: e.gameId === null || e.gameId.trim() === '' ? null : e.gameId.trim(),
      teams: parseEach(gammaTeamSchema, e.teams).items,
      seriesSlug: e.seriesSlug ?? series.find((s) => s.slug)?.slug ?? null,
      seriesIds: series.flatMap((s) => (s.id ? [s.id.trim()] : [])),
      score: e.score,
      period: e.period,
      elapsed: e.elapsed,
      live: e.live,
      ended: e.ended,
    };
  });
export type GammaEvent = z.output<typeof gammaEventSchema>;

export interface GammaEventsPage {
  events: GammaEvent[];
  /** Events that could not be parsed. */
  skippedEvents: number;
  /** Markets that could not be parsed, inside events that could. */
  skippedMarkets: number;
}

/**
 * Parse a `GET /events` response body (an array of events). A body that is not an array yields
 * no events (and is the caller's error to report); each element is parsed on its own.
 */
export function parseGammaEvents(body: unknown): GammaEventsPage {
  const { items, skipped } = parseEach(gammaEventSchema, body);
  return {
    events: items,
    skippedEvents: skipped,
    skippedMarkets: items.reduce((n, e) => n + e.marketsSkipped, 0),
  };
}

/**
 * One league of `GET /sports`: its `sport` key (`epl`, `lal`, `mlp`…), the tag ids its events carry
 * (a comma-separated string on the wire) and its series id.
 */
export const gammaSportSchema = z
  .object({ sport: z.string().trim().min(1), tags: looseText, series: looseText })
  .transform((s) => ({
    sport: s.sport.toLowerCase(),
    tagIds: (s.tags ?? '').split(',').map((t) => t.trim()).filter((t) => t !== ''),
    seriesId: s.series?.trim() ? s.series.trim() : null,
  }));
export type GammaSport = z.output<typeof gammaSportSchema>;

/** Parse a `GET /sports` body; unreadable entries are dropped (a league then falls back to tags). */
export function parseGammaSports(body: unknown): GammaSport[] {
  return parseEach(gammaSportSchema, body).items;
}
