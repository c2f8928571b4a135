import type { Redis } from 'ioredis';
import type { Logger } from '@pm/shared/logger';
import type { RedisKeys } from '@pm/shared/redis';
import type { Db } from '@pm/shared/db';
import type { Clock } from '../common/clock.js';
import { createCoalescedWrite } from '../common/coalesced-write.js';
import { createHistoryBackfill, type HistoryBackfill, type HistoryBackfillStats } from './history-backfill.js';
import type { FetchHistory } from './history-client.js';
import { createSeriesCache, insertPoints, storeFetched, tokensWithoutPast } from './history-db.js';

/**
 * Price history recording (docs/design.md "The flow" 3), for the FIRST outcome's token of each market
 * only: a history point describes the chance of the market's first outcome (docs/api.md "History
 * point"), so the other outcomes' points would never be read — recording and backfilling only
 * these halves the work on binary markets.
 *
 * Live points go to the raw table (an integer series per token, Unix seconds); the worker's rollup
 * makes candles of them (docs/history.md).
 *
 * Live points: the chance publisher reports every move (`offer`); a token gets a point when its
 * chance or its book top (best bid, best ask: the candles' bid and ask) differs from its last
 * recorded point, and otherwise one a minute (so a quiet market still has a point per minute and
 * its chart reaches to now). Within one flush window (default 5 s) the latest of a token wins: at
 * most one point per token per window. Each flush is one
 * multi-row insert, then the markets whose history changed are added to `dirtyHistory` for the
 * worker's throttled history snapshots.
 *
 * First sight: a token the recorder has not seen in this process is checked against the table
 * before its first live point is written; one without a past is queued for a backfill
 * (history-backfill.ts), which never blocks the feed.
 */

/** What a point records of a token: its displayed chance and the book top it came from (null: that side empty). */
export interface Top {
  chance: number;
  bid: number | null;
  ask: number | null;
}

/** The decision for one token at one instant (pure; unit-tested). A move of the chance or of either side of the top is a move. */
export function pointDue(last: (Top & { at: number }) | undefined, top: Top, now: number, minuteMs = 60_000): 'first' | 'move' | 'minute' | null {
  if (last === undefined) return 'first';
  if (top.chance !== last.chance || top.bid !== last.bid || top.ask !== last.ask) return 'move';
  if (now - last.at >= minuteMs) return 'minute';
  return null;
}

export interface HistoryRecorderOptions {
  db: Db;
  redis: Redis;
  keys: Pick<RedisKeys, 'dirtyHistory' | 'backfilledHistory'>;
  fetchHistory: FetchHistory;
  clock: Clock;
  logger: Logger;
  /** The market of a token when it is an OPEN market's first outcome; undefined otherwise. */
  firstOutcomeMarket: (tokenId: string) => string | undefined;
  /** Between flushes (ms); default 5 s. */
  flushMs?: number;
  /** A point at least this often per token while its market is open; default 60 s. */
  minuteMs?: number;
  backfill?: { concurrency?: number; paceMs?: number; retryMs?: number; retryMaxMs?: number; maxAttempts?: number };
}

export interface HistoryRecorderStats {
  points: number;
  flushes: number;
  tracked: number;
  backfill: HistoryBackfillStats;
}

export interface HistoryRecorder {
  /** A token's displayed chance or its book top moved (called by the chance publisher). Ignores tokens that are not first outcomes. */
  offer(tokenId: string, chance: number, top?: { bid: number | null; ask: number | null }): void;
  /** Write what is due now (also runs every `flushMs`). */
  flush(): Promise<void>;
  /** Resolves once queued backfills are done (tests). */
  backfillIdle(): Promise<void>;
  close(): Promise<void>;
  stats(): HistoryRecorderStats;
}

/** How old a point must be to show a token's past was already fetched (see tokensWithoutPast). */
const PAST_MS = 3_600_000;

export function createHistoryRecorder(opts: HistoryRecorderOptions): HistoryRecorder {
  const flushMs = opts.flushMs ?? 5_000;
  const minuteMs = opts.minuteMs ?? 60_000;
  /** Token → its market, latest chance and book top. */
  const current = new Map<string, Top & { marketId: string }>();
  const recorded = new Map<string, Top & { at: number }>();
  /** Tokens seen for the first time, not yet checked for a past. */
  let unchecked = new Set<string>();
  let closed = false;
  const stats = { points: 0, flushes: 0 };
  const series = createSeriesCache(opts.db);

  const backfill: HistoryBackfill = createHistoryBackfill({
    fetchHistory: opts.fetchHistory,
    logger: opts.logger,
    ...opts.backfill,
    store: async (target, fetched) => {
      await storeFetched(opts.db, series, target.tokenId, fetched);
      // A market's past arriving is a one-off: its chart should show it now, not after the throttle.
      await opts.redis.sadd(opts.keys.backfilledHistory, target.marketId);
    },
  });

  async function write(): Promise<void> {
    stats.flushes++;
    const now = opts.clock.now();
    if (unchecked.size > 0) {
      const tokens = [...unchecked];
      unchecked = new Set();
      try {
        for (const tokenId of await tokensWithoutPast(opts.db, tokens, now - PAST_MS)) {
          const marketId = current.get(tokenId)?.marketId;
          if (marketId !== undefined) backfill.enqueue({ tokenId, marketId });
        }
      } catch (err) {
        for (const t of tokens) unchecked.add(t);
        throw err;
      }
    }

    const due: Array<Top & { tokenId: string }> = [];
    const markets = new Set<string>();
    for (const [tokenId, { marketId, ...top }] of current) {
      if (opts.firstOutcomeMarket(tokenId) === undefined) {
        // Closed since (or no longer known): stop recording it.
        current.delete(tokenId);
        recorded.delete(tokenId);
        continue;
      }
      if (pointDue(recorded.get(tokenId), top, now, minuteMs) === null) continue;
      due.push({ tokenId, ...top });
      markets.add(marketId);
    }
    if (due.length === 0) return;
    await insertPoints(opts.db, series, due.map((p) => ({ tokenId: p.tokenId, atMs: now, chance: p.chance, bid: p.bid, ask: p.ask })));
    for (const { tokenId, ...top } of due) recorded.set(tokenId, { at: now, ...top });
    stats.points += due.length;
    await opts.redis.sadd(opts.keys.dirtyHistory, ...markets);
  }

  const writer = createCoalescedWrite({
    write,
    // The chances are still held in memory: the retry writes them.
    onError: (err) => opts.logger.warn({ err }, 'recording price history failed; will retry'),
  });

  /** A pass over every tracked token: points fall due with time alone (one a minute), not only on a move. */
  async function flush(): Promise<void> {
    writer.request();
    await writer.flush();
  }

  const timer = setInterval(() => {
    if (!closed) writer.request();
  }, flushMs);
  timer.unref();

  return {
    offer(tokenId, chance, top) {
      if (closed) return;
      const marketId = opts.firstOutcomeMarket(tokenId);
      if (marketId === undefined) return;
      if (!current.has(tokenId) && !recorded.has(tokenId)) unchecked.add(tokenId);
      current.set(tokenId, { marketId, chance, bid: top?.bid ?? null, ask: top?.ask ?? null });
    },
    flush,
    backfillIdle: () => backfill.idle(),
    async close() {
      closed = true;
      clearInterval(timer);
      await flush();
      writer.close();
      await backfill.close();
    },
    stats: () => ({ ...stats, tracked: current.size, backfill: backfill.stats() }),
  };
}
