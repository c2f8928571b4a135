import { createHash } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import { z } from 'zod';
import { redisKeys, type SnapshotName } from './keys.js';

/**
 * How a snapshot write is published (docs/design.md "The read path"): the hash `{body, etag, built_at}`,
 * the family's newest write time (for snapshot_age_seconds) and an announcement on
 * `snapshotAnnounce` go into ONE MULTI, so an API process never hears of a version that is not
 * stored, and never misses one that is (short of losing its subscription, after which it re-reads).
 * The worker's snapshot writer is the one producer; the API's tests use it to seed snapshots.
 */

/**
 * The message on `redisKeys(prefix).snapshotAnnounce`: the snapshots one write stored, up to
 * ANNOUNCE_BATCH per message. One message per snapshot cost a big settlement (70,000 snapshots) as
 * many PUBLISHes in the worker's MULTI and as many messages parsed by every API process.
 */
export const snapshotAnnouncementSchema = z.array(z.object({ name: z.string().min(1), etag: z.string().min(1) })).min(1);
export type SnapshotAnnouncement = { name: SnapshotName; etag: string };
/** Snapshots announced per message at most (a message stays well under 100 KB). */
export const ANNOUNCE_BATCH = 500;

/**
 * Every snapshot family, i.e. a snapshot name up to its variable part. Closed, so a metric labelled
 * by family has a bounded label set whatever the names are.
 */
export const SNAPSHOT_FAMILIES = [
  'markets:trending',
  'markets:category',
  'markets:league',
  'markets:search',
  'markets:ranking',
  'event',
  'history',
  'book',
  'live',
  'calls:latest',
  'calls:market',
  'leaderboard',
  'combos',
] as const;
export type SnapshotFamily = (typeof SNAPSHOT_FAMILIES)[number];

/** The family of a snapshot name: the longest family that is the whole name or a `:`-separated prefix of it. */
export function snapshotFamily(name: SnapshotName): SnapshotFamily {
  let best: SnapshotFamily | undefined;
  for (const family of SNAPSHOT_FAMILIES) {
    if ((name === family || name.startsWith(`${family}:`)) && (!best || family.length > best.length)) best = family;
  }
  if (!best) throw new Error(`snapshot ${name} belongs to no known family`);
  return best;
}

/**
 * A snapshot body's version: a strong, quoted ETag that changes exactly when the body does (27
 * base64url chars of its SHA-1). The worker's writer stamps what it stores with it; the API's
 * live-price overlay names the body it derives the same way, so a worker build that reaches the same
 * body is recognised as the version already held.
 */
export function snapshotEtag(body: string): string {
  return `"${createHash('sha1').update(body).digest('base64url').slice(0, 27)}"`;
}

export interface SnapshotWrite {
  name: SnapshotName;
  /** The serialised payload. */
  body: string;
  /** Strong, quoted; changes exactly when `body` does. */
  etag: string;
  /**
   * Unix ms at which the stored snapshot expires (PEXPIREAT, in the same MULTI); absent: it keeps
   * any expiry it has. A closed event's snapshots carry one (docs/redis-keys.md "Closed events").
   */
  expireAtMs?: number;
}

/** Queues the writes of `snapshots` (stored, family time, announced) on a MULTI the caller executes. */
export function queueSnapshotWrites(tx: ChainableCommander, prefix: string, snapshots: readonly SnapshotWrite[], builtAtMs: number): void {
  const keys = redisKeys(prefix);
  const builtAt = String(builtAtMs);
  const families = new Set<SnapshotFamily>();
  for (const s of snapshots) {
    tx.hset(keys.snapshot(s.name), { body: s.body, etag: s.etag, built_at: builtAt });
    if (s.expireAtMs !== undefined) tx.pexpireat(keys.snapshot(s.name), s.expireAtMs);
    families.add(snapshotFamily(s.name));
  }
  if (families.size > 0) tx.hset(keys.snapshotBuiltAt, Object.fromEntries([...families].map((f) => [f, builtAt])));
  for (let i = 0; i < snapshots.length; i += ANNOUNCE_BATCH) {
    const batch = snapshots.slice(i, i + ANNOUNCE_BATCH).map((s): SnapshotAnnouncement => ({ name: s.name, etag: s.etag }));
    tx.publish(keys.snapshotAnnounce, JSON.stringify(batch));
  }
}
