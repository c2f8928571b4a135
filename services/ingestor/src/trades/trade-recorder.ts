import type { Db } from '@pm/shared/db';
import type { Logger } from '@pm/shared/logger';
import { recordTrades, type SeriesTrade, type StoredTrade } from '@pm/shared/trades';
import { createCoalescedWrite } from '../common/coalesced-write.js';
import { createSeriesCache } from '../history/history-db.js';

/**
 * The trade tape's recorder (docs/design.md "Trades"): every print the match feed delivers is held, then
 * written in batches (shared/src/trades/write.ts records each exactly once, whoever else writes it).
 * A batch goes out `flushMs` after its first print (default 1 s): long enough to pack a busy token's
 * prints into one row, short enough that the tape trails the feed by about a second. A failed write
 * keeps its prints and is retried; only prints this writer actually added are reported on
 * (`onRecorded`: the stream), so a repeat or a second ingestor's copy is never streamed twice.
 */

export interface TradeRecorderOptions {
  db: Db;
  logger: Logger;
  /** After each batch commits: the prints it added (not the repeats), with their tokens. */
  onRecorded?: (trades: ReadonlyArray<{ tokenId: string; series: number; trade: StoredTrade }>) => void;
  /** Between a batch's first print and its write (ms); default 1,000. */
  flushMs?: number;
  /** Prints held while Postgres is away; past it the oldest are dropped (counted). Default 1,000,000. */
  maxPending?: number;
}

export interface TradeRecorderStats {
  /** Prints this writer added to the tape. */
  recorded: number;
  /** Prints already on the tape (a repeat, another ingestor's, a retried write), not added again. */
  repeated: number;
  /** Prints dropped because Postgres was away longer than the pending bound holds. */
  dropped: number;
  pending: number;
  flushes: number;
}

export interface TradeRecorder {
  offer(tokenId: string, trade: StoredTrade): void;
  flush(): Promise<void>;
  close(): Promise<void>;
  stats(): TradeRecorderStats;
}

export function createTradeRecorder(opts: TradeRecorderOptions): TradeRecorder {
  const maxPending = opts.maxPending ?? 1_000_000;
  const series = createSeriesCache(opts.db);
  let pending: Array<{ tokenId: string; trade: StoredTrade }> = [];
  let closed = false;
  const stats = { recorded: 0, repeated: 0, dropped: 0, flushes: 0 };

  async function write(): Promise<void> {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    stats.flushes++;
    try {
      const ids = await series(batch.map((p) => p.tokenId));
      const rows: SeriesTrade[] = batch.map((p) => ({ ...p.trade, series: ids.get(p.tokenId) as number }));
      const added = await recordTrades(opts.db, rows);
      stats.recorded += added.length;
      stats.repeated += batch.length - added.length;
      if (added.length > 0 && opts.onRecorded) {
        const bySeries = new Map<number, string>();
        for (const p of batch) bySeries.set(ids.get(p.tokenId) as number, p.tokenId);
        opts.onRecorded(added.map(({ series: s, ...trade }) => ({ tokenId: bySeries.get(s) as string, series: s, trade })));
      }
    } catch (err) {
      // Back in front, in order: the retry writes them (a part that did commit is found as repeats).
      pending = batch.concat(pending);
      throw err;
    }
  }

  const writer = createCoalescedWrite({
    write,
    delayMs: opts.flushMs ?? 1_000,
    onError: (err) => opts.logger.warn({ err, pending: pending.length }, 'recording trades failed; will retry'),
  });

  return {
    offer(tokenId, trade) {
      if (closed) return;
      pending.push({ tokenId, trade });
      if (pending.length > maxPending + maxPending / 10) {
        const over = pending.length - maxPending;
        pending.splice(0, over);
        stats.dropped += over;
        opts.logger.error({ dropped: over }, 'trade tape writes fell behind; the oldest prints were dropped');
      }
      writer.request();
    },
    async flush() {
      await writer.flush();
    },
    async close() {
      closed = true;
      await writer.flush();
      writer.close();
    },
    stats: () => ({ ...stats, pending: pending.length }),
  };
}
