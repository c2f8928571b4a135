import type { EventCard, Event, LeagueEntry, Category, HistoryPoint, LiveMatch } from './api/resources.js';

/**
 * What the worker's snapshot builder writes to Redis and the API reads. Each snapshot is a Redis
 * hash (see RedisKeys.snapshot) with `body` = JSON.stringify of one of these, `etag` = a strong,
 * quoted ETag that changes exactly when body changes, and `built_at` = Unix ms.
 * The API adds the request-time parts itself (`ok`, `live`, `count`, limit slicing, search).
 */

/** `markets:trending`, `markets:category:<C>`, `markets:league:<key>`: open events, busiest first (24 h volume), at most 60. */
export interface MarketListSnapshot {
  /** The ranking version the list was cut from (`markets:ranking:<version>`), which its walk keeps; absent before rankings existed. */
  ranking?: number;
  categories: Category[];
  leagues: LeagueEntry[];
  events: EventCard[];
}

/** `markets:search`: every open event, busiest first, with the lower-cased text `q` matches against (title and ALL market questions). */
export interface MarketSearchSnapshot {
  /** As MarketListSnapshot's. */
  ranking?: number;
  categories: Category[];
  leagues: LeagueEntry[];
  entries: Array<{ text: string; category: Category; league: string | null; card: EventCard }>;
}

/**
 * `markets:ranking:<version>`: every listed open event, busiest first, as `[slug, category, league]`,
 * at one moment. A `/markets` walk pins the version its first page was cut from and reads its later
 * pages in this order, so it shows each event once however volumes move meanwhile.
 */
export interface RankingSnapshot {
  version: number;
  events: Array<[string, Category, string | null]>;
}

/** How long a ranking stays walkable after the next one replaced it (seconds). */
export const RANKING_KEPT_SECONDS = 20 * 60;

/** `event:<slug>`: one event with all its markets. */
export interface EventSnapshot {
  event: Event;
  /**
   * What a live chance moves on this page, for the API's live-price overlay (docs/design.md "The read
   * path"; never part of a response): by market id, every market whose chances follow the order book
   * (a settled one shows final chances and is absent), with `day_ago` its first outcome's chance 24 h
   * ago when `change_24h` follows the live chance, null when it is the catalog's figure.
   */
  overlay?: Record<string, { day_ago: number | null }>;
}

/** The most events a list snapshot holds: the list endpoint's maximum `limit`. */
export const LIST_SNAPSHOT_SIZE = 60;

/** The `range` values of the history endpoint, shortest first. */
export const HISTORY_RANGES = ['1d', '1w', '1m', 'max'] as const;
export type HistoryRange = (typeof HISTORY_RANGES)[number];
/** The history endpoint's default `range`. */
export const DEFAULT_HISTORY_RANGE: HistoryRange = '1w';

/**
 * How far back each range reaches (null: everything there is) and the bucket its points are
 * downsampled into (docs/design.md "The flow" 3): a few hundred points per range.
 */
export const HISTORY_RANGE_WINDOWS: Readonly<Record<HistoryRange, { spanSeconds: number | null; bucketSeconds: number }>> = {
  '1d': { spanSeconds: 86_400, bucketSeconds: 300 },
  '1w': { spanSeconds: 7 * 86_400, bucketSeconds: 1_800 },
  '1m': { spanSeconds: 30 * 86_400, bucketSeconds: 10_800 },
  max: { spanSeconds: null, bucketSeconds: 86_400 },
};

/**
 * `history:<marketId>:<range>`: the market's first-outcome chance, downsampled (the last point of
 * each bucket, at that point's own time), ascending `t`. Question and outcome name come from the
 * event snapshot, which the API reads anyway to check that the market belongs to the event.
 */
export interface HistorySnapshot {
  market_id: string;
  range: HistoryRange;
  points: HistoryPoint[];
}

/** Levels of a book side as the API shows them. */
export interface BookLevel {
  price: number;
  size: number;
}

/**
 * `book:<marketId>`: the market's order book per outcome (outcome index order), up to BOOK_DEPTH
 * levels a side (bids high to low, asks low to high), as of `as_of` (ISO: the last change applied).
 */
export interface BookSnapshot {
  market_id: string;
  as_of: string;
  outcomes: Array<{ index: number; bids: BookLevel[]; asks: BookLevel[] }>;
}

/** Levels per side a book snapshot holds: the book endpoint's maximum `depth`. */
export const BOOK_DEPTH = 50;

/** `live`: every match in play (game live and not ended), busiest first. */
export interface LiveSnapshot {
  matches: LiveMatch[];
}

/**
 * Record snapshots (latest calls, a market's calls, leaderboards, combos), written by the worker's
 * record snapshot builder; CallSnapshot and UserSnapshot are the bodies the API reads from Postgres. Their zod schemas live beside the resources in shared/src/api/records-resources.ts.
 */
export type {
  CallListSnapshot,
  MarketCallsSnapshot,
  CallSnapshot,
  UserSnapshot,
  LeaderboardSnapshot,
  ComboListSnapshot,
} from './api/records-resources.js';
