import type { Category, Team } from '@pm/shared/api';

/**
 * The catalog as the snapshot builder holds it in memory: what Postgres says about events, their
 * markets and outcomes, games and platform splits, before live chances are applied. The loader
 * (catalog.ts) produces it; the payload builders (payloads.ts) turn it into API resources.
 */

export interface CatalogOutcome {
  index: number;
  name: string;
  tokenId: string;
  /** The catalog's last price: the fallback while the order-book feed has no chance for the token. */
  catalogPrice: number | null;
  /** Set once the market is resolved or closed: the chance to show instead of the live one. */
  finalChance: number | null;
}

export interface CatalogMarket {
  id: string;
  eventId: string;
  position: number;
  question: string;
  label: string;
  kind: string | null;
  closesAt: Date | null;
  closed: boolean;
  oneDayPriceChange: number | null;
  /** Set once the market resolved: the winning outcome's index (null when voided) and when. */
  resolution: { outcome: number | null; at: Date } | null;
  /** Recorded once when the market closed or resolved: each outcome's displayed chance then (by index). Null while open. */
  closingChances?: Array<number | null> | null;
  /** While its settlement, in parts, is under way: the calls settled so far and those it began with. */
  settling?: { settled: number; calls: number } | null;
  /** In outcome index order. */
  outcomes: CatalogOutcome[];
}

export interface CatalogEvent {
  id: string;
  slug: string;
  title: string;
  category: Category;
  league: string | null;
  closesAt: Date | null;
  volume: number;
  volume24h: number;
  closed: boolean;
  teams: Team[];
  /** In catalog position order. */
  markets: CatalogMarket[];
}

/** The match state of an event (games row). */
export interface GameState {
  gameId: string;
  eventId: string;
  league: string;
  live: boolean;
  /** The feed said the match is over (a final frame can still carry live: true for a moment). */
  ended: boolean;
  score: string;
  clock: string;
  period: string;
  /** updated_at at full precision (text), to notice a change. */
  updatedAt: string;
}

/** Quotes by token id (the top of book each live chance came from). */
export type Quotes = ReadonlyMap<string, import('@pm/shared/domain').Quote>;

/** Live chances by token id (already parsed and range-checked). */
export type Chances = ReadonlyMap<string, number>;

/** First-outcome token → its chance at or before 24 h ago (absent: history does not reach back that far). */
export type DayAgo = ReadonlyMap<string, number>;

/** market_splits rows: market id → (outcome index → people). A market without rows has no callers. */
export type Splits = ReadonlyMap<string, ReadonlyMap<number, number>>;
