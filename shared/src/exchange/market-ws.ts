import { z } from 'zod';
import { idString, looseNumber, looseText, readEach, splitFrame, toStringArrayOrNull } from './lenient.js';
import type { MarketMessage as WireMarketMessage } from './wire.js';

/**
 * Market channel messages (docs/protocol.md §1), normalised. A frame is one JSON object or an array of
 * them; each element is dispatched on `event_type` on its own, so an unknown type or a malformed
 * element is skipped and counted without losing the rest of the frame. Prices and sizes stay
 * decimal strings (the order book parses them); timestamps become Unix ms numbers (null if absent).
 */

export type BookSide = 'BUY' | 'SELL';

export interface PriceLevel {
  price: string;
  size: string;
}

const decimalString = z
  .union([z.string(), z.number()])
  .transform((v) => String(v).trim())
  .refine((v) => v !== '' && Number.isFinite(Number(v)), { message: 'not a decimal' });

/*
 * Levels and level changes are the hot path (every price_change carries one per touched token), so
 * they are read by plain functions rather than zod objects: the same rules as `decimalString` and
 * `idString` (string or number, trimmed, non-empty, finite), about four times faster
 * (`npm run bench:ingest`). Each returns null for an element that does not qualify.
 */
function decimalOrNull(v: unknown): string | null {
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  const t = String(v).trim();
  return t !== '' && Number.isFinite(Number(t)) ? t : null;
}

function idOrNull(v: unknown): string | null {
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  const t = String(v).trim();
  return t === '' ? null : t;
}

/** BUY/BID = bid, SELL/ASK = ask, any casing. */
function sideOrNull(v: unknown): BookSide | null {
  if (typeof v !== 'string') return null;
  const t = v.trim().toUpperCase();
  return t === 'BUY' || t === 'BID' ? 'BUY' : t === 'SELL' || t === 'ASK' ? 'SELL' : null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function levelOrNull(el: unknown): PriceLevel | null {
  if (!isRecord(el)) return null;
  const price = decimalOrNull(el.price);
  const size = decimalOrNull(el.size);
  return price === null || size === null ? null : { price, size };
}

function levelChangeOrNull(el: unknown): { price: string; size: string; side: BookSide } | null {
  const level = levelOrNull(el);
  const side = isRecord(el) ? sideOrNull(el.side) : null;
  return level === null || side === null ? null : { ...level, side };
}

/** A top-of-book price the exchange states (`best_bid`/`best_ask`): `""`, absent or out of range is null. */
function topPriceOrNull(v: unknown): number | null {
  const t = decimalOrNull(v);
  if (t === null) return null;
  const n = Number(t);
  return n >= 0 && n <= 1 ? n : null;
}

function currentChangeOrNull(el: unknown): LevelChange | null {
  const change = levelChangeOrNull(el);
  if (change === null || !isRecord(el)) return null;
  const assetId = idOrNull(el.asset_id);
  if (assetId === null) return null;
  return { assetId, ...change, bestBid: topPriceOrNull(el.best_bid), bestAsk: topPriceOrNull(el.best_ask) };
}

export interface BookMessage {
  type: 'book';
  assetId: string;
  market: string | null;
  bids: PriceLevel[];
  asks: PriceLevel[];
  timestamp: number | null;
  lastTradePrice: string | null;
  tickSize: string | null;
}

export interface LevelChange {
  assetId: string;
  price: string;
  size: string;
  side: BookSide;
  /**
   * The exchange's own top of book for the asset after this change (docs/protocol.md §1: authoritative).
   * Null when the field is absent or `""` (and always in the older `changes[]` shape).
   */
  bestBid: number | null;
  bestAsk: number | null;
}

export interface PriceChangeMessage {
  type: 'price_change';
  market: string | null;
  timestamp: number | null;
  changes: LevelChange[];
}

/**
 * One match as the exchange printed it on a token (docs/protocol.md §1 `last_trade_price`): what the
 * trade tape records. `side` is the taker's side on that token.
 */
export interface TradePrint {
  /** Price and size as the decimal strings the exchange sent (trimmed). */
  price: string;
  size: string;
  side: BookSide;
  /** The exchange's time of the match, Unix ms. */
  timestamp: number;
  /** Lowercased; null when the frame has none (older frames). */
  transactionHash: string | null;
  feeRateBps: number | null;
}

export interface LastTradeMessage {
  type: 'last_trade_price';
  assetId: string;
  market: string | null;
  price: string;
  timestamp: number | null;
  /**
   * The print for the tape; null when the frame lacks a usable size (> 0), side, timestamp or a price
   * within 0–1. The price alone still sets the book's last trade.
   */
  trade: TradePrint | null;
}

export interface TickSizeChangeMessage {
  type: 'tick_size_change';
  assetId: string;
  market: string | null;
  newTickSize: string | null;
  timestamp: number | null;
}

export interface BestBidAskMessage {
  type: 'best_bid_ask';
  assetId: string;
  market: string | null;
  bestBid: number | null;
  bestAsk: number | null;
  timestamp: number | null;
}

export interface NewMarketMessage {
  type: 'new_market';
  marketId: string | null;
  conditionId: string | null;
  slug: string | null;
  assetIds: string[];
  eventId: string | null;
  eventSlug: string | null;
  timestamp: number | null;
}

export interface MarketResolvedMessage {
  type: 'market_resolved';
  marketId: string | null;
  conditionId: string | null;
  assetIds: string[];
  winningAssetId: string | null;
  winningOutcome: string | null;
  timestamp: number | null;
}

/** What each wire message becomes once read, by its `event_type`. */
interface ReadMessages {
  book: BookMessage;
  price_change: PriceChangeMessage;
  last_trade_price: LastTradeMessage;
  tick_size_change: TickSizeChangeMessage;
  best_bid_ask: BestBidAskMessage;
  new_market: NewMarketMessage;
  market_resolved: MarketResolvedMessage;
}

/** One read message per wire message type (wire.ts): a type the wire gains must be read here first. */
export type MarketMessage = ReadMessages[WireMarketMessage['event_type']];

export type MarketMessageType = MarketMessage['type'];

const timestamp = looseNumber;

const bookSchema = z
  .object({
    asset_id: idString,
    market: looseText,
    bids: z.unknown().optional(),
    asks: z.unknown().optional(),
    // Older captures name the sides buys/sells.
    buys: z.unknown().optional(),
    sells: z.unknown().optional(),
    timestamp,
    last_trade_price: looseText,
    tick_size: looseText,
  })
  // A book replaces the local one wholesale: without both sides as arrays it would wipe a good
  // book with an empty one, so it is malformed rather than empty.
  .refine((m) => Array.isArray(m.bids ?? m.buys) && Array.isArray(m.asks ?? m.sells), { message: 'a book needs bids and asks arrays' })
  .transform((m): BookMessage => ({
    type: 'book',
    assetId: m.asset_id,
    market: m.market,
    bids: readEach(m.bids ?? m.buys, levelOrNull).items,
    asks: readEach(m.asks ?? m.sells, levelOrNull).items,
    timestamp: m.timestamp,
    lastTradePrice: m.last_trade_price === '' ? null : m.last_trade_price,
    tickSize: m.tick_size,
  }));

/** Both shapes: current `price_changes[]` (asset per change) and older `{asset_id, changes[]}`. */
const priceChangeSchema = z
  .object({
    market: looseText,
    timestamp,
    price_changes: z.array(z.unknown()).optional(),
    asset_id: idString.optional(),
    changes: z.array(z.unknown()).optional(),
  })
  .transform((m, ctx): PriceChangeMessage & { skipped: number } => {
    if (m.price_changes) {
      const { items, skipped } = readEach(m.price_changes, currentChangeOrNull);
      return { type: 'price_change', market: m.market, timestamp: m.timestamp, changes: items, skipped };
    }
    if (m.asset_id !== undefined && m.changes) {
      const assetId = m.asset_id;
      const { items, skipped } = readEach(m.changes, levelChangeOrNull);
      return {
        type: 'price_change',
        market: m.market,
        timestamp: m.timestamp,
        changes: items.map((c) => ({ assetId, price: c.price, size: c.size, side: c.side, bestBid: null, bestAsk: null })),
        skipped,
      };
    }
    ctx.addIssue({ code: 'custom', message: 'price_change without price_changes or asset_id+changes' });
    return z.NEVER;
  });

/** What every per-asset message carries, and its parsed form. */
const assetFields = { asset_id: idString, market: looseText, timestamp };
const assetOf = (m: { asset_id: string; market: string | null; timestamp: number | null }) => ({ assetId: m.asset_id, market: m.market, timestamp: m.timestamp });

const lastTradeSchema = z
  .object({ ...assetFields, price: decimalString, size: z.unknown().optional(), side: z.unknown().optional(), transaction_hash: looseText, fee_rate_bps: looseNumber })
  .transform((m): LastTradeMessage => ({ type: 'last_trade_price', ...assetOf(m), price: m.price, trade: tradeOrNull(m) }));

function tradeOrNull(m: { price: string; size?: unknown; side?: unknown; timestamp: number | null; transaction_hash: string | null; fee_rate_bps: number | null }): TradePrint | null {
  const size = decimalOrNull(m.size);
  const side = sideOrNull(m.side);
  const price = Number(m.price);
  if (size === null || !(Number(size) > 0) || side === null || m.timestamp === null || !(m.timestamp >= 0) || !(price >= 0 && price <= 1)) return null;
  const hash = m.transaction_hash?.trim().toLowerCase() ?? '';
  return { price: m.price, size, side, timestamp: m.timestamp, transactionHash: hash === '' ? null : hash, feeRateBps: m.fee_rate_bps };
}

const tickSizeSchema = z
  .object({ ...assetFields, new_tick_size: looseText })
  .transform((m): TickSizeChangeMessage => ({ type: 'tick_size_change', ...assetOf(m), newTickSize: m.new_tick_size }));

const bestBidAskSchema = z
  .object({ ...assetFields, best_bid: looseNumber, best_ask: looseNumber })
  .transform((m): BestBidAskMessage => ({ type: 'best_bid_ask', ...assetOf(m), bestBid: m.best_bid, bestAsk: m.best_ask }));

const eventRefSchema = z.object({ id: looseText, slug: looseText });

const newMarketSchema = z
  .object({
    id: looseText,
    market: looseText,
    slug: looseText,
    assets_ids: z.unknown().optional(),
    event_message: z.unknown().optional(),
    timestamp,
  })
  .transform((m): NewMarketMessage => {
    const ev = eventRefSchema.safeParse(m.event_message);
    return {
      type: 'new_market',
      marketId: m.id,
      conditionId: m.market,
      slug: m.slug,
      assetIds: toStringArrayOrNull(m.assets_ids) ?? [],
      eventId: ev.success ? ev.data.id : null,
      eventSlug: ev.success ? ev.data.slug : null,
      timestamp: m.timestamp,
    };
  });

const marketResolvedSchema = z
  .object({
    id: looseText,
    market: looseText,
    assets_ids: z.unknown().optional(),
    winning_asset_id: looseText,
    winning_outcome: looseText,
    timestamp,
  })
  .transform((m): MarketResolvedMessage => ({
    type: 'market_resolved',
    marketId: m.id,
    conditionId: m.market,
    assetIds: toStringArrayOrNull(m.assets_ids) ?? [],
    winningAssetId: m.winning_asset_id === '' ? null : m.winning_asset_id,
    winningOutcome: m.winning_outcome,
    timestamp: m.timestamp,
  }));

const schemas = {
  book: bookSchema,
  price_change: priceChangeSchema,
  last_trade_price: lastTradeSchema,
  tick_size_change: tickSizeSchema,
  best_bid_ask: bestBidAskSchema,
  new_market: newMarketSchema,
  market_resolved: marketResolvedSchema,
} as const;

function isKnownType(t: string): t is keyof typeof schemas {
  return Object.hasOwn(schemas, t);
}

export type MarketFrame =
  /** A non-JSON text frame (`PONG`, `NO NEW ASSETS`, …): nothing to apply. */
  | { kind: 'text'; text: string }
  | {
      kind: 'messages';
      messages: MarketMessage[];
      /** Elements (or price changes inside an element) that could not be parsed. */
      malformed: number;
      /** Elements with an `event_type` we do not handle, by type. */
      unknown: Record<string, number>;
    };

/**
 * Parse one text frame of the market channel. Never throws: non-JSON text is reported as `text`,
 * and JSON that is neither an object nor an array of objects counts as one malformed element.
 */
export function parseMarketFrame(raw: string): MarketFrame {
  const frame = splitFrame(raw);
  if (frame.kind === 'text') return frame;
  const { elements } = frame;
  const messages: MarketMessage[] = [];
  const unknown: Record<string, number> = {};
  let malformed = 0;
  for (const el of elements) {
    if (typeof el !== 'object' || el === null || Array.isArray(el)) {
      malformed++;
      continue;
    }
    const type = (el as { event_type?: unknown }).event_type;
    if (typeof type !== 'string') {
      malformed++;
      continue;
    }
    if (!isKnownType(type)) {
      unknown[type] = (unknown[type] ?? 0) + 1;
      continue;
    }
    const r = schemas[type].safeParse(el);
    if (!r.success) {
      malformed++;
      continue;
    }
    if (r.data.type === 'price_change') {
      const { skipped, ...msg } = r.data as PriceChangeMessage & { skipped: number };
      malformed += skipped;
      messages.push(msg);
    } else {
      messages.push(r.data);
    }
  }
  return { kind: 'messages', messages, malformed, unknown };
}

/**
 * Parse the body of `GET /book?token_id=` (docs/protocol.md §4: the ws `book` shape without
 * `event_type`). Returns null when it is not a book of `tokenId`, so a wrong or garbled answer never
 * replaces a local book.
 */
export function parseRestBook(body: unknown, tokenId: string): BookMessage | null {
  const r = bookSchema.safeParse(body);
  return r.success && r.data.assetId === tokenId ? r.data : null;
}
