import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { FEED_FRESH_MS, redisKeys, type Logger, type SnapshotName } from '@pm/shared';
import { ApiError } from './errors.js';

/**
 * Reads the worker's snapshots (shared/src/snapshots.ts) and the feed health hash.
 *
 * Per request: ONE round trip (a pipeline of HGET etag + HMGET feed). The body is fetched, parsed and
 * validated only when the etag differs from the one held in process, so a busy list costs a few
 * bytes of Redis traffic per request instead of its whole JSON.
 */

export interface SnapshotRead<T> {
  /** Null when the worker has not written this snapshot. */
  snapshot: { data: T; etag: string } | null;
  /** DESIGN.md: the order-book feed is connected and its last message is under 30 s old. */
  live: boolean;
}

export interface SnapshotStore {
  read<T>(name: SnapshotName, schema: z.ZodType<T>): Promise<SnapshotRead<T>>;
}

export interface SnapshotStoreOptions {
  redis: Redis;
  prefix: string;
  clock: () => number;
  logger: Logger;
  /** Parsed snapshots held in process (least recently used are dropped). */
  maxEntries?: number;
  /** A Redis round trip longer than this is treated as Redis being unavailable. */
  timeoutMs?: number;
}

interface Cached {
  etag: string;
  data: unknown;
}

const UNAVAILABLE = 'records are unavailable right now; please try again shortly';

export function createSnapshotStore(options: SnapshotStoreOptions): SnapshotStore {
  const { redis, clock, logger } = options;
  const keys = redisKeys(options.prefix);
  const maxEntries = options.maxEntries ?? 1000;
  const timeoutMs = options.timeoutMs ?? 1000;
  const cache = new Map<SnapshotName, Cached>();
  const inFlight = new Map<string, Promise<Cached | null>>();

  /** Any Redis failure or slowness is the caller's 503, never a 500 and never a hang. */
  async function redisCall<T>(what: string, run: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        run(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`redis ${what} timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      logger.warn({ err, what }, 'redis unavailable');
      throw new ApiError('unavailable', UNAVAILABLE, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  function remember(name: SnapshotName, entry: Cached): void {
    cache.delete(name);
    cache.set(name, entry);
    while (cache.size > maxEntries) {
      const oldest = cache.keys().next().value;
      if (oldest === undefined) break;
      cache.delete(oldest);
    }
  }

  async function loadBody<T>(name: SnapshotName, schema: z.ZodType<T>): Promise<Cached | null> {
    const [body, etag] = await redisCall('snapshot body', () => redis.hmget(keys.snapshot(name), 'body', 'etag'));
    if (body == null || etag == null) return null;
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch (err) {
      throw new Error(`snapshot ${name} (etag ${etag}) is not valid JSON`, { cause: err });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new Error(`snapshot ${name} (etag ${etag}) does not match its schema: ${parsed.error.message}`);
    }
    const entry: Cached = { etag, data: parsed.data };
    remember(name, entry);
    return entry;
  }

  return {
    async read<T>(name: SnapshotName, schema: z.ZodType<T>): Promise<SnapshotRead<T>> {
      const results = await redisCall('snapshot etag', () =>
        redis.pipeline().hget(keys.snapshot(name), 'etag').hmget(keys.feed, 'market_connected', 'market_last_at').exec(),
      );
      if (!results) throw new ApiError('unavailable', UNAVAILABLE);
      const [etagReply, feedReply] = results;
      const failed = [etagReply, feedReply].find((r) => !r || r[0]);
      if (failed) {
        logger.warn({ err: failed?.[0] }, 'redis unavailable');
        throw new ApiError('unavailable', UNAVAILABLE, { cause: failed?.[0] });
      }
      const etag = etagReply?.[1] as string | null;
      const [connected, lastAt] = (feedReply?.[1] ?? []) as Array<string | null>;
      const lastAtMs = Number(lastAt);
      const live = connected === '1' && Number.isFinite(lastAtMs) && clock() - lastAtMs < FEED_FRESH_MS;

      if (etag == null) return { snapshot: null, live };

      let entry = cache.get(name) ?? null;
      if (entry && entry.etag === etag) {
        remember(name, entry);
      } else {
        // Concurrent requests after a rebuild share one fetch and parse.
        const flightKey = `${name}\u0000${etag}`;
        let flight = inFlight.get(flightKey);
        if (!flight) {
          flight = loadBody(name, schema).finally(() => inFlight.delete(flightKey));
          inFlight.set(flightKey, flight);
        }
        entry = await flight;
      }
      if (!entry) return { snapshot: null, live };
      return { snapshot: { data: entry.data as T, etag: entry.etag }, live };
    },
  };
}
