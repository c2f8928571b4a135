import { UnrecoverableError, type Job } from 'bullmq';
import { z } from 'zod';
import type { JobData } from '@pm/shared/queues';
import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import { settlementMessage, type StreamWriter } from '@pm/shared/stream';
import type { RecordsTrigger } from '@pm/shared/records';
import { projectChanges } from '../projections/run.js';
import { settleMarket, UnknownMarket, UnresolvedMarket } from './settle-market.js';

const jobDataSchema = z.object({ marketId: z.string().min(1) });

export interface SettleMarketDeps {
  db: Db;
  logger: Logger;
  now?: () => Date;
  /** The event stream, told of a settlement once. */
  stream?: StreamWriter;
  /**
   * Where the settled people's record snapshots are requested once the job has projected them.
   * Without it the job leaves the projection to the relay (the outbox row's `project-users`).
   */
  records?: Pick<RecordsTrigger, 'snapshotsDirty'>;
  /**
   * This process's record snapshot build (builder.ts `build`), started as soon as the people are
   * projected instead of after the trigger's coalescing window; the requested job stays the safety
   * net (it finds the dirty set already built and costs the small global lists).
   */
  buildRecords?: () => Promise<unknown>;
}

/**
 * The `settle-market` processor. The job names the market; the resolution is read from the
 * database (the ingestor logged it in the transaction that wrote the job's outbox row), so a
 * repeated or reconciled job settles by the recorded truth. Invalid data, an unknown market or a market with
 * no recorded resolution fail without retry (UnrecoverableError): waiting would not fix them, and
 * the failed job stays visible in the failed set. Anything else (a lost connection) is retried
 * with the job's backoff; the transaction makes each attempt all or nothing. The follow-up work
 * (record snapshots of the calls, the market and the combos) is an outbox row of that same
 * transaction, not an enqueue here.
 *
 * The people's records are projected here, right after the commit, then their snapshots requested:
 * through the relay and a `project-users` job they waited for a second coalescing window and a
 * queue (issue 18: a 10,000-call settlement visible within 2 s). The outbox row says so
 * (`projected`), so the relay does not project them again. A retry projects again (the settlement
 * itself is then a no-op); a worker that dies between the commit and the projection leaves it to
 * the reconciler, which re-projects people named in recent outbox rows whose records are older.
 */
export function createSettleMarketProcessor(deps: SettleMarketDeps) {
  const now = deps.now ?? (() => new Date());
  return async (job: Job<JobData['settle-market'], unknown, 'settle-market'>): Promise<void> => {
    const parsed = jobDataSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid settle-market data: ${parsed.error.issues[0]?.message ?? 'unknown'}`);
    const { marketId } = parsed.data;
    const projects = deps.records !== undefined;
    let settled;
    try {
      settled = await settleMarket(deps.db, marketId, now(), { projectsAfter: projects });
    } catch (err) {
      if (err instanceof UnknownMarket || err instanceof UnresolvedMarket) throw new UnrecoverableError(err.message);
      throw err;
    }
    deps.logger.info({ marketId, calls: settled.calls, legs: settled.legs, combos: settled.combos.length }, 'market settled');
    // The event stream hears of a settlement once: the run that settled the market or anything on it.
    if (settled.first || settled.calls.won + settled.calls.lost + settled.calls.void + settled.legs > 0) deps.stream?.append(settlementMessage(settled, Date.now()));
    const changed = settled.first || settled.legs > 0 || Object.values(settled.calls).some((n) => n > 0);
    if (!deps.records || settled.userIds.length === 0 || !(changed || job.attemptsMade > 0)) return;
    const t0 = performance.now();
    await projectChanges(deps.db, { userIds: settled.userIds, marketIds: [] }, now());
    await deps.records.snapshotsDirty([...settled.userIds.map((id) => `user:${id}` as const), 'leaderboard']);
    deps.logger.debug({ marketId, users: settled.userIds.length, ms: Math.round(performance.now() - t0) }, 'projections updated');
    await deps.buildRecords?.();
  };
}
