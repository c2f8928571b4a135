import { UnrecoverableError, type Job } from 'bullmq';
import { z } from 'zod';
import type { JobData } from '@pm/shared/queues';
import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import { settlementMessage, type StreamWriter } from '@pm/shared/stream';
import { settleMarket, UnknownMarket, UnresolvedMarket } from './settle-market.js';

const jobDataSchema = z.object({ marketId: z.string().min(1) });

/**
 * The `settle-market` processor. The job names the market; the resolution is read from the
 * database (the ingestor logged it in the transaction that wrote the job's outbox row), so a
 * repeated or reconciled job settles by the recorded truth. Invalid data, an unknown market or a market with
 * no recorded resolution fail without retry (UnrecoverableError): waiting would not fix them, and
 * the failed job stays visible in the failed set. Anything else (a lost connection) is retried
 * with the job's backoff; the transaction makes each attempt all or nothing. The follow-up work
 * (projections, record snapshots) is an outbox row of that same transaction, not an enqueue here.
 */
export function createSettleMarketProcessor(deps: { db: Db; logger: Logger; now?: () => Date; stream?: StreamWriter }) {
  const now = deps.now ?? (() => new Date());
  return async (job: Job<JobData['settle-market'], unknown, 'settle-market'>): Promise<void> => {
    const parsed = jobDataSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid settle-market data: ${parsed.error.issues[0]?.message ?? 'unknown'}`);
    const { marketId } = parsed.data;
    let settled;
    try {
      settled = await settleMarket(deps.db, marketId, now());
    } catch (err) {
      if (err instanceof UnknownMarket || err instanceof UnresolvedMarket) throw new UnrecoverableError(err.message);
      throw err;
    }
    deps.logger.info({ marketId, calls: settled.calls, legs: settled.legs, combos: settled.combos.length }, 'market settled');
    // The event stream hears of a settlement once: the run that settled the market or anything on it.
    if (settled.first || settled.calls.won + settled.calls.lost + settled.calls.void + settled.legs > 0) deps.stream?.append(settlementMessage(settled, Date.now()));
  };
}
