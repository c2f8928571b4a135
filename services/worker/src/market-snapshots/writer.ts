import type { Redis } from 'ioredis';
import { queueSnapshotWrites, redisKeys, snapshotEtag, type SnapshotName } from '@pm/shared/redis';

/**
 * Writes snapshots to Redis as hashes `{ body, etag, built_at }` (shared/src/redis/keys.ts).
 *
 * - A snapshot is written only when its ETag changed, so `built_at` and the API's 304s stay meaningful
 *   and an idle market costs no Redis traffic. The writer remembers the ETags it wrote; for a name it
 *   has not seen (start, or after `forget`) it reads the stored ETag first.
 * - All the writes of one build go in one MULTI: body and etag of a snapshot, and the snapshots of one
 *   build among themselves, change together or not at all (a worker stopped mid-build leaves the
 *   previous build whole).
 * - Each written snapshot is announced on `snapshotAnnounce` in that same MULTI
 *   (shared/src/redis/snapshot-announce.ts): API processes hold snapshots in memory and swap them on it.
 * - A snapshot written with an expiry (a closed event's) gets it in that MULTI too, and is always
 *   compared with what Redis holds: it may have expired since.
 */

/**
 * A payload to serialise, or a body already serialised (the record snapshots come as JSON text from
 * SQL, the lists from list-bodies.ts), with its `snapshotEtag` when the caller has it already
 * (etag-memo.ts) so a large unchanged body is not hashed again.
 */
export type SnapshotEntry = ({ name: SnapshotName; payload: unknown } | { name: SnapshotName; body: string; etag?: string }) & {
  /**
   * Unix ms at which the stored snapshot expires: a closed event's (retire/closed-expiry.ts). Such a
   * snapshot may have expired since this writer last wrote it, so it is compared with Redis, never
   * with the ETag remembered.
   */
  expireAtMs?: number;
};

export interface WriteResult {
  /** Snapshots whose body changed and were written. */
  written: number;
}

export interface SnapshotWriter {
  write(entries: readonly SnapshotEntry[]): Promise<WriteResult>;
  /** Drop the remembered ETags, so the next write compares with Redis (which may have been flushed). */
  forget(): void;
  /** The ETag last written (or found stored and kept) under `name`; undefined after `forget` or before any write of it. */
  etagOf(name: SnapshotName): string | undefined;
}

/**
 * ETags remembered at most: one per name written, and the exchange makes new event and history
 * names all day. Past it the memory starts over (each name then costs one HGET of its stored ETag
 * on its next write), so a worker that runs for weeks holds no ETag of every market ever seen.
 */
const KNOWN_MAX = 20_000;

export function createSnapshotWriter(deps: { redis: Redis; prefix: string; now: () => number; knownMax?: number }): SnapshotWriter {
  const keys = redisKeys(deps.prefix);
  const known = new Map<SnapshotName, string>();
  const knownMax = deps.knownMax ?? KNOWN_MAX;

  return {
    forget() {
      known.clear();
    },
    etagOf: (name) => known.get(name),
    async write(entries) {
      const serialised = entries.map((e) => {
        const expiry = e.expireAtMs === undefined ? {} : { expireAtMs: e.expireAtMs };
        if ('body' in e) return { name: e.name, body: e.body, etag: e.etag ?? snapshotEtag(e.body), ...expiry };
        const body = JSON.stringify(e.payload);
        return { name: e.name, body, etag: snapshotEtag(body), ...expiry };
      });
      if (known.size > knownMax) known.clear();
      for (const s of serialised) if (s.expireAtMs !== undefined) known.delete(s.name);
      const unknown = serialised.filter((s) => !known.has(s.name));
      if (unknown.length > 0) {
        const read = deps.redis.pipeline();
        for (const s of unknown) read.hget(keys.snapshot(s.name), 'etag');
        const results = (await read.exec()) ?? [];
        unknown.forEach((s, i) => {
          const [err, etag] = results[i] ?? [null, null];
          if (err === null && typeof etag === 'string') known.set(s.name, etag);
        });
      }
      const changed = serialised.filter((s) => known.get(s.name) !== s.etag);
      if (changed.length === 0) return { written: 0 };

      const tx = deps.redis.multi();
      queueSnapshotWrites(tx, deps.prefix, changed, deps.now());
      const results = await tx.exec();
      if (results === null) throw new Error('snapshot write aborted');
      for (const [err] of results) if (err) throw err;
      for (const s of changed) known.set(s.name, s.etag);
      return { written: changed.length };
    },
  };
}
