import type { Redis } from 'ioredis';
import type { Logger } from '@pm/shared/logger';
import type { OrderBook } from '@pm/shared/domain';
import { queueSnapshotWrites, redisKeys, snapshotEtag, type SnapshotName } from '@pm/shared/redis';
import { BOOK_DEPTH, type BookLevel, type BookSnapshot } from '@pm/shared/snapshots';
import type { OutcomeDirectory } from '../catalog/outcome-directory.js';
import type { Clock } from '../common/clock.js';

/**
 * Publishes each market's order book as the `book:<marketId>` snapshot (GET /markets/{slug}/book),
 * at a bounded rate: a book changes on every level the exchange touches (tens of times a second on a
 * busy market), a reader needs it at most a few times a second. A change marks its market; every
 * `everyMs` the marked markets are written, each at most once per `everyMs`, so no book is written
 * more than 1000/everyMs times a second and none is more than about `everyMs` behind while it
 * changes. Unchanged bodies are not written again.
 *
 * Each side is cut to BOOK_DEPTH levels, best first. Where the exchange stated a top the local book
 * does not agree with (a stale level the book still holds), levels better than the stated top are
 * left out: the book's top is then the quote the chance was computed from.
 *
 * Every write sets a TTL on the key: a market no longer traded (closed, resolved, unsubscribed) is
 * no longer written, and its book goes away on its own instead of staying in Redis for good.
 */
export interface BookPublisher {
  /** A token's book or stated top changed. */
  changed(tokenId: string): void;
  /** Write every marked book now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** A token's market is no longer followed (closed, or not this ingestor's): drop what is kept of its book. */
  forget(tokenId: string): void;
  /** Books written, and markets whose last written levels are kept (to skip writing the same again). */
  stats(): { written: number; held: number };
}

export interface BookPublisherOptions {
  redis: Redis;
  prefix: string;
  outcomes: OutcomeDirectory;
  book: (tokenId: string) => OrderBook | undefined;
  /** The top shown for a token (the exchange's stated sides, else the book's). */
  top: (tokenId: string) => { bid: number | null; ask: number | null };
  clock: Clock;
  logger: Logger;
  /** Least time between two writes of one book, and the publishing period; default 250 ms. */
  everyMs?: number;
  /** TTL of a book key; default 10 minutes. */
  ttlMs?: number;
}

export function createBookPublisher(opts: BookPublisherOptions): BookPublisher {
  const everyMs = opts.everyMs ?? 250;
  const ttlMs = opts.ttlMs ?? 600_000;
  const keys = redisKeys(opts.prefix);
  /** Market id → clock time of its latest change not yet written. */
  let marked = new Map<string, number>();
  const writtenEtag = new Map<string, string>();
  let written = 0;
  let running: Promise<void> = Promise.resolve();

  function snapshotOf(marketId: string, asOf: number): BookSnapshot | null {
    const refs = opts.outcomes.market(marketId);
    if (refs.length === 0) return null;
    const outcomes = [...refs]
      .sort((a, b) => a.outcomeIndex - b.outcomeIndex)
      .map((ref) => {
        const depth = opts.book(ref.tokenId)?.depth(BOOK_DEPTH) ?? { bids: [], asks: [] };
        const top = opts.top(ref.tokenId);
        const bids: BookLevel[] = top.bid === null ? depth.bids : depth.bids.filter((l) => l.price <= top.bid!);
        const asks: BookLevel[] = top.ask === null ? depth.asks : depth.asks.filter((l) => l.price >= top.ask!);
        return { index: ref.outcomeIndex, bids, asks };
      });
    return { market_id: marketId, as_of: new Date(asOf).toISOString(), outcomes };
  }

  async function writeMarked(): Promise<void> {
    if (marked.size === 0) return;
    const batch = marked;
    marked = new Map();
    const changed: Array<{ name: SnapshotName; body: string; etag: string; marketId: string }> = [];
    for (const [marketId, at] of batch) {
      const snapshot = snapshotOf(marketId, at);
      if (snapshot === null) continue;
      // The time of the change is part of the body only through the levels: a mark whose levels did not change writes nothing.
      const levels = JSON.stringify(snapshot.outcomes);
      if (writtenEtag.get(marketId) === levels) continue;
      const body = JSON.stringify(snapshot);
      changed.push({ name: `book:${marketId}`, body, etag: snapshotEtag(body), marketId });
      writtenEtag.set(marketId, levels);
    }
    if (changed.length === 0) return;
    const tx = opts.redis.multi();
    queueSnapshotWrites(tx, opts.prefix, changed, opts.clock.now());
    for (const c of changed) tx.pexpire(keys.snapshot(c.name), ttlMs);
    try {
      const results = await tx.exec();
      const failed = results?.find(([err]) => err);
      if (results === null || failed) throw failed?.[0] ?? new Error('book write aborted');
      written += changed.length;
    } catch (err) {
      // Written again at the next change (or the next mark): forget what was not stored.
      for (const c of changed) writtenEtag.delete(c.marketId);
      for (const c of changed) if (!marked.has(c.marketId)) marked.set(c.marketId, batch.get(c.marketId) ?? opts.clock.now());
      opts.logger.warn({ err, books: changed.length }, 'publishing order books failed; will retry');
    }
  }

  const tick = () => {
    running = running.then(writeMarked).catch(() => {});
  };
  const timer = setInterval(tick, everyMs);
  timer.unref();

  return {
    changed(tokenId) {
      const ref = opts.outcomes.get(tokenId);
      if (ref === undefined || ref.closed) return;
      marked.set(ref.marketId, opts.clock.now());
    },
    async flush() {
      tick();
      await running;
    },
    async close() {
      clearInterval(timer);
      tick();
      await running;
    },
    forget(tokenId) {
      const ref = opts.outcomes.get(tokenId);
      if (ref === undefined) return;
      writtenEtag.delete(ref.marketId);
      marked.delete(ref.marketId);
    },
    stats: () => ({ written, held: writtenEtag.size }),
  };
}
