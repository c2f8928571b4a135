import type { Redis } from 'ioredis';

/**
 * Every Redis key the services use, in one table. Each key carries the configured prefix so that
 * several stacks, and every test file, can share one Redis without seeing each other's data.
 * Everything in Redis can be rebuilt from Postgres (docs/design.md "Storage").
 *
 * Redis Cluster: a command, MULTI, pipeline or Lua script may only touch keys of one hash slot. The
 * keys below are written together (a snapshot with its built-at stamp and announcement, the dirty
 * sets with the catalog version, chances with their timestamps, the stream), so they share the hash
 * tag `{<prefix>}` (`redisKeyBase`): on a cluster they live on one shard. The rate-limit counters do
 * not: each is one key touched alone, by far the most frequent write (one per API request), so they
 * spread over every shard (`<prefix>:rl:<client>`, no tag). BullMQ's keys have their own tag
 * (queues.ts). A key added elsewhere is built from `redisKeyBase` too.
 */
/** A connection and the stack's prefix: what every reader and writer of the keys below holds. */
export interface PrefixedRedis {
  redis: Redis;
  prefix: string;
}

export interface RedisKeys {
  /** hash: token id → displayed chance as a decimal string ("0.535"). Written only when it moved. */
  chances: string;
  /** hash: token id → Unix ms when that chance was last set or re-confirmed by the feed. */
  chanceAt: string;
  /** hash: token id → the quotes its chance was computed from, `bid|ask|last` (domain/quote.ts). Written with the chance, when either moved. */
  quotes: string;
  /**
   * hash: feed health, rewritten every second by the ingestor. Fields: market_connected ("1"/"0"),
   * market_last_at (ms of the last data frame or PONG), sports_connected, sports_last_at.
   */
  feed: string;
  /** set: event ids whose snapshots are stale (SADD by the ingestor, SPOP by the snapshot builder). */
  dirtyEvents: string;
  /** set: market ids whose price history gained points (SADD by the ingestor, SPOP by the worker's history builder). */
  dirtyHistory: string;
  /** set: market ids whose past was just backfilled: their history snapshots are rebuilt at once, whatever the throttle. */
  backfilledHistory: string;
  /** set: records whose snapshots are stale — `call:<id>`, `market:<id>`, `combos`, `leaderboard` (SADD by shared/src/records and the worker, popped by the record snapshot builder). */
  dirtyRecords: string;
  /** string counter: bumped by the ingestor after a catalog sync that changed any row. */
  catalogVersion: string;
  /**
   * set: event ids whose catalog rows changed (SADD with the version bump, in one MULTI; popped with
   * it by the snapshot builder, which re-reads just these events). `CATALOG_RELOAD_ALL` among them:
   * every event's rows are re-read.
   */
  catalogDirtyEvents: string;
  /** hash per snapshot: `body` (serialised JSON), `etag` (strong, quoted), `built_at` (ms). */
  snapshot: (name: SnapshotName) => string;
  /**
   * string per computed board (`<sort>|<window>|<field>`): its latest ranking as an API process made
   * it, for the others (services/api/src/pages/shared-rankings.ts); PX the rankings' age bound.
   */
  boardRanking: (board: string) => string;
  /**
   * pub/sub channel: every snapshot write is announced here, in the same MULTI as the write, with
   * `{"name": <SnapshotName>, "etag": <etag>}` (shared/src/redis/snapshot-announce.ts); the API swaps its
   * in-memory copy on it.
   */
  snapshotAnnounce: string;
  /**
   * pub/sub channel: the ingestor publishes the channel name (`market`, `sports`) here, in the same
   * MULTI as the `feed` hash, whenever a feed's connected flag flips; the API re-reads `live` on it,
   * so a short cut shows even though the API polls the hash only once a second.
   */
  feedAnnounce: string;
  /** hash: snapshot family (`snapshotFamily`) → Unix ms of the newest write of any snapshot of it (for snapshot_age_seconds). */
  snapshotBuiltAt: string;
  /** prefix for the API's rate-limit counters (rate-limit-redis appends the client key). */
  rateLimitPrefix: string;
  /**
   * hash: market id → the slug of its event, for `/api/v1/markets/by-id/{marketId}`. Written by the
   * worker's snapshot builder for every event whose page it builds from the catalog (open events on
   * each catalog load, closed ones when their page is rebuilt); rebuilt with the pages after a loss.
   */
  marketEvents: string;
  /** counter: the newest version of the open events' ranking (`markets:ranking:<version>` snapshots, /markets walks). */
  rankingVersion: string;
  /**
   * string per lease of the ingestors' shared work (services/ingestor/src/sharing): `part:<n>` (the
   * markets of partition n), `leader` (catalog sync and resolution checks). Value: the owner's id; PX.
   */
  ingestorLease: (name: string) => string;
  /** hash: ingestor id → JSON `{"at": <ms>, "partitions": [n…], "leader": bool}`, rewritten by each live ingestor every few seconds. */
  ingestors: string;
  /**
   * Redis Stream behind `GET /api/v1/stream` (shared/src/stream): one entry per price move, score,
   * settlement and call, fields `t` (topic), `e` (event slug, empty when none), `d` (the message's
   * JSON). XADD with MINID trimming keeps at least the retention window (≥ 10 minutes); every API
   * process reads it with one XREAD BLOCK and fans the entries out to its clients.
   */
  stream: string;
  /**
   * sorted set per client (rate-limit client key): its open streams on every API process, member a
   * stream's id, score the Unix ms until which it counts (refreshed with each heartbeat, so a process
   * that died stops counting). For the per-client cap on open streams.
   */
  streamClients: (client: string) => string;
}

/**
 * Snapshot names.
 * - `markets:trending`, `markets:category:<Category>`, `markets:league:<key>`: a MarketListSnapshot.
 * - `markets:search`: a MarketSearchSnapshot over every open event (for `q`).
 * - `markets:ranking:<version>`: a RankingSnapshot, the busiest-first order a `/markets` walk keeps;
 *   kept at least 15 minutes after the next version replaced it (a TTL), then gone.
 * - `event:<slug>`: an EventSnapshot.
 * - `history:<marketId>:<range>`: a HistorySnapshot (range 1d, 1w, 1m or max).
 * - `live`: a LiveSnapshot (every match in play).
 * - `book:<marketId>`: a BookSnapshot, written by the ingestor (a few times a second at most per
 *   market) with a TTL, so the book of a market no longer traded goes away on its own.
 * - Records (shared/src/api/records-resources.ts): `calls:latest`, `calls:market:<marketId>`,
 *   `leaderboard:<profit|right|xp|week>`, `combos:<open|won|lost|void>`. A person's record and call
 *   lists and a call's page are no snapshots: the API reads them from Postgres (services/api/src/pages).
 */
export type SnapshotName =
  | 'markets:trending'
  | `markets:category:${string}`
  | `markets:league:${string}`
  | 'markets:search'
  | `event:${string}`
  | `history:${string}:${string}`
  | `book:${string}`
  | `markets:ranking:${string}`
  | 'live'
  | 'calls:latest'
  | `calls:market:${string}`
  | `leaderboard:${string}`
  | `combos:${string}`;

/** `{<prefix>}`: the start of every key of one stack that is used with another in one command. */
export function redisKeyBase(prefix: string): string {
  return `{${prefix}}`;
}

export function redisKeys(prefix: string): RedisKeys {
  const base = redisKeyBase(prefix);
  return {
    chances: `${base}:chances`,
    chanceAt: `${base}:chances:at`,
    quotes: `${base}:quotes`,
    feed: `${base}:feed`,
    dirtyEvents: `${base}:dirty:events`,
    dirtyHistory: `${base}:dirty:history`,
    backfilledHistory: `${base}:dirty:history:backfilled`,
    dirtyRecords: `${base}:dirty:records`,
    catalogVersion: `${base}:catalog:version`,
    catalogDirtyEvents: `${base}:dirty:catalog`,
    snapshot: (name) => `${base}:snap:${name}`,
    boardRanking: (board) => `${base}:board-ranking:${board}`,
    snapshotAnnounce: `${base}:snap:announce`,
    feedAnnounce: `${base}:feed:announce`,
    snapshotBuiltAt: `${base}:snapshots:built`,
    rateLimitPrefix: `${prefix}:rl:`,
    marketEvents: `${base}:market-events`,
    rankingVersion: `${base}:ranking:version`,
    ingestorLease: (name) => `${base}:lease:ingestor:${name}`,
    ingestors: `${base}:ingestors`,
    stream: `${base}:stream`,
    // Tagged: the heartbeat refreshes every open stream's member in one pipeline, which on a cluster must stay in one slot.
    streamClients: (client) => `${base}:stream:clients:${client}`,
  };
}

/** Feed freshness rule (docs/design.md): live while connected and the last message is under 30 s old. */
export const FEED_FRESH_MS = 30_000;

/** A member of `catalogDirtyEvents`: a catalog change that named no event, so every event's rows are re-read. */
export const CATALOG_RELOAD_ALL = '*';
