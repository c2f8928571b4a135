import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queuePrefix, settleJobId, type JobData } from '@pm/shared/queues';
import { redisKeyBase, redisKeys } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import { sql, type Db } from '@pm/shared/db';
import { WRITE_KEYS_KEEP, type RecordsTrigger } from '@pm/shared/records';
import { marketsPendingSettlement } from '../settlement/settle-market.js';
import { SETTLE_JOB_OPTIONS } from './relay.js';

/**
 * The reconciler (docs/design.md "Storage and the change channel"): at start and every `everyMs`
 * (≤ 30 s) it re-derives from Postgres the work Redis may have lost — a FLUSHALL, a restart without
 * persistence, a failover, a job that failed for good — so no hand is needed afterwards:
 *
 * - settle: resolved markets not yet settled (`markets_settlement_pending`, a small indexed set)
 *   whose `settle-<marketId>` job is missing or failed get it added or retried;
 * - projection: when Redis lost its state (the epoch key below is gone), every projection is rebuilt
 *   once (`rebuild-all`, which also rebuilds every record snapshot); and, every pass, people named in
 *   the last minutes' outbox rows whose user_records row is older than that row are re-projected;
 * - snapshot: a missing market list or latest-calls snapshot makes a full rebuild of that family.
 *
 * Every job it adds is idempotent, so a repair that was not needed costs work, never correctness.
 * Each pass reads indexed sets whose size follows recent activity, not the size of the data.
 * It also prunes outbox rows sent more than a day ago, and idempotency keys past their retention
 * (WRITE_KEYS_KEEP, 35 days: a key answers its retries for at least the 30 days promised).
 */

export type RepairKind = 'settle' | 'projection' | 'snapshot';

export interface ReconcilerDeps {
  db: Db;
  /** The service's Redis (probes) and BullMQ's connection (maxRetriesPerRequest: null). */
  redis: Redis;
  connection: Redis;
  prefix: string;
  records: Pick<RecordsTrigger, 'projectionStale'>;
  /** Full rebuilds of the market snapshots and of the record snapshots, in this process. */
  rebuildMarketSnapshots(): Promise<unknown>;
  rebuildRecordSnapshots(): Promise<unknown>;
  logger: Logger;
  /** Counted per repair (the worker's `reconciler_repairs_total{kind}`). */
  onRepair?: (kind: RepairKind, n: number) => void;
  /** Period of the passes. Default 15 s. */
  everyMs?: number;
  /** How far back outbox rows are compared with the projections. Default 15 minutes. */
  lookBackMs?: number;
  clock?: () => number;
}

export interface PassResult {
  settle: number;
  projection: number;
  snapshot: number;
}

export interface Reconciler {
  /** Run a pass now, then every `everyMs`. */
  start(): void;
  stop(): Promise<void>;
  /** One pass (tests; a running pass is waited for instead of overlapped). */
  pass(): Promise<PassResult>;
}

/** Pending markets looked at per pass; the rest wait for the next pass. */
const SETTLE_PER_PASS = 1000;
/** An outbox row this young is still the relay's and the projection job's to handle. */
const PROJECTION_GRACE_MS = 10_000;
/** A projection that started this soon after a change's transaction may not have seen it commit. */
const PROJECTION_SLACK = '5 seconds';
const OUTBOX_KEEP = '1 day';

/** Set (NX) by the reconciler's first pass on a Redis; its absence later means Redis lost everything. */
export const reconcilerEpochKey = (prefix: string) => `${redisKeyBase(prefix)}:reconciler:epoch`;

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const everyMs = deps.everyMs ?? 15_000;
  const lookBackMs = deps.lookBackMs ?? 15 * 60_000;
  const clock = deps.clock ?? (() => Date.now());
  const log = deps.logger.child({ part: 'reconciler' });
  const keys = redisKeys(deps.prefix);
  const epochKey = reconcilerEpochKey(deps.prefix);
  const settlement = new Queue<JobData['settle-market'], unknown, 'settle-market'>('settlement', { connection: deps.connection, prefix: queuePrefix(deps.prefix) });
  const projections = new Queue<JobData['rebuild-all'], unknown, 'rebuild-all'>('projections', { connection: deps.connection, prefix: queuePrefix(deps.prefix) });
  settlement.on('error', (err) => log.warn({ err: err.message }, 'settlement queue error'));
  projections.on('error', (err) => log.warn({ err: err.message }, 'projections queue error'));

  async function settle(): Promise<number> {
    let repaired = 0;
    for (const id of await marketsPendingSettlement(deps.db, SETTLE_PER_PASS)) {
      const job = await settlement.getJob(settleJobId(id));
      const state = job === undefined ? 'missing' : await job.getState();
      if (job !== undefined && state === 'failed') {
        await job.retry('failed');
      } else if (job === undefined || state === 'completed' || state === 'unknown') {
        // Missing, or completed without the market being settled (a job of an earlier resolution
        // of a replayed database): its id would block a new add, so it goes first.
        if (job !== undefined) await job.remove().catch(() => {});
        await settlement.add('settle-market', { marketId: id }, { jobId: settleJobId(id), ...SETTLE_JOB_OPTIONS });
      } else {
        continue; // waiting, delayed or running: it will settle the market
      }
      repaired++;
    }
    return repaired;
  }

  async function redisLost(): Promise<boolean> {
    return (await deps.redis.set(epochKey, String(clock()), 'NX')) === 'OK';
  }

  async function projectionsAfterLoss(epoch: number): Promise<number> {
    // One rebuild per lost Redis (the id names the new epoch; several workers may race to set it, only one wins NX).
    await projections.add('rebuild-all', {}, { jobId: `rebuild-all-reconcile-${epoch}`, attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: 10, removeOnFail: 100 });
    return 1;
  }

  async function staleProjections(): Promise<number> {
    const now = clock();
    // Input: the look-back window. Output: people named by recent outbox rows (old enough for the
    // relay and the job to have run) whose record was last projected before that row's change,
    // or never. Reads outbox_created's range and user_records by primary key.
    const rows: Array<{ user_id: number }> = await deps.db.query(sql`
      select distinct u.id::bigint as user_id
      from outbox o
      cross join lateral jsonb_array_elements_text(coalesce(o.payload -> 'userIds', '[]'::jsonb)) as u(id)
      left join user_records r on r.user_id = u.id::bigint
      where o.created_at > ${new Date(now - lookBackMs)} and o.created_at < ${new Date(now - PROJECTION_GRACE_MS)}
        and o.topic in ('records-changed', 'market-settled')
        -- A settlement projected in its own transaction owes no projection.
        and coalesce(o.payload ->> 'projectedInTx', 'false') <> 'true'
        and (r.user_id is null or r.updated_at < case
          -- A settlement (of an earlier worker) whose job projected its people after the commit:
          -- that projection starts after the row was written, the statement before the commit, so a
          -- record projected since then saw it. Without the slack every settlement was projected a
          -- second time here, 10-25 s later, for nothing.
          when o.payload ->> 'projected' = 'true' and o.payload ->> 'writtenAt' ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T'
            then (o.payload ->> 'writtenAt')::timestamptz
          -- Delivered: sent_at is when the relay read the row, after the change committed and before
          -- the projection it asked for started. Compared with created_at + slack instead, every
          -- change projected within 5 s (all of them) was projected again here and counted as a
          -- repair: a healthy stack reported lost work every pass.
          when o.sent_at is not null then o.sent_at
          else o.created_at + ${PROJECTION_SLACK}::interval end)
        and exists (select 1 from users where id = u.id::bigint)
        and u.id ~ '^[0-9]{1,18}$'
    `);
    if (rows.length === 0) return 0;
    await deps.records.projectionStale({ userIds: rows.map((r) => r.user_id) });
    return rows.length;
  }

  async function snapshots(): Promise<number> {
    const [markets, calls] = await Promise.all([deps.redis.exists(keys.snapshot('markets:trending')), deps.redis.exists(keys.snapshot('calls:latest'))]);
    let repaired = 0;
    if (markets === 0) {
      await deps.rebuildMarketSnapshots();
      repaired++;
    }
    if (calls === 0) {
      await deps.rebuildRecordSnapshots();
      repaired++;
    }
    return repaired;
  }

  async function prune(): Promise<void> {
    // Input: the retention. Output: none; up to 10,000 rows sent and older than it are deleted.
    await deps.db.query(sql`
      delete from outbox where id in (
        select id from outbox where created_at < now() - ${OUTBOX_KEEP}::interval and sent_at is not null limit 10000
      )
    `);
    // Input: the keys' retention. Output: none; up to 10,000 idempotency keys older than it are deleted
    // (a retry of a write that old is answered as a new write would be).
    await deps.db.query(sql`
      delete from write_keys where (user_id, key) in (
        select user_id, key from write_keys where made_at < now() - ${WRITE_KEYS_KEEP}::interval limit 10000
      )
    `);
  }

  async function runPass(): Promise<PassResult> {
    const result: PassResult = { settle: 0, projection: 0, snapshot: 0 };
    const epoch = clock();
    const lost = await redisLost();
    result.settle = await settle();
    if (lost) result.projection += await projectionsAfterLoss(epoch);
    result.projection += await staleProjections();
    result.snapshot = await snapshots();
    await prune();
    for (const kind of ['settle', 'projection', 'snapshot'] as const) if (result[kind] > 0) deps.onRepair?.(kind, result[kind]);
    if (result.settle + result.projection + result.snapshot > 0) log.info({ ...result, redisLost: lost }, 'reconciler repaired lost work');
    return result;
  }

  let running: Promise<PassResult> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;

  function pass(): Promise<PassResult> {
    running ??= runPass().finally(() => {
      running = undefined;
    });
    return running;
  }

  function passLogged(): void {
    pass().then(
      () => {
        failing = false;
      },
      (err: unknown) => {
        if (!failing) log.warn({ err: err instanceof Error ? err.message : String(err) }, 'reconciler pass failed; next pass retries');
        failing = true;
      },
    );
  }

  return {
    start() {
      if (timer) return;
      passLogged();
      timer = setInterval(passLogged, everyMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running?.catch(() => {});
      await Promise.all([settlement.close(), projections.close()]);
    },
    pass,
  };
}
