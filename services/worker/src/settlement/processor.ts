import { UnrecoverableError, type Job } from 'bullmq';
import { z } from 'zod';
import type { JobData, Logger } from '@pm/shared';
import type { Db } from '@pm/shared/db';
import type { RecordsTrigger } from '@pm/shared/records';
import { settleMarket, UnknownMarket, UnresolvedMarket } from './settle-market.js';

const jobDataSchema = z.object({
  marketId: z.string().min(1),
  winningOutcomeIndex: z.number().int().min(0).nullable(),
  voided: z.boolean(),
  source: z.enum(['ws', 'catalog']),
});

/**
 * The `settle-market` processor. The job names the market; the resolution is read from the
 * database (the ingestor logged it before enqueueing), so a job built from a stale or repeated
 * message still settles by the recorded truth. Invalid data, an unknown market or a market with
 * no recorded resolution fail without retry (UnrecoverableError): waiting would not fix them, and
 * the failed job stays visible in the failed set. Anything else (a lost connection) is retried
 * with the job's backoff; the transaction makes each attempt all or nothing.
 */
export function createSettleMarketProcessor(deps: { db: Db; trigger: RecordsTrigger; logger: Logger; now?: () => Date }) {
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
    const asked = parsed.data;
    if (asked.voided !== settled.resolution.voided || (!asked.voided && asked.winningOutcomeIndex !== settled.resolution.winningOutcomeIndex)) {
      deps.logger.warn({ marketId, job: asked, recorded: settled.resolution }, 'settle-market: job data differs from the recorded resolution; settled by the record');
    }
    deps.logger.info({ marketId, calls: settled.calls, legs: settled.legs, combos: settled.combos.length }, 'market settled');
    // Also on a repeat that settled nothing: a previous attempt may have committed and then failed
    // before these requests were made. They are idempotent.
    await deps.trigger.projectionStale({ userIds: settled.userIds, marketIds: [] });
    await deps.trigger.snapshotsDirty([
      `market:${marketId}`,
      ...settled.callIds.map((id) => `call:${id}` as const),
      ...(settled.combos.length > 0 || settled.legs > 0 ? (['combos'] as const) : []),
    ]);
  };
}
