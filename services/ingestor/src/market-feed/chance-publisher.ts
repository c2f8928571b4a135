import type { Redis } from 'ioredis';
import type { Logger } from '@pm/shared/logger';
import { formatQuote, NO_QUOTE, type Quote } from '@pm/shared/domain';
import { REDIS_FIELDS_PER_COMMAND, slices, type RedisKeys } from '@pm/shared/redis';
import type { Clock } from '../common/clock.js';
import { createCoalescedWrite } from '../common/coalesced-write.js';

/**
 * Publishes displayed chances to Redis: `HSET keys.chances token chance` only when the chance
 * moved, with `HSET keys.chanceAt token now`. Writes go out as one pipeline as soon as the previous
 * one returned (coalesced-write.ts: leading edge plus a guaranteed trailing edge, no fixed delay),
 * the latest value per token winning, so a burst of book changes costs a round trip, not one per
 * change, and the last change before a silence is never held back. A chance that did not move has
 * its `chanceAt` re-confirmed at most every `reconfirmMs` (default 30 s) while its feed is live: the
 * write path refuses prices older than 60 s, and a quiet but connected market is still current.
 */
export interface ChancePublisher {
  /**
   * Offer a freshly computed chance and the quotes (top of book, last trade) it came from; true when
   * either differs from the last published. The quotes go to `keys.quotes` with the chance.
   */
  publish(tokenId: string, chance: number | null, quote?: Quote): boolean;
  /**
   * Re-confirm the `chanceAt` of unchanged chances every `reconfirmMs` while `isLive` says the
   * token's feed is live (the sockets are built after the publisher, so they are named here).
   */
  keepConfirmed(isLive: (tokenId: string) => boolean): void;
  /** The last published chance of a token, as written. */
  last(tokenId: string): string | undefined;
  /** Resolves once every chance published before the call is in Redis (true), or its write failed (false; retried later). */
  flush(): Promise<boolean>;
  close(): Promise<void>;
  /** `published`: chances published because they moved (every publication, not distinct tokens); `writes`: pipelines sent. */
  /** Drop what is held for a token no longer followed (its market closed): without it, every token ever seen stays. */
  forget(tokenId: string): void;
  stats(): { published: number; writes: number };
}

export interface ChancePublisherOptions {
  redis: Redis;
  keys: Pick<RedisKeys, 'chances' | 'chanceAt' | 'quotes'>;
  clock: Clock;
  logger: Logger;
  reconfirmMs?: number;
  /**
   * Called with every chance or quote that moved (the stream's price message carries both; the price
   * history records only a chance that moved: `chanceMoved`).
   */
  onMoved?: (tokenId: string, chance: number, quote: Quote, chanceMoved: boolean) => void;
}

export function formatChance(chance: number): string {
  // displayChance already rounds to 4 places; toFixed + Number trims float noise and zeros.
  return String(Number(chance.toFixed(6)));
}

export function createChancePublisher(opts: ChancePublisherOptions): ChancePublisher {
  const reconfirmMs = opts.reconfirmMs ?? 30_000;
  const published = new Map<string, string>();
  const publishedQuotes = new Map<string, string>();
  let pendingQuote = new Map<string, string>();
  const confirmedAt = new Map<string, number>();
  let pendingChance = new Map<string, string>();
  let pendingAt = new Map<string, number>();
  let publications = 0;
  let writes = 0;

  let sweep: NodeJS.Timeout | undefined;

  async function write(): Promise<void> {
    if (pendingChance.size === 0 && pendingAt.size === 0 && pendingQuote.size === 0) return;
    const chances = pendingChance;
    const ats = pendingAt;
    const quotes = pendingQuote;
    pendingChance = new Map();
    pendingAt = new Map();
    pendingQuote = new Map();
    const pipe = opts.redis.pipeline();
    // In slices: a re-confirmation sweep stamps every token at once (REDIS_FIELDS_PER_COMMAND).
    for (const slice of slices([...chances], REDIS_FIELDS_PER_COMMAND)) pipe.hset(opts.keys.chances, Object.fromEntries(slice));
    // Quotes before their chances in the same pipeline: a reader that sees the chance sees its quotes.
    for (const slice of slices([...quotes], REDIS_FIELDS_PER_COMMAND)) pipe.hset(opts.keys.quotes, Object.fromEntries(slice));
    for (const slice of slices([...ats], REDIS_FIELDS_PER_COMMAND)) pipe.hset(opts.keys.chanceAt, Object.fromEntries(slice.map(([t, at]) => [t, String(at)])));
    writes++;
    try {
      const results = await pipe.exec();
      const failed = results?.find(([err]) => err);
      if (failed) throw failed[0];
    } catch (err) {
      // Newer values queued meanwhile win over the ones being retried.
      for (const [t, c] of chances) if (!pendingChance.has(t)) pendingChance.set(t, c);
      for (const [t, at] of ats) if (!pendingAt.has(t)) pendingAt.set(t, at);
      for (const [t, q] of quotes) if (!pendingQuote.has(t)) pendingQuote.set(t, q);
      throw err;
    }
  }

  const writer = createCoalescedWrite({
    write,
    onError: (err) => opts.logger.warn({ err, tokens: pendingChance.size }, 'publishing chances failed; will retry'),
  });

  function stampAt(tokenId: string, now: number) {
    confirmedAt.set(tokenId, now);
    pendingAt.set(tokenId, now);
    writer.request();
  }

  return {
    keepConfirmed(isLive) {
      clearInterval(sweep);
      sweep = setInterval(() => {
        const now = opts.clock.now();
        for (const tokenId of published.keys()) {
          if (now - (confirmedAt.get(tokenId) ?? 0) >= reconfirmMs && isLive(tokenId)) stampAt(tokenId, now);
        }
      }, Math.max(50, Math.min(5_000, Math.floor(reconfirmMs / 3))));
      sweep.unref();
    },
    publish(tokenId, chance, quote = NO_QUOTE) {
      if (chance === null) return false;
      const text = formatChance(chance);
      const quoteText = formatQuote(quote);
      const now = opts.clock.now();
      const chanceMoved = published.get(tokenId) !== text;
      const quoteMoved = publishedQuotes.get(tokenId) !== quoteText;
      if (!chanceMoved && !quoteMoved) {
        if (now - (confirmedAt.get(tokenId) ?? 0) >= reconfirmMs) stampAt(tokenId, now);
        return false;
      }
      if (chanceMoved) {
        published.set(tokenId, text);
        pendingChance.set(tokenId, text);
      }
      if (quoteMoved) {
        publishedQuotes.set(tokenId, quoteText);
        pendingQuote.set(tokenId, quoteText);
      }
      publications++;
      stampAt(tokenId, now);
      opts.onMoved?.(tokenId, Number(text), quote, chanceMoved);
      return true;
    },
    last: (tokenId) => published.get(tokenId),
    forget(tokenId) {
      published.delete(tokenId);
      confirmedAt.delete(tokenId);
    },
    flush: () => writer.flush(),
    async close() {
      clearInterval(sweep);
      await writer.flush();
      writer.close();
    },
    stats: () => ({ published: publications, writes }),
  };
}
