import { z } from 'zod';
import { CATEGORIES } from '../domain/categories.js';
import { count } from './fields.js';

export { CATEGORIES };

/**
 * The resources of docs/api.md as zod schemas: the single definition from which response validation,
 * the OpenAPI document and the snapshot builder's output types all come.
 */

export const categorySchema = z.enum(CATEGORIES).meta({ description: 'Event category' });
export type Category = z.infer<typeof categorySchema>;
/** The order docs/api.md gives for the `categories` field of the market list. */
export const CATEGORY_DISPLAY_ORDER: readonly Category[] = ['Sport', 'Football', 'Crypto', 'Politics', 'Economy', 'Tech', 'Culture'];

export const CALL_STATUSES = ['open', 'won', 'lost', 'void'] as const;
export const callStatusSchema = z.enum(CALL_STATUSES);
export type CallStatus = z.infer<typeof callStatusSchema>;

const timestamp = z.string().meta({ description: 'ISO 8601 UTC timestamp', format: 'date-time' });
const chance = z.number().min(0).max(1).meta({ description: 'Chance, 0 to 1' });

export const oddsSchema = z
  .object({
    percent: z.string().meta({ description: 'Whole percent with a % sign; with decimals where whole would say 0% or 100% of a chance that is neither (0.001 → 0.1%, 0.999 → 99.9%)', examples: ['25%'] }),
    decimal: z.string().nullable().meta({ description: 'Decimal odds, two decimals. A certainty: `1.00` for chance 1 (the stake back), null for chance 0 (no finite payout)', examples: ['4.00'] }),
    fractional: z.string().nullable().meta({ description: 'numerator/denominator: the closest fraction to (1 − chance)/chance with a denominator of at most 1000 (0.999 → 1/999). Null for chance 0 or 1: no fraction describes a certainty', examples: ['3/1'] }),
    american: z.string().nullable().meta({ description: 'Signed, leading + or - (0.001 → +99900, 0.999 → -99900). Null for chance 0 or 1: no line describes a certainty', examples: ['+300'] }),
    price: z.string().meta({ description: 'Whole cents with a cent sign', examples: ['25¢'] }),
  })
  .meta({
    id: 'Odds',
    description:
      'The same chance written five ways: exactly what `/api/v1/odds?chance=` answers for that chance. A chance shown is 0, 1 (a resolved market\'s loser and winner) or from 0.001 to 0.999 (the exchange\'s extreme ticks). For a certainty the formats that have a value keep it (`0%`/`100%`, `0¢`/`100¢`, decimal `1.00` for 1) and the others are null.',
  });
export type Odds = z.infer<typeof oddsSchema>;

export const outcomeSchema = z
  .object({ name: z.string(), chance, odds: oddsSchema })
  .meta({ id: 'Outcome' });
export type Outcome = z.infer<typeof outcomeSchema>;

const quotePrice = (description: string) => z.number().min(0).max(1).nullable().meta({ description });

/**
 * The quotes of an outcome: the top of book its `chance` was computed from (the exchange's display
 * rule: the midpoint of best_bid and best_ask, or the last trade when the spread is wider than 0.10).
 */
export const quoteShape = {
  best_bid: quotePrice('Highest bid of the top of book the chance was computed from; null when the book has no bids (or the market is settled)'),
  best_ask: quotePrice('Lowest ask of that top of book; null when the book has no asks (or the market is settled)'),
  // Negative while the top is crossed: the exchange's own top crosses at times, for a moment, and
  // the quotes are the top the chance was computed from, as it was.
  spread: z
    .number()
    .min(-1)
    .max(1)
    .nullable()
    .meta({ description: 'best_ask − best_bid; null unless both are quoted; negative while the top of book is crossed (bid above ask, a transient state of the exchange), when `chance` is the last trade' }),
  last_trade_price: quotePrice('Price of the last trade; null before the first one (or once the market is settled)'),
};

/**
 * An outcome of a market page (single event, by-id): its chance, odds and the quotes behind them, and
 * the chance it closed at.
 */
export const quotedOutcomeSchema = z
  .object({
    name: z.string(),
    chance,
    odds: oddsSchema,
    ...quoteShape,
    closing_chance: chance.nullable().meta({
      description:
        'The displayed chance of this outcome when its market closed or resolved, recorded once then and never changed (the reference for closing-line value); null while the market is open, or where no chance was known',
    }),
  })
  .meta({
    id: 'QuotedOutcome',
    description:
      'An outcome with its quotes. `chance` follows from them by the display rule: the midpoint of `best_bid` and `best_ask` while `spread` is 0 to 0.10, else `last_trade_price`; with a one-sided or empty book, the catalog price. A settled market shows its final chance and null quotes.',
  });
export type QuotedOutcome = z.infer<typeof quotedOutcomeSchema>;

export const teamSchema = z
  .object({ name: z.string(), abbreviation: z.string(), home: z.boolean() })
  .meta({ id: 'Team' });
export type Team = z.infer<typeof teamSchema>;

export const gameSchema = z
  .object({
    live: z.boolean(),
    score: z.string().meta({ description: 'home-away' }),
    clock: z.string().meta({ description: 'As the feed sends it: "74", "5:18"' }),
    period: z.string().meta({ description: 'As the feed sends it: 1H, HT, Q4 …' }),
    league: z.string(),
    teams: z.array(teamSchema),
  })
  .meta({ id: 'Game', description: 'Match data of an event' });
export type Game = z.infer<typeof gameSchema>;

export const marketSchema = z
  .object({
    id: z.string(),
    question: z.string(),
    label: z.string().meta({ description: 'Short label, e.g. the side the market is about' }),
    kind: z.string().nullable().meta({ description: 'Sports market type in snake_case (moneyline, totals, spreads, both_teams_to_score …); null for non-sport' }),
    outcomes: z.array(quotedOutcomeSchema),
    platform_split: z.array(z.number().int()).meta({ description: "Callers on each outcome (one per person), in outcome order; empty when nobody has called" }),
    closes_at: timestamp.nullable(),
    closed: z.boolean(),
    resolved_outcome: z
      .number()
      .int()
      .min(0)
      .nullable()
      .meta({ description: 'Once resolved: the index of the winning outcome, or null when the market was voided. Null while unresolved (see resolved_at).' }),
    resolved_at: timestamp.nullable().meta({ description: 'When the market resolved; null while it has not. The history then ends with a point at the final price at this time.' }),
    change_24h: z.number().meta({ description: '24-hour change in chance' }),
    url: z.string(),
  })
  .meta({ id: 'Market' });
export type Market = z.infer<typeof marketSchema>;

/** A market as it appears inside an event of the list endpoint. */
export const marketCardSchema = z
  .object({ id: z.string(), question: z.string(), outcomes: z.array(outcomeSchema) })
  .meta({ id: 'MarketCard' });
export type MarketCard = z.infer<typeof marketCardSchema>;

/** What an event card and an event page both begin with: which event it is. */
const eventIdentity = { slug: z.string(), title: z.string(), category: categorySchema };
/** What they both end with: the markets shown, how many the event has, and its link. */
const eventMarkets = <M extends z.ZodType>(markets: M) => ({ markets, market_count: z.number().int(), url: z.string() });

export const eventCardSchema = z
  .object({
    ...eventIdentity,
    ...eventMarkets(z.array(marketCardSchema).max(3).meta({ description: 'At most the top three markets' })),
  })
  .meta({ id: 'EventCard', description: 'An event in the market list' });
export type EventCard = z.infer<typeof eventCardSchema>;

export const eventSchema = z
  .object({
    ...eventIdentity,
    closes_at: timestamp.nullable(),
    volume: z.number().meta({ description: 'Total traded volume' }),
    game: gameSchema.nullable(),
    ...eventMarkets(z.array(marketSchema)),
  })
  .meta({ id: 'Event' });
export type Event = z.infer<typeof eventSchema>;

export const leagueEntrySchema = z
  .object({
    group: z.string().meta({ description: 'The category the league belongs to' }),
    label: z.string(),
    league: z.string().meta({ description: 'Key usable as the `league` parameter' }),
  })
  .meta({ id: 'LeagueEntry' });
export type LeagueEntry = z.infer<typeof leagueEntrySchema>;

export const historyPointSchema = z
  .object({ t: z.number().int().meta({ description: 'Unix seconds' }), chance })
  .meta({ id: 'HistoryPoint' });
export type HistoryPoint = z.infer<typeof historyPointSchema>;

export const resultSchema = z
  .object({ label: z.string(), chance, market_id: z.string() })
  .meta({ id: 'Result' });
export type Result = z.infer<typeof resultSchema>;

export const liveMatchSchema = z
  .object({
    slug: z.string(),
    title: z.string(),
    league: z.string(),
    score: z.string(),
    clock: z.string(),
    period: z.string(),
    teams: z.array(teamSchema),
    result: z.array(resultSchema),
    markets: z.number().int(),
    url: z.string(),
  })
  .meta({ id: 'LiveMatch' });
export type LiveMatch = z.infer<typeof liveMatchSchema>;

export const errorBodySchema = z
  .object({
    ok: z.literal(false),
    error: z.object({
      code: z.enum(['bad_request', 'not_found', 'method_not_allowed', 'request_timeout', 'rate_limited', 'headers_too_large', 'unavailable', 'internal']),
      message: z.string(),
    }),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof errorBodySchema>;

export const tradeSides = ['BUY', 'SELL'] as const;

/** A trade of the tape, as `/markets/{slug}/trades` lists it and the stream's `trade` message carries it. */
export const tradeFields = {
  id: z.string().meta({ description: 'The trade\'s id: stable and opaque (the same trade always has the same id)' }),
  market_id: z.string(),
  outcome_index: count,
  outcome: z.string().meta({ description: 'Outcome name: the token that printed' }),
  price: z.number().min(0).max(1).meta({ description: 'Price per share, dollars (0 to 1)' }),
  size: z.number().positive().meta({ description: 'Shares' }),
  notional: z.number().min(0).meta({ description: 'price × size, dollars' }),
  side: z.enum(tradeSides).meta({ description: 'The taker\'s side on this outcome\'s token' }),
  at: z.string().meta({ description: 'The exchange\'s time of the match: ISO 8601 UTC with milliseconds', format: 'date-time' }),
};
