import type { Redis } from 'ioredis';
import { REDIS_FIELDS_PER_COMMAND, slices } from '@pm/shared/redis';
import type { CatalogEvent, Chances } from './model.js';
import { parseChance } from './payloads.js';

/**
 * The worker's copy of the displayed chances (`keys.chances`), so that a build asks Redis only for
 * the chances that can have moved since the last one:
 * - the tokens of the events it was told are dirty: the ingestor marks an event only once its new
 *   chances are in Redis (ingestor dirty-events.ts), and the build pops the marks before it reads;
 * - tokens it has never read (an event new to the catalog);
 * - every token on a full build or a catalog reload (`'all'`), which also forgets the tokens of
 *   events no longer passed, so the copy holds the open events' tokens and no more.
 *
 * Reading every open event's chances (~21,000 tokens) on every build, several times a second while
 * prices moved, cost 0.5–10 ms of Redis each time (every other client waited
 * behind it, the API's rate-limit counts among them) and a fifth of the worker's CPU.
 */
export interface ChanceReader {
  /**
   * The chances of `events`' tokens, read fresh from Redis for the events in `fresh` (or all).
   * The map returned is the reader's own: valid until the next call.
   */
  read(events: readonly CatalogEvent[], fresh: 'all' | ReadonlySet<string>): Promise<Chances>;
}

export function createChanceReader(redis: Redis, key: string): ChanceReader {
  return createTokenReader(redis, key, (raw) => parseChance(raw));
}

/** The same reader over another token hash (`keys.quotes`), with its own parser. */
export interface TokenReader<T> {
  read(events: readonly CatalogEvent[], fresh: 'all' | ReadonlySet<string>): Promise<ReadonlyMap<string, T>>;
}

export function createTokenReader<T>(redis: Redis, key: string, parse: (raw: string | null) => T | undefined): TokenReader<T> {
  /** Token → value, for the tokens read whose value is known. */
  let known = new Map<string, T>();
  /** Tokens read that had no (valid) chance. */
  let unknown = new Set<string>();

  return {
    async read(events, fresh) {
      const all = fresh === 'all';
      const wanted = new Set<string>();
      for (const event of events) {
        const again = all || fresh.has(event.id);
        for (const market of event.markets) {
          for (const outcome of market.outcomes) {
            const token = outcome.tokenId;
            if (again || (!known.has(token) && !unknown.has(token))) wanted.add(token);
          }
        }
      }
      const tokens = [...wanted];
      const values: unknown[] = [];
      if (tokens.length > 0) {
        const pipeline = redis.pipeline();
        for (const slice of slices(tokens, REDIS_FIELDS_PER_COMMAND)) pipeline.hmget(key, ...slice);
        for (const [err, chunk] of (await pipeline.exec()) ?? []) {
          if (err) throw err;
          if (Array.isArray(chunk)) values.push(...(chunk as unknown[]));
        }
      }
      if (all) {
        known = new Map();
        unknown = new Set();
      }
      tokens.forEach((token, i) => {
        const raw = values[i];
        const value = parse(typeof raw === 'string' ? raw : null);
        if (value === undefined) {
          known.delete(token);
          unknown.add(token);
        } else {
          unknown.delete(token);
          known.set(token, value);
        }
      });
      return known;
    },
  };
}
