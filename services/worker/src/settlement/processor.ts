import { UnrecoverableError, type Job } from 'bullmq';
import { z } from 'zod';
import type { JobData } from '@pm/shared/queues';
import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import { settlementMessage, type StreamWriter } from '@pm/shared/stream';
import type { RecordsDirtyMember, RecordsTrigger } from '@pm/shared/records';
import { withDeadline } from '@pm/shared/wait';
import { tidyRecords, TIDY_RECORDS_AFTER } from '../projections/run.js';
import { settleMarket, UnknownMarket, UnresolvedMarket, type SettleOptions } from './settle-market.js';

const jobDataSchema = z.object({ marketId: z.string().min(1) });

export interface SettleMarketDeps {
  db: Db;
  logger: Logger;
  now?: () => Date;
  /** The event stream, told of a settlement once. */
  stream?: StreamWriter;
  /**
   * Where the settlement's record snapshots are requested right after the commit, before the relay
   * gets to the outbox row (which requests the same, and is what covers a job that dies first).
   */
  records?: Pick<RecordsTrigger, 'snapshotsDirty'>;
  /**
   * This process's record snapshot build (builder.ts `build`), started right after the commit
   * instead of after the trigger's coalescing window; the requested job stays the safety net (it
   * finds the dirty set already built and costs the small global lists).
   */
  buildRecords?: () => Promise<unknown>;
  /** How long the follow-ups above are waited for. Default 15 s. */
  followUpDeadlineMs?: number;
  /** A settlement that moved this many people's records vacuums them after its commit. Default TIDY_RECORDS_AFTER. */
  tidyAfter?: number;
  /** The parts a market settles in (settle-market.ts); defaults there. */
  parts?: SettleOptions;
}

/**
 * The `settle-market` processor. The job names the market; the resolution is read from the
 * database (the ingestor logged it in the transaction that wrote the job's outbox row), so a
 * repeated or reconciled job settles by the recorded truth. Invalid data, an unknown market or a market with
 * no recorded resolution fail without retry (UnrecoverableError): waiting would not fix them, and
 * the failed job stays visible in the failed set. Anything else (a lost connection) is retried
 * with the job's backoff; each part's transaction is all or nothing, and a retry goes on from the
 * parts that committed (settle-market.ts). The follow-up work (record snapshots of the calls, the
 * market and the combos) is an outbox row of the parts' transactions, not an enqueue here.
 *
 * The people's records and the boards are projected inside each part's transaction
 * (settle-market.ts). Right after the last commit the job requests the snapshots and starts this
 * process's build, instead of waiting for the relay, its coalescing window and a queue (what
 * remains between a 10,000-call settlement's commit and every page showing it is that build and
 * the pages' own reads: docs/benchmarks.md, bench:settle). A worker that dies after the commit loses nothing:
 * the relay turns the outbox row into the same snapshot requests. A retry requests them again (the
 * settlement itself is then a no-op).
 */
export function createSettleMarketProcessor(deps: SettleMarketDeps) {
  const now = deps.now ?? (() => new Date());
  return async (job: Job<JobData['settle-market'], unknown, 'settle-market'>): Promise<void> => {
    const parsed = jobDataSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`invalid settle-market data: ${parsed.error.issues[0]?.message ?? 'unknown'}`);
    const { marketId } = parsed.data;
    let settled;
    try {
      settled = await settleMarket(deps.db, marketId, now(), deps.parts);
    } catch (err) {
      if (err instanceof UnknownMarket || err instanceof UnresolvedMarket) throw new UnrecoverableError(err.message);
      throw err;
    }
    deps.logger.info({ marketId, calls: settled.calls, legs: settled.legs, combos: settled.combos.length, parts: settled.parts, recomputed: settled.recomputed, ms: settled.ms }, 'market settled');
    // Beside the follow-ups below, on a connection of its own: the pages read right after a big
    // settlement count ranks over the records it just rewrote (projections/run.ts tidyRecords).
    const tidied = settled.userIds.length >= (deps.tidyAfter ?? TIDY_RECORDS_AFTER) ? tidy(deps, marketId) : Promise.resolve();
    // The event stream hears of a settlement once, with its totals: from the run whose last part
    // finished the market (settle-market.ts), whichever runs settled the parts before it.
    if (settled.totals !== null) deps.stream?.append(settlementMessage({ ...settled, ...settled.totals }, Date.now()));
    const changed = settled.first || settled.legs > 0 || Object.values(settled.calls).some((n) => n > 0);
    if (!deps.records || !(changed || job.attemptsMade > 0)) return tidied;
    // The market names its settled calls: its build remakes the objects of those its lists show (a
    // member per call made a 10,000-call settlement's build look up 10,000 ids for nothing).
    const members: RecordsDirtyMember[] = [`market:${marketId}`, 'leaderboard', ...(settled.legs > 0 ? (['combos'] as const) : [])];
    const records = deps.records;
    const followUps = (async () => {
      await records.snapshotsDirty(members);
      await deps.buildRecords?.();
    })();
    // The follow-ups only hurry what the outbox row asks for anyway: a Redis that does not answer (a
    // command parked across a cluster failover) must not hold this settlement's slot, or every later
    // market's settlement waits behind it.
    const deadlineMs = deps.followUpDeadlineMs ?? FOLLOW_UP_DEADLINE_MS;
    try {
      await withDeadline(followUps, deadlineMs, 'settlement follow-ups');
    } catch (err) {
      deps.logger.warn({ marketId, err }, 'settlement follow-ups unfinished; the outbox relay requests them again');
    }
    await tidied;
  };
}

/** tidyRecords, timed and logged; never the job's failure (the settlement has committed; autovacuum does the same later). */
async function tidy(deps: Pick<SettleMarketDeps, 'db' | 'logger'>, marketId: string): Promise<void> {
  const started = performance.now();
  try {
    await tidyRecords(deps.db);
    deps.logger.debug({ marketId, ms: Math.round(performance.now() - started) }, 'records vacuumed after a settlement');
  } catch (err) {
    deps.logger.warn({ marketId, err }, 'records not vacuumed after a settlement');
  }
}

/** How long a settlement waits for its record snapshots before leaving them to the outbox relay. */
const FOLLOW_UP_DEADLINE_MS = 15_000;
