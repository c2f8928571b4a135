import { LRUCache } from 'lru-cache';
import type { SnapshotName } from '@pm/shared/redis';
import type { ReadyResponse } from './ready-response.js';
import type { SnapshotStore } from '../snapshots/snapshot-store.js';

/**
 * The ready responses of one API process, by request target (path and query exactly as sent), each
 * with what it was made from: the versions of the snapshots its handler read and the `live` value
 * it used. A response is answered only while all of those are still current, so a new snapshot
 * version (announced, see snapshot-store.ts) or a flip of `live` retires it without any bookkeeping;
 * the next request goes through Express and makes the new one.
 *
 * Keyed by the raw target rather than by canonical parameters: looking it up must cost no parsing.
 * Two spellings of one request are two entries of the same bytes and the same ETag (the ETag is the
 * canonical identity, adapter.ts). Bounded by entries and by bytes (least recently used out): an entry
 * no request asks for again stays until pushed out, and with 2,000 of them (odds of every chance,
 * histories of every market and range) a soak's API held 70 MB of bodies and their encodings.
 */

/**
 * Bytes an entry is counted as: its body and an allowance for its gzip and brotli encodings. True
 * bytes, because a ready response owns its buffers (ready-response.ts `ownBytes`), never a view
 * that keeps a larger allocation alive.
 */
const weight = (entry: ReadyEntry) => Math.max(1, Math.ceil(entry.ready.body.length * 1.5));

export type SnapshotVersions = ReadonlyArray<readonly [SnapshotName, string | null]>;

export interface ReadyEntry {
  ready: ReadyResponse;
  /** Every snapshot the handler read, with the version it read (null: absent). */
  versions: SnapshotVersions;
  /** The `live` value the body carries; undefined when the body does not depend on it. */
  live: boolean | undefined;
}

export interface ReadyCache {
  /**
   * Whether a response is held for this target, current or not: the front handler's first look, which
   * decides that it counts the request itself; `lookup` after the count says whether it answers it.
   */
  holds(target: string): boolean;
  /** The current ready response for this target, if one is held and still current. */
  lookup(target: string): ReadyResponse | undefined;
  remember(target: string, entry: ReadyEntry): void;
  /**
   * The response for this target being made now (the Express path's build, adapter.ts), shared by
   * every request for it that arrives meanwhile: those the front handler counted wait for it there
   * instead of each walking Express's router to the same build.
   */
  building(target: string): Promise<ReadyResponse> | undefined;
  /** `make`'s response for this target, made once for all the requests that ask while it is made. */
  share(target: string, make: () => Promise<ReadyResponse>): Promise<ReadyResponse>;
}

export function createReadyCache(snapshots: Pick<SnapshotStore, 'version' | 'live'>, maxEntries = 2000, maxBytes = 24 * 1024 * 1024): ReadyCache {
  const entries = new LRUCache<string, ReadyEntry>({ max: maxEntries, maxSize: maxBytes, sizeCalculation: weight });
  const current = (entry: ReadyEntry) => {
    if (entry.live !== undefined && entry.live !== snapshots.live()) return false;
    // A plain loop: a hundred markets by id carry up to a hundred versions, checked on every request.
    const { versions } = entry;
    for (let i = 0; i < versions.length; i++) if (snapshots.version(versions[i]![0]) !== versions[i]![1]) return false;
    return true;
  };
  const inFlight = new Map<string, Promise<ReadyResponse>>();
  return {
    holds(target) {
      return entries.has(target);
    },
    building(target) {
      return inFlight.get(target);
    },
    share(target, make) {
      let made = inFlight.get(target);
      if (!made) {
        made = make().finally(() => inFlight.delete(target));
        inFlight.set(target, made);
      }
      return made;
    },
    lookup(target) {
      const entry = entries.get(target);
      if (!entry) return undefined;
      if (current(entry)) return entry.ready;
      entries.delete(target);
      return undefined;
    },
    remember(target, entry) {
      if (current(entry)) entries.set(target, entry);
    },
  };
}
