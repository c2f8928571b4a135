import { z } from 'zod';
import { count, ok } from './fields.js';
import { CATEGORIES, categorySchema, eventCardSchema, eventSchema, historyPointSchema, leagueEntrySchema, liveMatchSchema, marketSchema, oddsSchema } from './resources.js';
import { BOOK_DEPTH, HISTORY_RANGES } from '../snapshots.js';
import { CANDLE_INTERVALS } from '../history/tiers.js';
import {
  callListResponseSchema,
  callResponseSchema,
  comboListResponseSchema,
  LEADERBOARD_SORTS,
  LEADERBOARD_WINDOWS,
  leaderboardResponseSchema,
  userCallsResponseSchema,
  userResponseSchema,
} from './records-resources.js';
import { CALL_STATUSES, tradeFields } from './resources.js';
import { ARCHIVE_DATASETS, ARCHIVE_FORMATS, DAY_PATTERN, isRealDay } from '../archive/datasets.js';

/**
 * The endpoint table (docs/conventions.md "Endpoints: one table, one file per handler"): every public
 * endpoint is ONE entry here — path, parameter schema (query and path, with defaults and coercion),
 * response schema, cache policy and example requests. The API's adapter validates, caches and
 * serialises from it, and the OpenAPI document (openapi.ts) is generated from it.
 *
 * Adding an endpoint: add one `defineEndpoint(...)` entry to `endpointTable` and one handler file in
 * services/api/src/routes/; the API's typed handler map refuses to compile until the handler exists.
 *
 * Parameter rules shared by every endpoint (docs/design.md "Product decisions"):
 * - every value arrives as a string; a parameter given twice is a 400 (the adapter checks that);
 * - an empty optional parameter (`?q=`) counts as omitted, so a form with blank fields still works;
 * - unknown query parameters are ignored;
 * - a bad value is a 400 whose message names the parameter and its rule. Nothing is clamped.
 */

/** Cache classes of docs/design.md: live data, lists, odds. */
export type CachePolicy = 'live' | 'list' | 'odds';

/** `Cache-Control: public, max-age=<seconds>` per cache class. */
export const CACHE_MAX_AGE_SECONDS: Readonly<Record<CachePolicy, number>> = { live: 15, list: 30, odds: 3600 };

/** Error statuses an endpoint can answer besides the ones every endpoint can (400, 429, 500). */
export type EndpointErrorStatus = 404 | 503;

/** One example request: path parameters filled in and query parameters, as a user would send them. */
export interface EndpointExample {
  summary: string;
  path?: Record<string, string>;
  query?: Record<string, string>;
}

/** One row of the table. `Path` is the OpenAPI-style path (`/api/v1/markets/{eventSlug}`). */
export interface Endpoint<
  Path extends string = string,
  Params extends z.ZodObject = z.ZodObject,
  Response extends z.ZodObject = z.ZodObject,
> {
  /** OpenAPI-style path, also the key of the table. */
  readonly path: Path;
  /** The same path for Express (`/api/v1/markets/:eventSlug`). */
  readonly expressPath: string;
  /** Names of the path parameters, in order; every other field of `params` is a query parameter. */
  readonly pathParams: readonly string[];
  /** The endpoint's number in docs/api.md; null for an endpoint docs/api.md does not list (docs/design.md adds it). */
  readonly specNumber: number | null;
  readonly operationId: string;
  readonly summary: string;
  readonly description: string;
  readonly tags: readonly string[];
  /** Query and path parameters in one object; every input value is a string. */
  readonly params: Params;
  /** The success body, `ok: true` included. */
  readonly response: Response;
  readonly cache: CachePolicy;
  readonly errors: readonly EndpointErrorStatus[];
  readonly examples: readonly EndpointExample[];
}

/** `/a/{b}/c` → `/a/:b/c`. */
export function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);
}

/** Builds a table row, checking that every `{name}` in the path is a field of `params`. */
export function defineEndpoint<const Path extends string, Params extends z.ZodObject, Response extends z.ZodObject>(
  path: Path,
  def: Omit<Endpoint<Path, Params, Response>, 'path' | 'expressPath' | 'pathParams'>,
): Endpoint<Path, Params, Response> {
  const pathParams = pathParamNames(path);
  for (const name of pathParams) {
    if (!(name in def.params.shape)) throw new Error(`endpoint ${path}: path parameter ${name} is missing from params`);
  }
  const okShape = def.response.shape['ok'];
  if (!(okShape instanceof z.ZodLiteral) || okShape.value !== true) {
    throw new Error(`endpoint ${path}: response must have ok`);
  }
  return { ...def, path, expressPath: toExpressPath(path), pathParams };
}

// ---------------------------------------------------------------------------------------------
// Parameter builders. Each gives the parse schema (string in, typed value out) with one message per
// parameter, and an output type that documents itself in OpenAPI (io: 'output').

const emptyIsOmitted = (v: unknown): unknown => (v === '' ? undefined : v);

/** A UTF-16 surrogate without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const unstorable = (v: string) => v.includes('\u0000') || LONE_SURROGATE.test(v);

/**
 * Free text a store can take: no NUL (Postgres text cannot hold U+0000 and refuses the whole
 * statement) and no lone surrogate (it has no UTF-8 form). Checked here, in the parameter schema, so
 * such a value is the client's 400 on every endpoint before any handler reads a store with it: a
 * database error would answer 503 "unavailable", which a client and an alert both read as an outage.
 */
export function storableText(name: string) {
  const error = `${name} must be text without NUL characters or unpaired surrogates`;
  return (schema: z.ZodString) => schema.refine((v) => !unstorable(v), { error });
}

/** An optional integer parameter in [min, max] with a default. Digits only: `1.5`, `1e1`, `0x10`, `-1` are 400s. */
export function intParam(name: string, opts: { min: number; max: number; default: number; description: string }) {
  const error = `${name} must be an integer from ${opts.min} to ${opts.max}`;
  return z
    .preprocess(
      emptyIsOmitted,
      z
        .string({ error })
        .regex(/^[0-9]{1,9}$/, { error })
        .transform(Number)
        .pipe(z.number().int({ error }).min(opts.min, { error }).max(opts.max, { error }))
        .optional()
        .default(opts.default),
    )
    .meta({ description: `${opts.description} An integer from ${opts.min} to ${opts.max}; default ${opts.default}.` });
}

/** An optional parameter that must be one of `values`; matched case-insensitively and returned as spelled in `values`. */
export function enumParam<const V extends readonly [string, ...string[]]>(name: string, values: V, description: string) {
  const error = `${name} must be one of ${values.join(', ')}`;
  return z
    .preprocess(
      emptyIsOmitted,
      z
        .string({ error })
        .transform((v) => values.find((allowed) => allowed.toLowerCase() === v.toLowerCase()) ?? v)
        .pipe(z.enum(values, { error }))
        .optional(),
    )
    .meta({ description });
}

/**
 * An optional comma-separated list of names from `values`, case-insensitive (`listed` reads it); an
 * unknown name is a 400 naming the names allowed. Text in and out, so the document and the typed
 * client show it as the one comma-separated string a client sends.
 */
export function listParam(name: string, values: readonly [string, ...string[]], defaults: readonly string[], description: string) {
  const error = `${name} must be a comma-separated list of ${values.join(', ')}`;
  const names = values.map((v) => v.replace(/[^a-z0-9_]/gi, '')).join('|');
  return z
    .preprocess(emptyIsOmitted, z.string({ error }).regex(new RegExp(`^(${names})(,(${names}))*$`, 'i'), { error }).optional())
    .meta({ description: `${description} Default ${defaults.join(',')}.` });
}

/** The names of a `listParam` value (lower case, as in `values`), or `defaults` when it was not given. */
export function listed<const V extends string>(value: string | undefined, values: readonly V[], defaults: readonly V[]): Set<V> {
  if (value === undefined) return new Set(defaults);
  const given = value.toLowerCase().split(',');
  return new Set(values.filter((v) => given.includes(v)));
}

/** An optional free-text parameter of at most `max` characters. */
export function textParam(name: string, opts: { max: number; description: string }) {
  const error = `${name} must be a string of at most ${opts.max} characters`;
  return z
    .preprocess(emptyIsOmitted, storableText(name)(z.string({ error }).max(opts.max, { error })).optional())
    .meta({ description: opts.description });
}

/** An optional Unix time in seconds (digits only, no default). */
export function unixParam(name: string, description: string) {
  const error = `${name} must be a Unix time in whole seconds (digits only)`;
  return z
    .preprocess(emptyIsOmitted, z.string({ error }).regex(/^[0-9]{1,10}$/, { error }).transform(Number).pipe(z.number({ error }).int({ error }).min(0, { error })).optional())
    .meta({ description });
}

/** An optional UTC date, `YYYY-MM-DD` (a real date: `2026-02-30` is a 400). */
export function dateParam(name: string, description: string) {
  const error = `${name} must be a date written YYYY-MM-DD, e.g. 2026-11-30`;
  return z
    .preprocess(
      emptyIsOmitted,
      z
        .string({ error })
        .regex(DAY_PATTERN, { error })
        .refine(isRealDay, { error: `${name} must be a real date written YYYY-MM-DD` })
        .optional(),
    )
    .meta({ description, format: 'date' });
}

/** A path parameter: a non-empty string of at most `max` characters. */
export function pathParam(name: string, opts: { max: number; description: string }) {
  const error = `${name} must be a non-empty string of at most ${opts.max} characters`;
  return storableText(name)(z.string({ error }).min(1, { error }).max(opts.max, { error })).meta({ description: opts.description });
}

/** A market id in a path: the exchange's ids are digits; letters, `-` and `_` are allowed too. */
export function marketIdParam(name: string) {
  const error = `${name} must be a market id: 1 to 100 letters, digits, - or _`;
  return z
    .string({ error })
    .regex(/^[A-Za-z0-9_-]{1,100}$/, { error })
    .meta({ description: 'A market id, as in a call\'s or a combo leg\'s `market_id`' });
}

/** Most ids one `/markets/by-id?ids=` request may name. */
export const MAX_BATCH_IDS = 100;

/**
 * A comma-separated list of 1 to MAX_BATCH_IDS market ids (`ids=540001,540002`), each as
 * `marketIdParam` allows; spaces around an id are ignored, an empty item or a bad id is a 400 naming it.
 */
export function marketIdsParam(name: string) {
  const rule = `a comma-separated list of 1 to ${MAX_BATCH_IDS} market ids, each 1 to 100 letters, digits, - or _`;
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required: ${rule}` : `${name} must be ${rule}`) })
    .min(1, { error: `${name} is required: ${rule}` })
    .transform((raw, ctx) => {
      const ids = raw.split(',').map((id) => id.trim());
      if (ids.length > MAX_BATCH_IDS) {
        ctx.addIssue({ code: 'custom', message: `${name} must be ${rule}: ${ids.length} were given` });
        return z.NEVER;
      }
      const bad = ids.find((id) => !/^[A-Za-z0-9_-]{1,100}$/.test(id));
      if (bad !== undefined) {
        ctx.addIssue({ code: 'custom', message: `${name} must be ${rule}: ${bad === '' ? 'an empty item' : JSON.stringify(bad.slice(0, 40))} is not a market id` });
        return z.NEVER;
      }
      return ids;
    })
    .pipe(z.array(z.string()))
    .meta({ description: `Market ids: ${rule}. Answered in the order given; ids nobody knows are listed in \`missing\`.` });
}

/** The `cursor` of a list: a `next_cursor` as the list gave it (checked by the API: signed, and for this list). */
export function cursorParam() {
  const error = 'cursor must be a next_cursor exactly as a previous page of this list gave it';
  return z
    .preprocess(emptyIsOmitted, storableText('cursor')(z.string({ error }).max(512, { error })).optional())
    .meta({
      description:
        'The `next_cursor` of the previous page, as given: the page after it. Omitted: the first page. A cursor that was altered, or that another list (or the same list with other parameters) gave, is a 400.',
    });
}

/**
 * The `chance` of /odds: required, written as a plain decimal (`0.25`, `.25`), and a chance the
 * service can show: 0, 1 (a resolved market's loser and winner) or from 0.001 to 0.999 (the
 * exchange's extreme ticks). Past those ticks no format is faithful (0.9999 would be fractional `0/1`
 * and a profit of 0.00 on a win), so they are refused rather than written wrong. Exponents, hex,
 * signs, `NaN`, `Infinity` and more than 20 characters are refused: never what a person means.
 */
export function chanceParam(name: string) {
  const rule = 'a decimal number that is 0, 1, or from 0.001 to 0.999 (the exchange quotes nothing in between), e.g. 0.25';
  const error = `${name} must be ${rule}`;
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required: ${rule}` : error) })
    .min(1, { error: `${name} is required: ${rule}` })
    .max(20, { error })
    .regex(/^(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/, { error })
    .transform(Number)
    .pipe(z.number({ error }).refine((c) => c === 0 || c === 1 || (c >= 0.001 && c <= 0.999), { error }))
    .meta({ description: `The chance to convert: ${rule}. Plain decimal notation only (no exponent), at most 20 characters.` });
}

// ---------------------------------------------------------------------------------------------
// Response schemas (the `ok: true` bodies). Each carries an id so OpenAPI gets it as a component.

export const marketListResponseSchema = z
  .object({
    ok,
    live: z.boolean().meta({ description: 'True while the order-book feed is connected and its last message is under 30 s old; false means prices are the last known.' }),
    count: count.meta({ description: 'Number of events returned' }),
    categories: z.array(categorySchema).meta({ description: 'In order Sport, Football, Crypto, Politics, Economy, Tech, Culture' }),
    leagues: z.array(leagueEntrySchema),
    events: z.array(eventCardSchema),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page' }),
  })
  .meta({ id: 'MarketListResponse' });
export type MarketListResponse = z.infer<typeof marketListResponseSchema>;

export const marketEventResponseSchema = z
  .object({
    ok,
    live: z.boolean().meta({ description: 'True while the order-book feed is connected and its last message is under 30 s old.' }),
    event: eventSchema,
  })
  .meta({ id: 'MarketEventResponse' });
export type MarketEventResponse = z.infer<typeof marketEventResponseSchema>;

export const marketsByIdResponseSchema = z
  .object({
    ok,
    live: z.boolean().meta({ description: 'True while the order-book feed is connected and its last message is under 30 s old.' }),
    count: count.meta({ description: 'Number of markets found (the length of `markets`)' }),
    markets: z
      .array(
        z.object({
          event: z.string().meta({ description: 'Slug of the event holding the market (`/api/v1/markets/{eventSlug}`)' }),
          market: marketSchema,
        }),
      )
      .meta({ description: 'The markets found, in the order their ids were asked for' }),
    missing: z.array(z.string()).meta({ description: 'Ids asked for that no market has, in the order asked' }),
  })
  .meta({ id: 'MarketsByIdResponse' });
export type MarketsByIdResponse = z.infer<typeof marketsByIdResponseSchema>;

const bookLevelSchema = z
  .object({ price: z.number().min(0).max(1), size: z.number().min(0).meta({ description: 'Shares resting at that price' }) })
  .meta({ id: 'BookLevel' });

export const marketBookResponseSchema = z
  .object({
    ok,
    market_id: z.string(),
    as_of: z
      .string()
      .nullable()
      .meta({ description: 'When the last change shown was applied (ISO 8601 UTC); null when no book is held for the market (closed, or not traded yet)', format: 'date-time' }),
    outcomes: z
      .array(
        z.object({
          name: z.string(),
          bids: z.array(bookLevelSchema).meta({ description: 'Highest price first; the first is the outcome\'s `best_bid`' }),
          asks: z.array(bookLevelSchema).meta({ description: 'Lowest price first; the first is the outcome\'s `best_ask`' }),
        }),
      )
      .meta({ description: 'In outcome order, as the market lists them' }),
  })
  .meta({ id: 'MarketBookResponse' });
export type MarketBookResponse = z.infer<typeof marketBookResponseSchema>;

export const marketHistoryResponseSchema = z
  .object({
    ok,
    market_id: z.string(),
    question: z.string(),
    outcome: z.string().meta({ description: 'The first outcome: every point is its chance' }),
    range: z.enum(HISTORY_RANGES),
    points: z.array(historyPointSchema).meta({ description: 'Ascending t; the close of each bucket at its start (5 min for 1d, 30 min for 1w, 3 h for 1m, 1 day for max)' }),
  })
  .meta({ id: 'MarketHistoryResponse' });
export type MarketHistoryResponse = z.infer<typeof marketHistoryResponseSchema>;

const candleChance = z.number().min(0).max(1);
export const quoteCandleSchema = z
  .object({
    open: candleChance.meta({ description: 'At the first point of the bucket where this side was quoted' }),
    high: candleChance,
    low: candleChance,
    close: candleChance.meta({ description: 'At the last point of the bucket where this side was quoted' }),
  })
  .meta({ id: 'QuoteCandle' });
/** The groups a candle can carry (`fields=`). */
export const CANDLE_FIELDS = ['ohlc', 'volume', 'quotes'] as const;
export const DEFAULT_CANDLE_FIELDS: ReadonlyArray<(typeof CANDLE_FIELDS)[number]> = ['ohlc', 'volume'];
export const candleSchema = z
  .object({
    t: z.number().int().meta({ description: 'Bucket start, Unix seconds, aligned to the interval in UTC' }),
    open: candleChance.optional().meta({ description: 'With `ohlc`. Chance at the first point of the bucket (the previous close when the bucket had none)' }),
    high: candleChance.optional().meta({ description: 'With `ohlc`. Highest chance in the bucket' }),
    low: candleChance.optional().meta({ description: 'With `ohlc`. Lowest chance in the bucket' }),
    close: candleChance.optional().meta({ description: 'With `ohlc`. Chance at the last point of the bucket; a resolved market\'s last candle closes at its final price' }),
    volume: z.number().min(0).nullable().optional().meta({ description: "With `volume`. Shares printed on this outcome's token in the bucket (by the exchange's trade time); 0 without a trade; null before the market's trade data begins" }),
    notional: z.number().min(0).nullable().optional().meta({ description: 'With `volume`. Σ price × size of those trades, dollars (to a millionth); 0 without a trade; null before the trade data begins' }),
    trades: z.number().int().min(0).nullable().optional().meta({ description: 'With `volume`. Trades printed; 0 without a trade; null before the trade data begins' }),
    vwap: z.number().min(0).max(1).nullable().optional().meta({ description: 'With `volume`. notional ÷ volume (to a millionth); null without a trade' }),
    bid: quoteCandleSchema.nullable().optional().meta({ description: "With `quotes`. The outcome's best bid over the bucket; null when that side was empty throughout (outcome 1's bid is 1 − outcome 0's ask)" }),
    ask: quoteCandleSchema.nullable().optional().meta({ description: "With `quotes`. The outcome's best ask over the bucket; null when that side was empty throughout (outcome 1's ask is 1 − outcome 0's bid)" }),
  })
  .meta({ id: 'Candle' });
export type CandleBody = z.infer<typeof candleSchema>;

export const marketCandlesSchema = z
  .object({
    market_id: z.string(),
    question: z.string(),
    outcome: z.string().meta({ description: 'The outcome the chances are of' }),
    candles: z.array(candleSchema).meta({ description: 'Ascending t; none before the market\'s first recorded point; gaps carried forward flat' }),
  })
  .meta({ id: 'MarketCandles' });

export const candlesResponseSchema = z
  .object({
    ok,
    event: z.string().meta({ description: 'The event slug' }),
    interval: z.enum(CANDLE_INTERVALS),
    start: z.number().int().meta({ description: 'Window start, Unix seconds, aligned down to the interval' }),
    end: z.number().int().meta({ description: 'Window end (exclusive), Unix seconds, aligned up to the interval' }),
    markets: z.array(marketCandlesSchema),
  })
  .meta({ id: 'CandlesResponse' });
export type CandlesResponse = z.infer<typeof candlesResponseSchema>;

export const tradeSchema = z.object(tradeFields).meta({ id: 'Trade' });

export const tradesResponseSchema = z
  .object({
    ok,
    event: z.string().meta({ description: 'The event slug' }),
    trades: z.array(tradeSchema).meta({ description: 'Newest first (by `at`, then by id order for trades of the same millisecond)' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` (same parameters; `limit` may change) for the next, older page; null on the last page' }),
  })
  .meta({ id: 'TradesResponse' });
export type TradesResponse = z.infer<typeof tradesResponseSchema>;

/** Most markets one `/trades` request may name. */
export const TRADES_MAX_MARKETS = 20;
/** Most trades a page of `/trades`. */
export const TRADES_MAX_LIMIT = 1_000;

/** An optional outcome index (digits only; no default: every outcome). */
function outcomeFilterParam(name: string, description: string) {
  const error = `${name} must be an outcome index: an integer from 0 to 99`;
  return z
    .preprocess(emptyIsOmitted, z.string({ error }).regex(/^[0-9]{1,2}$/, { error }).transform(Number).pipe(z.number({ error }).int({ error }).min(0, { error })).optional())
    .meta({ description });
}

export const liveMatchesResponseSchema = z
  .object({
    ok,
    count: count.meta({ description: 'Number of matches in play' }),
    matches: z.array(liveMatchSchema),
  })
  .meta({ id: 'LiveMatchesResponse' });
export type LiveMatchesResponse = z.infer<typeof liveMatchesResponseSchema>;

export const oddsResponseSchema = z
  .object({
    ok,
    chance: z.number().min(0).max(1).meta({ description: 'The chance converted' }),
    wins_on_10: z.number().nullable().meta({ description: 'What 10 wins: 10 ÷ chance, 2 decimals (10 for chance 1); null for chance 0, which cannot win' }),
    profit_on_10: z.number().nullable().meta({ description: 'Profit of a right call on 10: 10 ÷ chance − 10, 2 decimals (0 for chance 1: a certainty pays the stake back); null for chance 0' }),
    xp_if_right: z.number().int().meta({ description: 'XP a right call would earn: 10 + round(90 × (1 − chance))' }),
    odds: oddsSchema,
  })
  .meta({ id: 'OddsResponse' });
export type OddsResponse = z.infer<typeof oddsResponseSchema>;

export const DATASET_NAMES_LIST = Object.keys(ARCHIVE_DATASETS) as [keyof typeof ARCHIVE_DATASETS, ...Array<keyof typeof ARCHIVE_DATASETS>];

export const exportEntrySchema = z
  .object({
    date: z.string().meta({ description: 'The UTC day the file holds (YYYY-MM-DD)', format: 'date' }),
    dataset: z.enum(DATASET_NAMES_LIST),
    format: z.enum(ARCHIVE_FORMATS),
    url: z.string().meta({ description: 'Where to download it: `/api/v1/exports/{date}/{dataset}.{format}` on this API' }),
    rows: z.number().int().min(0),
    bytes: z.number().int().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/).meta({ description: "The file's SHA-256, lowercase hex; also its download's ETag" }),
    schema_version: z.number().int().min(1).meta({ description: "The dataset's schema version (docs/archive.md)" }),
    made_at: z.string().meta({ description: 'When this file was written (ISO 8601 UTC)', format: 'date-time' }),
  })
  .meta({ id: 'ExportEntry' });
export type ExportEntry = z.infer<typeof exportEntrySchema>;

export const exportListResponseSchema = z
  .object({
    ok,
    exports: z.array(exportEntrySchema).meta({ description: 'Newest day first, then dataset, then format' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page' }),
  })
  .meta({ id: 'ExportListResponse' });

// ---------------------------------------------------------------------------------------------
// The table.

const endpointTable = [
  defineEndpoint('/api/v1/markets', {
    specNumber: 1,
    operationId: 'listMarkets',
    summary: 'List events',
    description: [
      'Open events, busiest first (24-hour volume); each event carries its top three markets.',
      'Without `category`, `league` or `q` the list is the trending one.',
      '`league` overrides `category`. An unknown `league` key answers 200 with an empty list (`count` 0): leagues come and go with the events on offer, so a key that worked yesterday is not an error today.',
      '`q` searches event titles and every market question (not only the three shown), case-insensitively; it is combined with `league` or `category` when given. An empty `q` means no search.',
      'Parameter values are case-insensitive for `category` and `league`. Unknown query parameters are ignored; a parameter given twice is a 400.',
      '`status`: `open` (default) lists open events that have at least one open market, busiest first; `closed` lists events whose markets are all closed (resolved, voided or ended), most recently closed first, kept listable for good. `q`, `category` and `league` work with both.',
      'Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` (with the same `status`, `category`, `league` and `q`) for the next page. An open walk keeps the ranking its first page showed: it returns every event that was listed when it began exactly once, in that order, however volumes move meanwhile (an event that closed since still appears, as it is now). A ranking stays walkable for 15 minutes after the next one replaced it; an older cursor is a 400 saying to start again. A closed walk never skips or repeats an event while others close: they appear before its first page.',
    ].join('\n\n'),
    tags: ['Markets'],
    params: z.object({
      category: enumParam('category', CATEGORIES, 'One of the categories; omitted means trending. Case-insensitive.'),
      league: textParam('league', {
        max: 40,
        description: 'A key from the response\'s `leagues` list (e.g. `epl`, `nba`, `btc`); overrides `category`. Case-insensitive. An unknown key gives an empty list, not an error.',
      }),
      q: textParam('q', { max: 80, description: 'Case-insensitive search over event titles and market questions, up to 80 characters. Empty means no search.' }),
      status: enumParam('status', ['open', 'closed'] as const, 'open (default): open events, busiest first; closed: events whose markets are all closed, most recently closed first. Case-insensitive.'),
      limit: intParam('limit', { min: 1, max: 60, default: 24, description: 'How many events to return.' }),
      cursor: cursorParam(),
    }),
    response: marketListResponseSchema,
    cache: 'live',
    errors: [503],
    examples: [
      { summary: 'Trending events' },
      { summary: 'Football, 10 events', query: { category: 'Football', limit: '10' } },
      { summary: 'One league', query: { league: 'epl' } },
      { summary: 'Search', query: { q: 'bitcoin', limit: '5' } },
      { summary: 'Closed events, newest closed first', query: { status: 'closed', limit: '10' } },
    ],
  }),
  // Before `/markets/{eventSlug}`: routes match in table order, and `by-id` is not an event slug.
  defineEndpoint('/api/v1/markets/by-id', {
    specNumber: null,
    operationId: 'getMarketsById',
    summary: 'Get many markets by id',
    description: [
      'Up to 100 markets in one request, each with the slug of its event, in the order their ids were asked for: for a client holding market ids (calls, combo legs, its own watch list) that would otherwise make one request per id.',
      'Each market is exactly as `/api/v1/markets/{eventSlug}` shows it (quotes, `platform_split`, resolution included). Ids no market has are listed in `missing`: the batch is still a 200. An id asked for twice is answered twice.',
      '`ids` missing, empty, with more than 100 ids, or with an item that is not a market id is a 400 naming the rule.',
    ].join('\n\n'),
    tags: ['Markets'],
    params: z.object({ ids: marketIdsParam('ids') }),
    response: marketsByIdResponseSchema,
    cache: 'live',
    errors: [503],
    examples: [{ summary: 'Three markets', query: { ids: '540060,540061,540062' } }],
  }),
  defineEndpoint('/api/v1/markets/{eventSlug}', {
    specNumber: 2,
    operationId: 'getMarketEvent',
    summary: 'Get an event',
    description: [
      'One event with all its markets, live odds in every format and `platform_split` on each market. An unknown slug is a 404.',
      'A closed event answers for good (the closed list names it for good): a day after it closed its page leaves the live store and is built again from the records when asked for, which can add a moment to the first answer; a 503 with `Retry-After` when that takes over 2 s. The same holds for its history, book, candles, its markets by id and their calls.',
    ].join('\n\n'),
    tags: ['Markets'],
    params: z.object({
      eventSlug: pathParam('eventSlug', { max: 200, description: "The event slug, as in the service's or the exchange's page address" }),
    }),
    response: marketEventResponseSchema,
    cache: 'live',
    errors: [404, 503],
    examples: [{ summary: 'An event', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' } }],
  }),
  defineEndpoint('/api/v1/markets/by-id/{marketId}', {
    specNumber: null,
    operationId: 'getMarketEventById',
    summary: 'Get the event of a market',
    description: [
      'The event holding a market, in the same body as `/api/v1/markets/{eventSlug}`: for a client that holds only a market id (a call\'s or a combo leg\'s `market_id`, a live match\'s `result`). Resolved markets are included: they carry `resolved_outcome` and `resolved_at`.',
      'An unknown market id is a 404; one that is not a market id at all (other characters than letters, digits, `-` and `_`, or over 100 characters) is a 400.',
    ].join('\n\n'),
    tags: ['Markets'],
    params: z.object({
      marketId: marketIdParam('marketId'),
    }),
    response: marketEventResponseSchema,
    cache: 'live',
    errors: [404, 503],
    examples: [{ summary: 'The event of a market', path: { marketId: '540060' } }],
  }),
  defineEndpoint('/api/v1/markets/{eventSlug}/history', {
    specNumber: 3,
    operationId: 'getMarketHistory',
    summary: 'Price history',
    description: [
      "The chance of one market's first outcome over time, ascending `t` (Unix seconds).",
      'Points are buckets aligned in UTC: 5 minutes for `1d`, an hour for `1w`, 3 hours for `1m` and one day for `max` (one week once the history is longer than 500 days). Each point is the close of its bucket\'s candle (the chance as it stood at the end of the bucket, as `/candles` gives it) at the bucket\'s start; a bucket without a point carries the previous close; a resolved market ends with a point at `resolved_at` with its final price.',
      '`market` defaults to the event\'s first market. An unknown event, or a `market` that is not one of the event\'s markets, is a 404; a `range` other than 1d, 1w, 1m or max is a 400. A market with no recorded history yet answers 200 with no points.',
    ].join('\n\n'),
    tags: ['Markets'],
    params: z.object({
      eventSlug: pathParam('eventSlug', { max: 200, description: 'The event slug' }),
      market: textParam('market', { max: 100, description: "A market id within the event; default the event's first market." }),
      range: enumParam('range', HISTORY_RANGES, 'One of 1d, 1w, 1m, max; default 1w.'),
    }),
    response: marketHistoryResponseSchema,
    cache: 'live',
    errors: [404, 503],
    examples: [
      { summary: 'The first market, last week', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' } },
      { summary: 'One market, everything', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' }, query: { market: '540046', range: 'max' } },
    ],
  }),
  defineEndpoint('/api/v1/markets/{eventSlug}/candles', {
    specNumber: null,
    operationId: 'getMarketCandles',
    summary: 'Candles',
    description: [
      'Open, high, low and close of the chance of an outcome, per interval, for up to 20 markets of one event, over any window the interval still keeps: `1m` for 7 days, `5m` for 60 days, `1h` and `1d` for good; with the trades printed on the outcome\'s token and its best bid and ask over each interval.',
      '`fields` picks what each candle carries, a comma-separated list: `ohlc` (`open`, `high`, `low`, `close` of the chance), `volume` (`volume` in shares, `notional` in dollars, `trades`, `vwap`) and `quotes` (`bid` and `ask`, each `{open, high, low, close}` or null when that side of the book was empty throughout the bucket). Default `ohlc,volume`; a field not asked for is absent from the candles; a name outside the three is a 400. Trades go into buckets by the exchange\'s trade time. `volume`, `notional` and `trades` are 0 in a bucket without a trade and null in buckets before the market\'s trade data begins (never 0 there); `vwap` is null without a trade. A gap carries the bid and ask closes forward as it does the chance\'s.',
      'Candles are aligned to the interval in UTC (`t` is the bucket start). A bucket without a point carries the previous close forward (open = high = low = close); there is no candle before a market\'s first recorded point; a resolved market\'s last candle is the one holding `resolved_at` and closes at its final price (1 or 0). Outcome 1 of a two-outcome market is 1 − outcome 0 (its high the complement of the low).',
      '`start` and `end` are Unix seconds, `start < end`; without them the window is the last 500 intervals up to now. A window of more than 2,000 candles per market is a 400, as is one that starts before the interval\'s retention (the message names the interval that still covers it). An unknown event, or a `market` that is not one of the event\'s markets, is a 404.',
      'A window that ended before the current bucket (and the 2-minute margin for late points) never changes: it is served with `Cache-Control: public, max-age=86400, immutable` and a strong `ETag` (`If-None-Match` gets a 304). A window reaching the current bucket is live data (15 s).',
    ].join('\n\n'),
    tags: ['Markets'],
    params: z.object({
      eventSlug: pathParam('eventSlug', { max: 200, description: 'The event slug' }),
      market: textParam('market', { max: 2_100, description: "Comma-separated market ids of the event, at most 20; default the event's markets (the first 20)." }),
      outcome: intParam('outcome', { min: 0, max: 99, default: 0, description: 'The outcome index whose chance the candles follow.' }),
      interval: enumParam('interval', CANDLE_INTERVALS, 'One of 1m, 5m, 1h, 1d; default 1h.'),
      start: unixParam('start', 'Window start, Unix seconds; default 500 intervals before `end`.'),
      end: unixParam('end', 'Window end (exclusive), Unix seconds; default now.'),
      fields: listParam('fields', CANDLE_FIELDS, DEFAULT_CANDLE_FIELDS, 'What each candle carries: a comma-separated list of ohlc, volume, quotes.'),
    }),
    response: candlesResponseSchema,
    cache: 'live',
    errors: [404, 503],
    examples: [
      { summary: 'Every market of an event, hourly, the last 500 hours', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' } },
      { summary: 'One market by the minute', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' }, query: { market: '540046', interval: '1m' } },
      { summary: 'Two markets, daily', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' }, query: { market: '540046,540047', interval: '1d' } },
      { summary: 'Volume and the book top by the 5 minutes, no chance', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' }, query: { market: '540046', interval: '5m', fields: 'volume,quotes' } },
      { summary: 'The second outcome with everything', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' }, query: { market: '540046', outcome: '1', fields: 'ohlc,volume,quotes' } },
    ],
  }),
  defineEndpoint('/api/v1/markets/{eventSlug}/book', {
    specNumber: null,
    operationId: 'getMarketBook',
    summary: 'Order book',
    description: [
      'The order book of one market of the event: per outcome, bids (highest first) and asks (lowest first) as `{price, size}`, up to `depth` levels a side. Its first levels are the outcome\'s `best_bid` and `best_ask` on `/api/v1/markets/{eventSlug}`.',
      'The ingestor publishes a book a few times a second at most, and within about a second of a change while the market trades; `as_of` says when the last change shown was applied. A market with no book held (closed, resolved, or not traded yet) answers 200 with empty sides and `as_of` null.',
      '`market` defaults to the event\'s first market. An unknown event, or a `market` that is not one of the event\'s markets, is a 404; a `depth` that is not an integer from 1 to 50 is a 400.',
    ].join('\n\n'),
    tags: ['Markets'],
    params: z.object({
      eventSlug: pathParam('eventSlug', { max: 200, description: 'The event slug' }),
      market: textParam('market', { max: 100, description: "A market id within the event; default the event's first market." }),
      depth: intParam('depth', { min: 1, max: BOOK_DEPTH, default: 10, description: 'Levels per side.' }),
    }),
    response: marketBookResponseSchema,
    cache: 'live',
    errors: [404, 503],
    examples: [
      { summary: 'The first market, 10 levels', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' } },
      { summary: 'One market, 50 levels', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' }, query: { market: '540046', depth: '50' } },
    ],
  }),
  defineEndpoint('/api/v1/markets/{eventSlug}/trades', {
    specNumber: null,
    operationId: 'getMarketTrades',
    summary: 'Trades',
    description: [
      'The trade tape of an event: every match the exchange printed on its markets\' outcome tokens, newest first. A match between a Yes and a No order prints on both tokens, so it is two trades, one per outcome, as the exchange prints them. `side` is the taker\'s side on that outcome\'s token; `notional` is price × size in dollars; `at` is the exchange\'s time of the match. Each trade is recorded once, however often the feed delivers it; its `id` is stable.',
      `\`market\`: comma-separated market ids of the event, at most ${TRADES_MAX_MARKETS} (default every market of the event); an id that is not one of the event's markets is a 404. \`outcome\`: an outcome index (default every outcome); one that a market asked for does not have is a 400. \`start\` (inclusive) and \`end\` (exclusive) are Unix seconds, \`start < end\`. Trades are kept for TRADES_RETENTION_DAYS (30 days by default): a \`start\` or an \`end\` before that is a 400 saying so.`,
      `Paging: \`limit\` 1 to ${TRADES_MAX_LIMIT} (default 100); every page carries \`next_cursor\` (null on the last page); pass it as \`cursor\` with the same parameters for the next, older page. A walk never repeats or skips a trade while new ones arrive: they appear before the walk's first page. Live data (15 s).`,
    ].join('\n\n'),
    tags: ['Markets'],
    params: z.object({
      eventSlug: pathParam('eventSlug', { max: 200, description: 'The event slug' }),
      market: textParam('market', { max: 2_100, description: `Comma-separated market ids of the event, at most ${TRADES_MAX_MARKETS}; default every market of the event.` }),
      outcome: outcomeFilterParam('outcome', 'An outcome index: only trades on that outcome\'s token. Default every outcome.'),
      start: unixParam('start', 'Window start (inclusive), Unix seconds; default as far back as trades are kept.'),
      end: unixParam('end', 'Window end (exclusive), Unix seconds; default now.'),
      cursor: cursorParam(),
      limit: intParam('limit', { min: 1, max: TRADES_MAX_LIMIT, default: 100, description: 'Trades per page.' }),
    }),
    response: tradesResponseSchema,
    cache: 'live',
    errors: [404, 503],
    examples: [
      { summary: 'The latest trades of an event', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' } },
      { summary: 'One market\'s Yes trades, a page of 1,000', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' }, query: { market: '540046', outcome: '0', limit: '1000' } },
      { summary: 'Every market\'s first outcome, 500 a page', path: { eventSlug: 'serie-a-nap-ata-2026-11-24' }, query: { outcome: '0', limit: '500' } },
    ],
  }),
  defineEndpoint('/api/v1/live', {
    specNumber: 4,
    operationId: 'listLiveMatches',
    summary: 'Live matches',
    description: [
      'Every match in play (the sports feed says live and not ended), busiest first.',
      '`result` lists home, draw (only where the event has a draw market) and away, each with its chance and the id of the moneyline market to call it on: for a soccer match the Yes chance of each of its three Yes/No markets, for a two-way game the chance of each team\'s outcome of its one moneyline market. A match without a moneyline market has an empty `result`.',
    ].join('\n\n'),
    tags: ['Markets'],
    params: z.object({}),
    response: liveMatchesResponseSchema,
    cache: 'live',
    errors: [503],
    examples: [{ summary: 'Matches in play' }],
  }),
  defineEndpoint('/api/v1/calls', {
    specNumber: 5,
    operationId: 'listCalls',
    summary: 'List calls',
    description: [
      'Public calls, newest first (by `made_at`, then id).',
      'With `market`, only that market\'s calls, and the response adds `platform_split`: how many people\'s latest call on the market is on each outcome, in outcome order (one per person; empty when nobody has called it).',
      'A `market` id nobody has called — including an id the service does not know — answers 200 with `count` 0, `calls` [] and `platform_split` []: markets come and go with the catalog, so an id that has no calls is an empty list, not an error.',
      'Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` for the next page. A walk never skips or repeats an item while new ones arrive: new items appear at the head of the list, before the walk\'s first page. The first page is the live list (cached 15 s); pages after it are read from the records themselves.',
      'A walk returns every call that was on the list when its first page was made, exactly once; each page shows the calls as they are now (a call settled since shows its result). 503 while the records have not been built yet (a service just started).',
    ].join('\n\n'),
    tags: ['Calls'],
    params: z.object({
      market: textParam('market', { max: 100, description: 'A market id; when given, only its calls, and the response adds `platform_split`.' }),
      limit: intParam('limit', { min: 1, max: 100, default: 25, description: 'How many calls to return.' }),
      cursor: cursorParam(),
    }),
    response: callListResponseSchema,
    cache: 'live',
    errors: [503],
    examples: [
      { summary: 'Latest calls' },
      { summary: 'Calls on one market', query: { market: '540193', limit: '10' } },
    ],
  }),
  defineEndpoint('/api/v1/calls/{id}', {
    specNumber: 6,
    operationId: 'getCall',
    summary: 'Get a call',
    description: 'One call as in its public link: the caller, the pick, the chance when it was made, its status and profit, the thesis and its updates (oldest first). An unknown id is a 404.',
    tags: ['Calls'],
    params: z.object({
      id: pathParam('id', { max: 64, description: "The call id, as in the call's public link" }),
    }),
    response: callResponseSchema,
    cache: 'list',
    errors: [404, 503],
    examples: [{ summary: 'A call', path: { id: 'GiGxeaJUak' } }],
  }),
  defineEndpoint('/api/v1/users/{handle}', {
    specNumber: 7,
    operationId: 'getUser',
    summary: 'Get a record',
    description: [
      "A person's public record: calls, settled, won, right_pct, profit on 10 (all time and the last 7 days), XP, streak, followers, following, copies, bio and interests.",
      'The handle matches case-insensitively, with or without a leading `@` (`@Alice`, `alice` and `ALICE` are the same person); the response spells it as the person does. An unknown handle is a 404.',
      '`right_pct` = round(100 × won ÷ (won + lost)), 0 with no won or lost calls (void calls never count). `streak` counts won calls back from the most recently settled non-void call. `xp` includes XP from won combos.',
      'Skill (docs/skill.md): `brier` is the mean of (chance_at_call − outcome)² over settled won and lost calls (lower is better; always calling 50 % scores 0.25); `calibration` splits those calls into ten buckets of chance_at_call, each with its calls, mean chance and share won; `clv` is the mean of the market\'s closing chance of the called outcome minus chance_at_call (over those calls whose market has a closing chance; positive: the market moved toward the picks); `ranks` is the person\'s rank on each all-time board, null where they are not on it. Everything needed to recompute them is public: the person\'s calls and each market\'s `closing_chance`.',
      'With `category`, brier, calibration, clv and ranks describe only the calls on markets of that category (ranks: the category\'s boards, `week` its week board); the rest of the record stays whole. Read as committed: a settlement shows at once.',
    ].join('\n\n'),
    tags: ['People'],
    params: z.object({
      handle: pathParam('handle', { max: 51, description: 'The handle, with or without a leading @; case-insensitive' }),
      category: enumParam('category', CATEGORIES, 'One of the categories: brier, calibration, clv and ranks of the calls in it only. Case-insensitive.'),
    }),
    response: userResponseSchema,
    cache: 'list',
    errors: [404, 503],
    examples: [
      { summary: 'A record', path: { handle: 'moonshot_max' } },
      { summary: 'With @, any case', path: { handle: '@Moonshot_Max' } },
      { summary: 'Skill in one category', path: { handle: 'moonshot_max' }, query: { category: 'Football' } },
    ],
  }),
  defineEndpoint('/api/v1/users/{handle}/calls', {
    specNumber: 8,
    operationId: 'listUserCalls',
    summary: "A person's calls",
    description: [
      "A person's calls, newest first, in the same shape as the call list; `status` filters them (omitted means all).",
      'The handle matches case-insensitively, with or without a leading `@`; `handle` in the response is spelled as the person does. An unknown handle is a 404; a person with no calls (of that status) gives an empty list.',
      'Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` for the next page. A walk never skips or repeats an item while new ones arrive: new items appear at the head of the list, before the walk\'s first page. Every page is read from the records themselves, so a call shows its new status the moment it settles.',
      'With `status`, a call that leaves the filter during a walk (an open call settles) is not on later pages, and one that joins it shows up where its `made_at` places it if the walk has not passed that point yet; no call is ever shown twice.',
    ].join('\n\n'),
    tags: ['People'],
    params: z.object({
      handle: pathParam('handle', { max: 51, description: 'The handle, with or without a leading @; case-insensitive' }),
      status: enumParam('status', CALL_STATUSES, 'open, won, lost or void; omitted means all. Case-insensitive.'),
      limit: intParam('limit', { min: 1, max: 100, default: 25, description: 'How many calls to return.' }),
      cursor: cursorParam(),
    }),
    response: userCallsResponseSchema,
    cache: 'list',
    errors: [404, 503],
    examples: [
      { summary: 'All calls', path: { handle: 'moonshot_max' } },
      { summary: 'Won calls', path: { handle: '@moonshot_max' }, query: { status: 'won', limit: '10' } },
    ],
  }),
  defineEndpoint('/api/v1/leaderboard', {
    specNumber: 9,
    operationId: 'getLeaderboard',
    summary: 'Leaderboard',
    description: [
      'Public records ranked on settled calls, ordered by `rank`.',
      '`sort`: `profit` (default) by total profit on 10; `right` by right_pct among people with 5 or more settled calls only; `xp` by XP; `week` by profit of calls settled in the last 7 days (the same as `sort=profit&window=week`); `clv` by mean closing-line value, highest first, and `brier` by Brier score, lowest first, both among people with 10 or more settled calls (docs/skill.md). Ties go to more settled calls, then handle (alphabetical).',
      '`window` (`day`, `week`, `month`: the last 24 hours, 7 days, 30 days; `all`, the default) counts only the calls settled in it; `category` or `league` (`league` overrides `category`) only the calls on markets of that field. On such a board a row\'s settled, won, right_pct, profit_on_10, xp, clv and brier are those calls\' (XP without combos); profit_7d and streak are the whole record. An unknown league gives an empty board.',
      '`around=<handle>`: the page of `limit` rows with that person in the middle (where the ranks allow); an empty page when they are not on the board, 404 when no one has the handle.',
      'Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` for the next page. The cursor keeps the ranking the walk started from: ranks change as calls settle, and a walk shows each person once, at the rank they had on its first page. The all-time boards of every field keep their rankings for 15 minutes after the next one replaced them (an older cursor is a 400 saying to start again) and hold the top 1,000; a board of a window or a field is ranked as of the moment of its first page, which its cursor carries. 503 while the records have not been built yet.',
    ].join('\n\n'),
    tags: ['People'],
    params: z.object({
      sort: enumParam('sort', LEADERBOARD_SORTS, 'profit (default), right (5 or more settled calls), xp, week (profit in the last 7 days), clv (10 or more settled) or brier (10 or more settled, lowest first). Case-insensitive.'),
      window: enumParam('window', LEADERBOARD_WINDOWS, 'day, week, month or all (default): calls settled in the last 24 hours, 7 days, 30 days, or ever. With sort=week only week. Case-insensitive.'),
      category: enumParam('category', CATEGORIES, 'Only calls on markets of this category. Case-insensitive.'),
      league: textParam('league', { max: 40, description: 'Only calls on markets of this league or coin key (e.g. `epl`, `nba`, `btc`); overrides `category`. Case-insensitive. An unknown key gives an empty board.' }),
      around: textParam('around', { max: 51, description: 'A handle (with or without @, case-insensitive): the page with that person in the middle. 404 when no one has it.' }),
      limit: intParam('limit', { min: 1, max: 100, default: 25, description: 'How many rows to return.' }),
      cursor: cursorParam(),
    }),
    response: leaderboardResponseSchema,
    cache: 'list',
    errors: [404, 503],
    examples: [
      { summary: 'By profit' },
      { summary: 'Most often right', query: { sort: 'right', limit: '10' } },
      { summary: 'Best calibrated this month', query: { sort: 'brier', window: 'month' } },
      { summary: 'Beat the closing line in football', query: { sort: 'clv', category: 'Football' } },
      { summary: 'Where one person stands', query: { sort: 'profit', around: 'moonshot_max', limit: '5' } },
    ],
  }),
  defineEndpoint('/api/v1/combos', {
    specNumber: 10,
    operationId: 'listCombos',
    summary: 'List combos',
    description: [
      'Public combos of one status, newest first: open (default), won, lost or void. `status` in the response is the filter applied.',
      'A combo is lost as soon as any leg is lost, void when every leg is void, won when every leg is settled with none lost and at least one won; otherwise open. `chance` and `wins_on_10` are fixed when the combo is made.',
      'Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` for the next page. A walk never skips or repeats an item while new ones arrive: new items appear at the head of the list, before the walk\'s first page. The first page is the live list (cached 15 s); pages after it are read from the records themselves.',
      'A combo that leaves the status during a walk (an open combo settles) is not on later pages, and one that joins it shows up where its `made_at` places it if the walk has not passed that point yet; no combo is ever shown twice. Each leg carries its event\'s slug (`event`). 503 while the records have not been built yet.',
    ].join('\n\n'),
    tags: ['Calls'],
    params: z.object({
      status: enumParam('status', CALL_STATUSES, 'open (default), won, lost or void. Case-insensitive.'),
      limit: intParam('limit', { min: 1, max: 50, default: 20, description: 'How many combos to return.' }),
      cursor: cursorParam(),
    }),
    response: comboListResponseSchema,
    cache: 'live',
    errors: [503],
    examples: [
      { summary: 'Open combos' },
      { summary: 'Won combos', query: { status: 'won', limit: '5' } },
    ],
  }),
  defineEndpoint('/api/v1/odds', {
    specNumber: 11,
    operationId: 'convertOdds',
    summary: 'Convert odds',
    description: [
      'Writes a chance in every odds format, with what 10 wins, the profit on 10 of a right call and the XP it would earn.',
      'The answer is exactly the `odds` an outcome of that chance shows anywhere in this API: one function writes both.',
      '`chance` must be a plain decimal that is 0, 1, or from 0.001 to 0.999 — the chances the service shows (a resolved market\'s outcomes are 1 and 0; the exchange quotes 0.001 to 0.999). `0.0005`, `0.9999`, `1.5`, `abc`, `1e-3`, `0x1`, `NaN`, `Infinity` and an empty or missing value are 400s: past the exchange\'s extreme ticks no format is faithful (a win would pay 0.00).',
      'At the extremes every format stays finite and honest: `percent` shows decimals where whole-number rounding would say 0% or 100% (`0.1%`, `99.9%`); `fractional` is the closest n/d with d ≤ 1000, exact for every 0.001 tick (`999/1`, `1/199`, `1/999`); `american` is a real line (`+99900`, `-99900`); `wins_on_10` and `profit_on_10` follow from the chance exactly.',
      'A certainty keeps the formats that have a value and no others: chance 1 is `100%`, `100¢`, decimal `1.00`, `wins_on_10` 10, `profit_on_10` 0, with `fractional` and `american` null; chance 0 is `0%`, `0¢`, with `decimal`, `fractional`, `american`, `wins_on_10` and `profit_on_10` null.',
    ].join('\n\n'),
    tags: ['Odds'],
    params: z.object({ chance: chanceParam('chance') }),
    response: oddsResponseSchema,
    cache: 'odds',
    errors: [],
    examples: [
      { summary: 'One in four', query: { chance: '0.25' } },
      { summary: 'A favourite', query: { chance: '0.8' } },
      { summary: 'A resolved winner', query: { chance: '1' } },
    ],
  }),
  defineEndpoint('/api/v1/exports', {
    specNumber: null,
    operationId: 'listExports',
    summary: 'The archive: files of closed days',
    description: [
      'Every closed UTC day is written once as files anyone may take (docs/archive.md): `candles` (every series at the finest interval held for the day), `trades` (once the service records trades), `markets` (the catalog at the end of the day), `calls` and `combos` (made or settled that day), each as Parquet (zstd) and as gzipped NDJSON. This lists them, newest day first, then dataset and format, with each file\'s rows, bytes and SHA-256.',
      'A day is written a few minutes after it ends, once its candles are rolled up; a file never changes once listed. Download it at `url` (`GET /api/v1/exports/{date}/{file}`).',
      '`start` and `end` are UTC dates, both inclusive; `start` after `end` is a 400. Paging: every page carries `next_cursor` (null on the last page); pass it as `cursor` with the same `dataset`, `start` and `end`.',
    ].join('\n\n'),
    tags: ['Archive'],
    params: z.object({
      dataset: enumParam('dataset', DATASET_NAMES_LIST, 'Only this dataset: candles, trades, markets, calls or combos. Case-insensitive.'),
      start: dateParam('start', 'The first day listed (UTC, YYYY-MM-DD, inclusive).'),
      end: dateParam('end', 'The last day listed (UTC, YYYY-MM-DD, inclusive).'),
      limit: intParam('limit', { min: 1, max: 1000, default: 100, description: 'How many files to return.' }),
      cursor: cursorParam(),
    }),
    response: exportListResponseSchema,
    cache: 'list',
    errors: [503],
    examples: [
      { summary: 'The newest files' },
      { summary: 'Candles of November 2026', query: { dataset: 'candles', start: '2026-11-01', end: '2026-11-30' } },
    ],
  }),
] as const;

type TableEntry = (typeof endpointTable)[number];

/** Every endpoint path (OpenAPI style). */
export type EndpointPath = TableEntry['path'];
/** The table row of one path. */
export type EndpointOf<P extends EndpointPath> = Extract<TableEntry, { path: P }>;
/** Validated parameters a handler receives. */
export type ParamsOf<P extends EndpointPath> = z.output<EndpointOf<P>['params']>;
/** The success body of one path. */
export type ResponseOf<P extends EndpointPath> = z.output<EndpointOf<P>['response']>;

/** The table, keyed by OpenAPI-style path. */
export const endpoints = Object.fromEntries(endpointTable.map((e) => [e.path, e])) as unknown as {
  readonly [P in EndpointPath]: EndpointOf<P>;
};

/** The table's rows in order. */
export const endpointList: readonly TableEntry[] = endpointTable;
