import { Queue, type Job, type Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { createServiceMetrics, setTotal, type ServiceMetrics } from '@pm/shared/metrics';
import { queuePrefix, queues, type QueueName } from '@pm/shared/queues';
import { sql, tables, type Db } from '@pm/shared/db';
import { ARCHIVE_FORMATS, dayStart, manifestTotals, newestCompleteDay, presentDatasets } from '@pm/shared/archive';

/**
 * The worker's metrics: jobs this process finished (by queue and outcome) and how long they took,
 * from each BullMQ Worker's own events; queue depth from BullMQ at scrape time; calls and combos
 * settled from Postgres at scrape time, so the count is right whichever process settled them and
 * whatever code path did it.
 */

const QUEUE_STATES = ['waiting', 'active', 'failed', 'delayed'] as const;
const SETTLED = ['won', 'lost', 'void'] as const;

export interface WorkerMetrics {
  metrics: ServiceMetrics<'worker'>;
  /** Attach to a BullMQ Worker's completed/failed events. */
  observe(worker: Worker): void;
  /** Close the queue handles used for counting (not the connection). */
  close(): Promise<void>;
}

/**
 * Settled calls and combos by status: six rows that triggers keep current as calls and combos change
 * (migration 0006), not a count of every call per scrape.
 * Inputs: none. Outputs: rows `{kind: 'call'|'combo', status, n}` for every status other than open.
 */
async function settledCounts(db: Db): Promise<Array<{ kind: string; status: string; n: number }>> {
  return tables.settled_counts(db).find().all();
}

/**
 * The change channel's health. Inputs: none. Outputs: one row — unsent outbox rows and the age of
 * the oldest (outbox_unsent), resolved markets with open calls or legs whose settlement has not
 * committed and the age of the oldest (markets_settlement_pending).
 */
async function changeChannelState(db: Db): Promise<Array<{ backlog: number; oldest_unsent_s: number; pending: number; oldest_pending_s: number }>> {
  return (await db.query(sql`
    with unsent as (
      select count(*)::int as backlog, coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as oldest_unsent_s
      from outbox where sent_at is null
    ), pending as (
      select count(*)::int as pending, coalesce(extract(epoch from now() - min(m.resolved_at)), 0)::float8 as oldest_pending_s
      from markets m
      where m.resolved_at is not null and m.settled_at is null
        and (exists (select 1 from calls c where c.market_id = m.id and c.status = 'open')
             or exists (select 1 from combo_legs l where l.market_id = m.id and l.status = 'open'))
    )
    select * from unsent, pending
  `)) as Array<{ backlog: number; oldest_unsent_s: number; pending: number; oldest_pending_s: number }>;
}

export function createWorkerMetrics(opts: { db: Db; redis: Redis; redisPrefix: string }): WorkerMetrics {
  const metrics = createServiceMetrics('worker');
  const m = metrics.metric;
  // Queue handles for counting only; they share the service's connection and never add jobs.
  const handles = (Object.keys(queues) as QueueName[]).map(
    (name) => [name, new Queue(name, { connection: opts.redis, prefix: queuePrefix(opts.redisPrefix) })] as const,
  );

  metrics.beforeScrape('queue_counts', async () => {
    const counts = await Promise.all(handles.map(([, q]) => q.getJobCounts(...QUEUE_STATES)));
    handles.forEach(([queue], i) => {
      for (const state of QUEUE_STATES) m.queueJobs.set({ queue, state }, counts[i]?.[state] ?? 0);
    });
  });

  metrics.beforeScrape('settled', async () => {
    const rows = await settledCounts(opts.db);
    for (const [kind, counter] of [['call', m.callsSettled], ['combo', m.combosSettled]] as const) {
      for (const status of SETTLED) setTotal(counter, { status }, rows.find((r) => r.kind === kind && r.status === status)?.n ?? 0);
    }
  });

  metrics.beforeScrape('change_channel', async () => {
    const row = (await changeChannelState(opts.db))[0];
    m.outboxBacklog.set(row?.backlog ?? 0);
    m.outboxOldestUnsentAge.set(row?.oldest_unsent_s ?? 0);
    m.settlementPendingMarkets.set(row?.pending ?? 0);
    m.settlementOldestPendingAge.set(row?.oldest_pending_s ?? 0);
  });
  for (const kind of ['settle', 'projection', 'snapshot'] as const) m.reconcilerRepairs.inc({ kind }, 0);

  // The archive, from its manifest (a few rows per dataset and format, grouped by the table's key).
  metrics.beforeScrape('archive', async () => {
    const totals = await manifestTotals(opts.db);
    const rows = new Map<string, number>();
    for (const t of totals) {
      m.archiveDays.set({ dataset: t.dataset, format: t.format }, t.days);
      m.archiveBytes.set({ dataset: t.dataset, format: t.format }, t.bytes);
      if (t.format === 'parquet') rows.set(t.dataset, t.rows);
    }
    for (const [dataset, n] of rows) m.archiveRows.set({ dataset }, n);
    const newest = await newestCompleteDay(opts.db, await presentDatasets(opts.db), ARCHIVE_FORMATS.length);
    m.archiveNewestCompleteDay.set(newest === null ? 0 : dayStart(newest));
  });

  const finished = (queue: string, outcome: 'completed' | 'failed', job: Job | undefined) => {
    m.jobs.inc({ queue, outcome });
    if (job?.processedOn !== undefined) {
      const seconds = Math.max(0, ((job.finishedOn ?? Date.now()) - job.processedOn) / 1000);
      m.jobDuration.observe({ queue, outcome }, seconds);
    }
  };

  return {
    metrics,
    observe(worker) {
      worker.on('completed', (job) => finished(worker.name, 'completed', job));
      worker.on('failed', (job) => finished(worker.name, 'failed', job));
    },
    async close() {
      await Promise.all(handles.map(([, q]) => q.close()));
    },
  };
}
