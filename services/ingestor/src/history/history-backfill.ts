import type { Logger } from '@pm/shared/logger';
import type { FetchHistory, HistoryQuery, PricePoint } from './history-client.js';
import { sleep } from '@pm/shared/wait';

/**
 * Backfills a market's past from /prices-history, off the feed's path: a queue drained by a few
 * concurrent runners, each request paced, failures retried later with a growing delay. Nothing here
 * is awaited by the market handler, so a slow or failing history endpoint never delays prices.
 *
 * Two requests per token: everything at hourly fidelity (into the 1h tier, and the 1d candles made
 * from it), then the last week at 5 minutes (into the 5m tier). Each lands in the tier of its fidelity. A resolved market may return nothing at a fine fidelity
 * (docs/protocol.md §4): an empty answer is asked again coarser (6 h, then a day) before concluding the
 * token has no past.
 */

/** The points of one request and the fidelity (minutes) they were asked at. */
export interface Fetched {
  fidelity: number;
  points: PricePoint[];
}

export interface BackfillTarget {
  tokenId: string;
  marketId: string;
}

export interface HistoryBackfillOptions {
  fetchHistory: FetchHistory;
  /** Store the points of each fetch, by its fidelity (idempotent), and note the market's history changed. */
  store: (target: BackfillTarget, fetched: Fetched[]) => Promise<void>;
  logger: Logger;
  /** Requests in flight at once; default 2. */
  concurrency?: number;
  /** Least time between two requests (all runners together); default 100 ms. */
  paceMs?: number;
  /** First retry delay, doubling per failure up to `retryMaxMs`; default 30 s and 10 min. */
  retryMs?: number;
  retryMaxMs?: number;
  /** Failures after which a token is left for the next start; default 8. */
  maxAttempts?: number;
}

export interface HistoryBackfillStats {
  queued: number;
  done: number;
  failed: number;
  retries: number;
  points: number;
}

export interface HistoryBackfill {
  enqueue(target: BackfillTarget): void;
  /** Resolves once nothing is queued, waiting or running (tests). */
  idle(): Promise<void>;
  close(): Promise<void>;
  stats(): HistoryBackfillStats;
}

/** The coarse-to-fine plan: the first that answers with points wins among `coarse`, then `fine`. */
const COARSE: readonly HistoryQuery[] = [
  { interval: 'max', fidelity: 60 },
  { interval: 'max', fidelity: 360 },
  { interval: 'max', fidelity: 1440 },
];
const FINE: HistoryQuery = { interval: '1w', fidelity: 5 };


export function createHistoryBackfill(opts: HistoryBackfillOptions): HistoryBackfill {
  const concurrency = opts.concurrency ?? 2;
  const paceMs = opts.paceMs ?? 100;
  const retryMs = opts.retryMs ?? 30_000;
  const retryMaxMs = opts.retryMaxMs ?? 600_000;
  const maxAttempts = opts.maxAttempts ?? 8;
  const queue: Array<BackfillTarget & { attempt: number }> = [];
  const known = new Set<string>();
  const retryTimers = new Set<NodeJS.Timeout>();
  const stats = { done: 0, failed: 0, retries: 0, points: 0 };
  let running = 0;
  let nextRequestAt = 0;
  let closed = false;
  let idleWaiters: Array<() => void> = [];

  async function paced<T>(fn: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const at = Math.max(now, nextRequestAt);
    nextRequestAt = at + paceMs;
    if (at > now) await sleep(at - now);
    return fn();
  }

  async function fetchAll(tokenId: string): Promise<Fetched[]> {
    let coarse: Fetched = { fidelity: 0, points: [] };
    for (const q of COARSE) {
      coarse = { fidelity: q.fidelity, points: await paced(() => opts.fetchHistory(tokenId, q)) };
      if (coarse.points.length > 0) break;
    }
    if (coarse.points.length === 0) return [];
    const fine = await paced(() => opts.fetchHistory(tokenId, FINE));
    return [coarse, { fidelity: FINE.fidelity, points: fine }];
  }

  function settleIdle() {
    if (running === 0 && queue.length === 0 && retryTimers.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  async function runOne(item: BackfillTarget & { attempt: number }): Promise<void> {
    try {
      const fetched = await fetchAll(item.tokenId);
      if (fetched.length > 0) await opts.store(item, fetched);
      stats.done++;
      stats.points += fetched.reduce((n, f) => n + f.points.length, 0);
    } catch (err) {
      const attempt = item.attempt + 1;
      if (attempt >= maxAttempts || closed) {
        stats.failed++;
        known.delete(item.tokenId);
        opts.logger.warn({ err: String(err), tokenId: item.tokenId, attempt }, 'history backfill gave up; the next start tries again');
        return;
      }
      stats.retries++;
      const delay = Math.min(retryMaxMs, retryMs * 2 ** (attempt - 1));
      opts.logger.debug({ err: String(err), tokenId: item.tokenId, attempt, delay }, 'history backfill failed; retrying later');
      const timer = setTimeout(() => {
        retryTimers.delete(timer);
        if (closed) return settleIdle();
        queue.push({ ...item, attempt });
        pump();
      }, delay);
      timer.unref();
      retryTimers.add(timer);
    }
  }

  function pump() {
    while (!closed && running < concurrency && queue.length > 0) {
      const item = queue.shift() as BackfillTarget & { attempt: number };
      running++;
      void runOne(item).finally(() => {
        running--;
        pump();
        settleIdle();
      });
    }
    settleIdle();
  }

  return {
    enqueue(target) {
      if (closed || known.has(target.tokenId)) return;
      known.add(target.tokenId);
      queue.push({ ...target, attempt: 0 });
      pump();
    },
    idle() {
      if (running === 0 && queue.length === 0 && retryTimers.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    async close() {
      closed = true;
      queue.length = 0;
      for (const t of retryTimers) clearTimeout(t);
      retryTimers.clear();
      // Requests in flight finish on their own (each has a deadline); their points are still stored.
      while (running > 0) await sleep(20);
      settleIdle();
    },
    stats: () => ({ ...stats, queued: queue.length }),
  };
}
