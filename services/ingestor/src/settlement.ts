import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queuePrefix, settleJobId, type JobData, type Logger } from '@pm/shared';
import { sql, type Db } from '@pm/shared/db';

/**
 * MarketResolved, from either source (the ws `market_resolved` message, or the catalog showing a
 * closed market with final prices): log it in `market_resolutions`, mark the market resolved, and
 * put one `settle-market` job on the settlement queue. The job id is deterministic
 * (`settle-<marketId>`), so both sources and every repeat collapse into one job; the first source
 * to arrive decides the row (on conflict do nothing), and settlement itself is guarded downstream.
 */

export type SettleMarket = JobData['settle-market'];

export interface SettlementOptions {
  db: Db;
  /** A connection BullMQ may use (maxRetriesPerRequest: null). Not closed by `close()`. */
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
  /** Called with the market's event id when the market row changed, so its snapshots rebuild. */
  onEventChanged: (eventId: string) => void;
}

export interface Settlement {
  /** Record a resolution and enqueue its settlement. Unknown markets are ignored (returns false). */
  resolve(resolution: SettleMarket): Promise<boolean>;
  close(): Promise<void>;
}

export function createSettlement(opts: SettlementOptions): Settlement {
  const queue = new Queue<SettleMarket, unknown, 'settle-market'>('settlement', {
    connection: opts.redis,
    prefix: queuePrefix(opts.redisPrefix),
  });
  queue.on('error', (err) => opts.logger.warn({ err }, 'settlement queue error'));
  /** Markets enqueued by this process: repeats from the catalog every sync need no round trip. */
  const enqueued = new Set<string>();

  async function resolve(r: SettleMarket): Promise<boolean> {
    // Already recorded and enqueued by this process: the catalog repeats closed markets every sync.
    if (enqueued.has(r.marketId)) return true;
    // Input: market id, winning outcome index (null when void), voided, source.
    // Output: the market's event id (null for an unknown market) and whether the market row changed.
    // The log row is first-source-wins; the market columns are set once (guarded by resolved_at).
    const rows: Array<{ event_id: string | null; marked: boolean }> = await opts.db.query(sql`
      with known as (
        select id, event_id from markets where id = ${r.marketId}
      ), logged as (
        insert into market_resolutions (market_id, winning_outcome_index, voided, source)
        select id, ${r.winningOutcomeIndex}::integer, ${r.voided}, ${r.source} from known
        on conflict (market_id) do nothing
        returning market_id
      ), marked as (
        update markets
        set closed = true, resolved_outcome_index = ${r.winningOutcomeIndex}::integer,
            voided = ${r.voided}, resolved_at = now(), updated_at = now()
        where id = ${r.marketId} and resolved_at is null
        returning id
      )
      select (select event_id from known) as event_id, exists (select 1 from marked) as marked
    `);
    const row = rows[0];
    if (!row || row.event_id === null) {
      opts.logger.warn({ marketId: r.marketId, source: r.source }, 'resolution for an unknown market ignored');
      return false;
    }
    if (row.marked) opts.onEventChanged(row.event_id);
    await queue.add('settle-market', r, {
      jobId: settleJobId(r.marketId),
      attempts: 5,
      backoff: { type: 'exponential', delay: 1000 },
    });
    enqueued.add(r.marketId);
    opts.logger.info({ marketId: r.marketId, winner: r.winningOutcomeIndex, voided: r.voided, source: r.source }, 'market resolved');
    return true;
  }

  return {
    resolve,
    async close() {
      await queue.close();
    },
  };
}
