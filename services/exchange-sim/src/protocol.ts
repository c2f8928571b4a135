/**
 * Wire shapes of the exchange's public interfaces (docs/protocol.md), as the simulator emits them, and the
 * `ExchangeSource` seam between a data source (synthetic generator or recorded scenario) and the
 * servers that speak HTTP and websocket. The market channel's messages are shared with their reader
 * (shared/src/exchange/wire.ts).
 */

export interface GammaTag {
  id: string;
  label: string;
  slug: string;
}

export interface GammaTeam {
  name: string;
  abbreviation: string;
  ordering: 'home' | 'away';
}

/** A catalog market exactly as Gamma returns it; `outcomes`, `outcomePrices`, `clobTokenIds` are JSON-encoded strings. */
export interface GammaMarket {
  id: string;
  conditionId: string;
  question: string;
  slug: string;
  groupItemTitle: string;
  description: string;
  startDate: string;
  endDate: string;
  outcomes: string;
  outcomePrices: string;
  clobTokenIds: string;
  active: boolean;
  closed: boolean;
  acceptingOrders: boolean;
  enableOrderBook: boolean;
  volume: string;
  volumeNum: number;
  volume24hr: number;
  liquidity: string;
  liquidityNum: number;
  orderPriceMinTickSize: number;
  bestBid?: number;
  bestAsk?: number;
  spread?: number;
  lastTradePrice?: number;
  oneDayPriceChange?: number;
  sportsMarketType: string | null;
  line: number | null;
  umaResolutionStatus: string | null;
  negRisk: boolean;
  closedTime?: string;
  gameStartTime?: string;
}

export interface GammaEvent {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  description: string;
  startDate: string;
  creationDate: string;
  endDate: string;
  active: boolean;
  closed: boolean;
  archived: boolean;
  volume: number;
  volume24hr: number;
  liquidity: number;
  negRisk: boolean;
  tags: GammaTag[] | null;
  markets: GammaMarket[];
  closedTime?: string;
  gameId?: number;
  startTime?: string;
  teams?: GammaTeam[];
  score?: string;
  period?: string;
  elapsed?: string;
  live?: boolean;
  ended?: boolean;
}

/**
 * The catalog view the query layer needs. Synthetic events are `GammaEvent`s; recorded catalogs are
 * whatever the recorder saw, so only these fields are relied on (all optional but `id`).
 */
export interface CatalogEvent {
  id: string | number;
  slug?: string | null;
  active?: boolean | null;
  closed?: boolean | null;
  live?: boolean | null;
  gameId?: number | string | null;
  volume?: number | string | null;
  volume24hr?: number | string | null;
  liquidity?: number | string | null;
  startDate?: string | null;
  endDate?: string | null;
  tags?: ReadonlyArray<{ id: string | number; slug?: string; label?: string }> | null;
}

/** A catalog event for the list queries: the fields they filter and sort on, and the event itself on demand. */
export interface ListedEvent {
  fields: CatalogEvent;
  render(): CatalogEvent;
}

export type {
  BestBidAskMessage,
  BookLevel,
  BookMessage,
  LastTradeMessage,
  MarketMessage,
  MarketResolvedMessage,
  NewMarketMessage,
  PriceChangeEntry,
  PriceChangeMessage,
  TickSizeChangeMessage,
} from '@pm/shared/exchange/wire';
import type { BookMessage, MarketMessage } from '@pm/shared/exchange/wire';

/** A sports-channel frame (camelCase, no event_type). */
export interface SportsFrame {
  gameId: number;
  leagueAbbreviation: string;
  homeTeam: string;
  awayTeam: string;
  status: string;
  score: string;
  period: string;
  elapsed: string;
  live: boolean;
  ended: boolean;
  finishedTimestamp?: string;
}

export interface HistoryPoint {
  t: number;
  p: number;
}

/** A resolved range for /prices-history, in Unix seconds; `fidelity` in minutes. */
export interface HistoryQuery {
  interval?: string;
  startTs?: number;
  endTs?: number;
  fidelity?: number;
}

export interface LevelInput {
  price: number;
  size: number;
}

export type ResolveResult =
  | { ok: true; market: unknown }
  | { ok: false; status: 404 | 409; error: string };

/** Where the servers send what a source produces. */
export interface Outlets {
  /** Synthetic messages: routed per socket by their asset ids, batched by the market ws. */
  market(messages: readonly MarketMessage[]): void;
  /** A recorded frame sent as is; `assetId` non-null filters it to that asset's subscribers. */
  marketRaw(frame: unknown, assetId: string | null): void;
  sports(frame: unknown): void;
}

/** What the HTTP and websocket servers need from a data source. */
export interface ExchangeSource {
  readonly mode: 'synthetic' | 'replay';
  start(outlets: Outlets): void;
  stop(): void;
  /**
   * The catalog: each event's list fields (what the list queries filter and sort on), and its full
   * rendering, made only for the events an answer shows (a 5,000-event catalog paged 500 at a time
   * rendered every event for every page, and for every lookup by id: most of the simulator's CPU
   * under a catalog sync).
   */
  listing(): ListedEvent[];
  sports(): unknown[];
  tags(): unknown[];
  /** undefined: no such token. */
  history(tokenId: string, query: HistoryQuery): HistoryPoint[] | undefined;
  /** undefined: no such token; a known token without a book gets an empty book. */
  book(tokenId: string): BookMessage | undefined;
  /** Replace a token's book; returns every book that changed (the requested one first), undefined if unknown. */
  setBook(tokenId: string, bids: LevelInput[], asks: LevelInput[]): BookMessage[] | undefined;
  resolve(marketId: string, winningOutcomeIndex: number | null, announce: boolean): ResolveResult;
  /** Current state of every game in play, re-sent periodically on the sports channel. */
  activeGames(): SportsFrame[];
  pause(): void;
  resume(): void;
  /** Advance the synthetic clock by n ticks at once (replay: dispatch nothing). */
  step(ticks: number): void;
  readonly paused: boolean;
  readonly tick: number;
  /** Replay only: start the recorded feed again from its beginning. */
  restart?(): void;
  /**
   * Events the list queries (`GET /events…`, `id=` and `slug=` included) no longer show, as the real
   * catalog drops some events; `GET /events/:id` still answers them.
   */
  unlisted(): ReadonlySet<string>;
  /** Drop an event from the list queries now; false when there is no such event. */
  vanish(eventId: string): boolean;
  /**
   * A quiet spell: no market data for `ms` (synthetic: the books stop moving; replay: the feed
   * waits), while sockets stay open and answer PONG. Returns when it ends (wall-clock ms).
   */
  quiet(ms: number): number;
}
