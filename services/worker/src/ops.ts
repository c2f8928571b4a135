import { Queue, type Job, type Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { createServiceMetrics, queuePrefix, queues, setTotal, sql, type Db, type QueueName, type ServiceMetrics } from '@pm/shared';

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
 * Settled calls and combos by status.
 * Inputs: none. Outputs: rows `{kind: 'call'|'combo', status, n}` for every status other than open.
 */
async function settledCounts(db: Db): Promise<Array<{ kind: string; status: string; n: number }>> {
  return (await db.query(sql`
    select 'call' as kind, status, count(*)::int as n from calls where status <> 'open' group by status
    union all
    select 'combo' as kind, status, count(*)::int as n from combos where status <> 'open' group by status
  `)) as Array<{ kind: string; status: string; n: number }>;
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
