import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Db } from '@pm/shared/db';
import type { Logger } from '@pm/shared/logger';
import { queuePrefix, type JobData } from '@pm/shared/queues';
import { runRollup, runUpkeep } from '@pm/shared/history';
import { runTradesUpkeep } from '@pm/shared/trades';

/**
 * The history tiers' upkeep as a BullMQ job scheduler (one entry in Redis, whichever worker
 * registers it): every minute, raw partitions are made ahead and dropped once past retention and
 * rolled up, expired 1m and 5m candles are deleted, the trade tape's day partitions are made ahead and
 * dropped once wholly past TRADES_RETENTION_DAYS (shared/src/trades/retention.ts), and every closed hour after the progress mark is
 * rolled up (shared/src/history/rollup.ts: one transaction per hour, so several workers, a kill or a
 * day of downtime leave no gap and no double).
 */

export const HISTORY_ROLLUP_EVERY_MS = 60_000;

export async function scheduleHistoryRollup(connection: Redis, prefix: string, everyMs = HISTORY_ROLLUP_EVERY_MS): Promise<void> {
  const queue = new Queue<JobData['history-rollup']>('history', { connection, prefix: queuePrefix(prefix) });
  try {
    await queue.upsertJobScheduler('history-rollup', { every: everyMs }, { name: 'history-rollup', data: {}, opts: { removeOnComplete: 10, removeOnFail: 100 } });
  } finally {
    await queue.close();
  }
}

export function createHistoryRollupProcessor(deps: { db: Db; logger: Logger; clock: { now(): number }; tradesRetentionDays: number }) {
  return async () => {
    const now = Math.floor(deps.clock.now() / 1000);
    const history = await runUpkeep(deps.db, { now });
    const tradeDays = await runTradesUpkeep(deps.db, { nowMs: deps.clock.now(), retentionDays: deps.tradesRetentionDays });
    const upkeep = { ...history, dropped: [...history.dropped, ...tradeDays] };
    const rollup = await runRollup(deps.db, { now });
    if (rollup.slices > 0 || upkeep.dropped.length > 0 || upkeep.expired > 0) deps.logger.info({ ...rollup, ...upkeep }, 'history rolled up');
    return { ...rollup, ...upkeep };
  };
}
