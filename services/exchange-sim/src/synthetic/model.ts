import type { GammaMarket, GammaTag } from '../protocol.js';
import type { BinaryBook } from './book.js';
import type { CoinKey, GenericFamily } from './catalog-data.js';
import type { GameState } from './games.js';

/** The synthetic exchange's own state, rendered to Gamma/CLOB shapes on demand (render.ts). */
export type Family = 'soccer' | 'nba' | 'nfl' | 'crypto' | GenericFamily;

/**
 * What decides a market's fair chance and its resolution: a match outcome, a coin's spot price, or
 * (generic) a random walk resolved by drawing at the end date.
 */
export type MarketRole =
  | { kind: 'home' | 'draw' | 'away' | 'over' | 'btts' | 'spread' }
  | { kind: 'updown' }
  | { kind: 'above'; strike: number }
  | { kind: 'generic' };

/** A market as the simulator keeps it: the catalog's own fields as Gamma serves them, plus its state. */
export interface SimMarket
  extends Pick<GammaMarket, 'id' | 'conditionId' | 'question' | 'slug' | 'groupItemTitle' | 'description' | 'sportsMarketType' | 'line'> {
  outcomes: [string, string];
  tokens: [string, string];
  role: MarketRole;
  /** Fair chance of the first outcome; the book drifts toward it. */
  fair: number;
  /** Fair chance at creation: the anchor of the synthetic price history. */
  initialFair: number;
  createdAt: number;
  book: BinaryBook;
  /** Target spread in milli; a few markets run wider than 0.10 to exercise the last-trade rule. */
  spreadTarget: number;
  /** Last trade price of the first outcome, milli. */
  lastTrade: number | null;
  volume: number;
  volume24hr: number;
  closed: boolean;
  finalPrices: [string, string] | null;
  resolvedAt: number | null;
}

export interface UpDownWindow {
  coin: CoinKey;
  openPrice: number;
  start: number;
  end: number;
}

export interface SimEvent {
  id: string;
  slug: string;
  title: string;
  description: string;
  family: Family;
  /** null on a few events, as the real catalog sometimes has. */
  tags: GammaTag[] | null;
  createdAt: number;
  startDate: number;
  endDate: number;
  /** Render this event's times as "2026-04-05 15:10:00+00" rather than ISO. */
  nonIsoDates: boolean;
  /** Mutually exclusive markets (one wins). */
  exclusive: boolean;
  markets: SimMarket[];
  closed: boolean;
  closedAt: number | null;
  game: GameState | null;
  upDown: UpDownWindow | null;
  coin: CoinKey | null;
  /** Which generator slot replaces this event when it closes. */
  slot: string;
  liquidityBase: number;
}
