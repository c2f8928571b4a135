import { z } from 'zod';
import { count } from './fields.js';
import { quoteShape, tradeFields } from './resources.js';

/**
 * `GET /api/v1/stream` (docs/design.md "Streams"): the push channel, as Server-Sent Events. Its messages'
 * `data` schemas, its topics and its parameters are defined here, once: the writers (shared/src/stream)
 * build messages with these types, the API validates the parameters with these rules, and the OpenAPI
 * document (openapi.ts) describes the endpoint from them. It is not a row of the JSON endpoint table
 * because it has no JSON body, no ETag and no handler returning data: it is a long-lived response.
 */

export const STREAM_PATH = '/api/v1/stream';

/** The message types a client can subscribe to (`?topics=`), in the order the docs list them. */
export const STREAM_TOPICS = ['price', 'score', 'settlement', 'call', 'trade'] as const;
export type StreamTopic = (typeof STREAM_TOPICS)[number];

const timestamp = z.string().meta({ description: 'ISO 8601 UTC timestamp', format: 'date-time' });
const chance = z.number().min(0).max(1).meta({ description: 'Chance, 0 to 1' });
const eventSlug = z.string().meta({ description: 'Slug of the event holding the market' });
/** The chance of an outcome at a moment: what a price or a call message is about. */
const outcomeChance = (chanceIs: string, atIs: string) => ({
  event: eventSlug,
  market_id: z.string(),
  outcome_index: count,
  outcome: z.string().meta({ description: 'Outcome name' }),
  chance: chance.meta({ description: chanceIs }),
  at: timestamp.meta({ description: atIs }),
});

export const priceMessageSchema = z
  .object({
    ...outcomeChance('The displayed chance now (the value `/markets/{slug}` shows)', 'When the ingestor saw the change'),
    ...quoteShape,
  })
  .meta({ id: 'StreamPrice', description: '`event: price` — an outcome\'s displayed chance or its quotes moved (the quotes are the top of book the chance was computed from).' });
export type PriceMessage = z.infer<typeof priceMessageSchema>;

export const scoreMessageSchema = z
  .object({
    event: z.string().nullable().meta({ description: 'Slug of the event of this match; null when no event is known for it yet' }),
    game_id: z.string(),
    league: z.string(),
    home_team: z.string(),
    away_team: z.string(),
    score: z.string().meta({ description: 'home-away' }),
    period: z.string().meta({ description: 'As the feed sends it: 1H, HT, Q4 …' }),
    clock: z.string().meta({ description: 'As the feed sends it: "74", "5:18"' }),
    live: z.boolean(),
    ended: z.boolean(),
    at: timestamp,
  })
  .meta({ id: 'StreamScore', description: '`event: score` — a match\'s score, period or state changed (a clock tick alone sends nothing).' });
export type ScoreMessage = z.infer<typeof scoreMessageSchema>;

export const settlementMessageSchema = z
  .object({
    event: eventSlug,
    market_id: z.string(),
    resolved_outcome: count.nullable().meta({ description: 'Index of the winning outcome; null when the market was voided' }),
    voided: z.boolean(),
    closing_chances: z
      .array(z.number().min(0).max(1).nullable())
      .nullable()
      .meta({ description: "The market's closing chance of each outcome, in outcome order (null where none was known); null when none was recorded" }),
    calls: z
      .object({ won: count, lost: count, void: count })
      .meta({ description: 'Calls settled by this settlement, by result' }),
    combo_legs: count.meta({ description: 'Combo legs settled' }),
    combos: count.meta({ description: 'Combos whose result this settlement decided' }),
    at: timestamp,
  })
  .meta({ id: 'StreamSettlement', description: '`event: settlement` — a resolved market\'s calls and combo legs were settled.' });
export type SettlementMessage = z.infer<typeof settlementMessageSchema>;

export const callMessageSchema = z
  .object({
    id: z.string().meta({ description: 'The call id (`/api/v1/calls/{id}`)' }),
    handle: z.string(),
    ...outcomeChance('The chance the call was made at', 'When the call was made'),
  })
  .meta({ id: 'StreamCall', description: '`event: call` — a call was recorded.' });
export type CallMessage = z.infer<typeof callMessageSchema>;

export const tradeMessageSchema = z
  .object({ ...tradeFields, event: eventSlug })
  .meta({ id: 'StreamTrade', description: '`event: trade` — the exchange printed a match on an outcome (one message per outcome token it printed on).' });
export type TradeMessage = z.infer<typeof tradeMessageSchema>;

export const resetMessageSchema = z
  .object({
    reason: z.enum(['unknown_id']).meta({ description: '`unknown_id`: the resume id is older than the retention window, or not from this stream' }),
    message: z.string(),
    retention_seconds: count,
  })
  .meta({
    id: 'StreamReset',
    description:
      '`event: reset` — the id given to resume from (`Last-Event-ID` or `last_event_id`) can no longer be resumed from without a gap: events were missed. Re-read what you hold (e.g. `/markets/{slug}`); live events follow.',
  });
export type ResetMessage = z.infer<typeof resetMessageSchema>;

/** The `data` schema of each message type. */
export const streamMessageSchemas = {
  price: priceMessageSchema,
  score: scoreMessageSchema,
  settlement: settlementMessageSchema,
  call: callMessageSchema,
  trade: tradeMessageSchema,
} as const satisfies Record<StreamTopic, z.ZodObject>;

/** One message of the stream: its topic (the SSE `event:`), the event slug it concerns (for `?events=`), its data. */
export type StreamMessage =
  | { topic: 'price'; data: PriceMessage }
  | { topic: 'score'; data: ScoreMessage }
  | { topic: 'settlement'; data: SettlementMessage }
  | { topic: 'call'; data: CallMessage }
  | { topic: 'trade'; data: TradeMessage };

/** A Redis Stream entry id, `<ms>-<seq>`: what `id:` carries and `Last-Event-ID` gives back. */
export const STREAM_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;

/** Most event slugs one stream may filter on. */
export const STREAM_MAX_EVENTS = 100;
/** Most market ids one stream may filter on. */
export const STREAM_MAX_MARKETS = 100;

/** The stream's validated parameters. */
export interface StreamParams {
  /** Topics to send; all of them when `?topics=` is absent or empty. */
  topics: ReadonlySet<StreamTopic>;
  /** Event slugs to send; undefined = every event. */
  events: ReadonlySet<string> | undefined;
  /**
   * Market ids to send; undefined = every market. Given with `events`, a message passes when it
   * matches either; a message without a market (score) passes only by its event.
   */
  markets: ReadonlySet<string> | undefined;
  /** Resume after this id (the `Last-Event-ID` header wins over `?last_event_id=`); undefined = live only. */
  lastEventId: string | undefined;
}

export type StreamParamsResult = { ok: true; params: StreamParams } | { ok: false; message: string };

/**
 * The rules of the stream's parameters; a bad one gives a message naming it and its rule (a 400).
 * `header` is the `Last-Event-ID` request header: EventSource sends it on every reconnect with the
 * last id it received, while the URL still carries the first `?last_event_id=`, so the header wins.
 */
export function parseStreamParams(query: { topics?: string; events?: string; markets?: string; last_event_id?: string }, header: string | undefined): StreamParamsResult {
  const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const topicNames = list(query.topics);
  const unknown = topicNames.filter((t) => !(STREAM_TOPICS as readonly string[]).includes(t.toLowerCase()));
  if (unknown.length > 0) {
    return { ok: false, message: `topics: unknown topic ${unknown.map((t) => JSON.stringify(t)).join(', ')}; topics must be a comma list of ${STREAM_TOPICS.join(', ')}` };
  }
  const topics = new Set<StreamTopic>(topicNames.length === 0 ? STREAM_TOPICS : topicNames.map((t) => t.toLowerCase() as StreamTopic));
  const slugs = list(query.events);
  if (slugs.length > STREAM_MAX_EVENTS || slugs.some((s) => s.length > 200)) {
    return { ok: false, message: `events must be a comma list of at most ${STREAM_MAX_EVENTS} event slugs of at most 200 characters each` };
  }
  const marketIds = list(query.markets);
  if (marketIds.length > STREAM_MAX_MARKETS || marketIds.some((s) => s.length > 100)) {
    return { ok: false, message: `markets must be a comma list of at most ${STREAM_MAX_MARKETS} market ids of at most 100 characters each` };
  }
  const given = header !== undefined && header.trim() !== '' ? { name: 'Last-Event-ID', value: header.trim() } : query.last_event_id ? { name: 'last_event_id', value: query.last_event_id } : undefined;
  if (given && !STREAM_ID.test(given.value)) {
    return { ok: false, message: `${given.name} must be an id this stream sent, like 1732492800000-0 (milliseconds-sequence)` };
  }
  return { ok: true, params: { topics, events: slugs.length > 0 ? new Set(slugs) : undefined, markets: marketIds.length > 0 ? new Set(marketIds) : undefined, lastEventId: given?.value } };
}

/** Parameters as the OpenAPI document lists them. */
export const streamQueryParams = [
  {
    name: 'topics',
    description: `Comma list of message types to receive: ${STREAM_TOPICS.join(', ')}; absent or empty means all. An unknown topic is a 400 naming it. Case-insensitive.`,
    example: 'price,call',
  },
  {
    name: 'events',
    description: `Comma list of event slugs (at most ${STREAM_MAX_EVENTS}): only messages about those events. Absent means every event. A \`score\` message of a match no event is known for yet has no slug and is sent only without this filter.`,
    example: 'epl-ars-che-2025-11-22',
  },
  {
    name: 'markets',
    description: `Comma list of market ids (at most ${STREAM_MAX_MARKETS}): only messages about those markets. Absent means every market. Given with \`events\`, a message passes when it matches either list; a \`score\` message has no market and passes only by its event.`,
    example: '540816',
  },
  {
    name: 'last_event_id',
    description:
      'Resume after this id, as the `Last-Event-ID` header does (the header wins when both are given; EventSource sends it by itself on reconnect). Every message after it that is still retained is sent first, then live ones, with no gap. An id older than the retention window (at least 10 minutes) or not from this stream gets `event: reset`, then live messages. A malformed id is a 400.',
    example: '1732492800000-0',
  },
] as const;
