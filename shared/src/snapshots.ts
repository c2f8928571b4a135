import type { EventCard, Event, LeagueEntry, Category } from './api/resources.js';

/**
 * What the worker's snapshot builder writes to Redis and the API reads. Each snapshot is a Redis
 * hash (see RedisKeys.snapshot) with `body` = JSON.stringify of one of these, `etag` = a strong,
 * quoted ETag that changes exactly when body changes, and `built_at` = Unix ms.
 * The API adds the request-time parts itself (`ok`, `live`, `count`, limit slicing, search).
 */

/** `markets:trending`, `markets:category:<C>`, `markets:league:<key>`: open events, busiest first (24 h volume), at most 60. */
export interface MarketListSnapshot {
  categories: Category[];
  leagues: LeagueEntry[];
  events: EventCard[];
}

/** `markets:search`: every open event, busiest first, with the lower-cased text `q` matches against (title and ALL market questions). */
export interface MarketSearchSnapshot {
  categories: Category[];
  leagues: LeagueEntry[];
  entries: Array<{ text: string; category: Category; league: string | null; card: EventCard }>;
}

/** `event:<slug>`: one event with all its markets. */
export interface EventSnapshot {
  event: Event;
}

/** The most events a list snapshot holds: the list endpoint's maximum `limit`. */
export const LIST_SNAPSHOT_SIZE = 60;
