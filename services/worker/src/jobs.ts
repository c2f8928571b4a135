import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { queuePrefix, queues, type JobData, type JobName, type QueueName } from '@pm/shared/queues';
import type { Logger } from '@pm/shared/logger';

/**
 * The job registry: which processor handles each job of each queue this worker consumes.
 *
 * The map is typed from the closed union in shared/src/queues/names.ts, so a consumed queue with a job
 * that has no processor does not compile; `startQueueWorkers` checks again at run time (a cast or a
 * plain-JS caller cannot slip past) and refuses to start rather than fail jobs later.
 */

/** A processor may return a summary: BullMQ keeps it as the job's return value (`npm run rebuild` prints it). */
export type JobProcessor<N extends keyof JobData> = (job: Job<JobData[N], unknown, N>) => Promise<unknown>;

/** Every job name of queue Q → its processor. */
export type QueueProcessors<Q extends QueueName> = {
  readonly [N in JobName<Q>]: N extends keyof JobData ? JobProcessor<N> : never;
};

/** The queues this service consumes. */
export type ConsumedQueue = 'snapshots' | 'records' | 'settlement' | 'projections' | 'history';

export type ProcessorRegistry<Q extends QueueName = ConsumedQueue> = { readonly [K in Q]: QueueProcessors<K> };

export interface ConsumeSpec<Q extends QueueName> {
  queue: Q;
  /** Jobs of this queue processed at once by this process (1 for snapshots: builds must not overlap). */
  concurrency: number;
}

/** `queue/job` names among the consumed queues' jobs that have no processor function. */
export function missingProcessors(registry: object, consume: readonly QueueName[]): string[] {
  const missing: string[] = [];
  for (const queue of consume) {
    const table: unknown = (registry as Partial<Record<QueueName, unknown>>)[queue];
    for (const job of queues[queue].jobs) {
      const processor: unknown = typeof table === 'object' && table !== null ? (table as Record<string, unknown>)[job] : undefined;
      if (typeof processor !== 'function') missing.push(`${queue}/${job}`);
    }
  }
  return missing;
}

export interface QueueWorkers {
  workers: Worker[];
  /** Stop taking jobs and wait for the running ones to finish. */
  close(): Promise<void>;
}

/**
 * Start one BullMQ Worker per consumed queue.
 * @param connection a connection with `maxRetriesPerRequest: null` (BullMQ's rule for workers); shared
 *   by the workers, not closed by them.
 */
export function startQueueWorkers<Q extends QueueName>(opts: {
  registry: ProcessorRegistry<Q>;
  consume: ReadonlyArray<ConsumeSpec<Q>>;
  connection: Redis;
  prefix: string;
  logger: Logger;
}): QueueWorkers {
  const missing = missingProcessors(
    opts.registry,
    opts.consume.map((c) => c.queue),
  );
  if (missing.length > 0) throw new Error(`refusing to start: no processor for ${missing.join(', ')}`);

  const workers = opts.consume.map(({ queue, concurrency }) => {
    // Type-erased view for dispatch by the job's name at run time; the typed registry above is what
    // guarantees every name has a processor of the right data type.
    const table = opts.registry[queue] as unknown as Readonly<Record<string, ((job: Job) => Promise<void>) | undefined>>;
    const worker = new Worker(
      queue,
      async (job: Job) => {
        const processor = table[job.name];
        // A job name outside the union (an old producer): retrying would never help.
        if (processor === undefined) throw new UnrecoverableError(`no processor for ${queue}/${job.name}`);
        await processor(job);
      },
      { connection: opts.connection, prefix: queuePrefix(opts.prefix), concurrency },
    );
    const log = opts.logger.child({ queue });
    worker.on('failed', (job, err) => log.error({ err, jobId: job?.id, job: job?.name }, 'job failed'));
    worker.on('error', (err) => log.error({ err }, 'queue worker error'));
    return worker;
  });

  return {
    workers,
    async close() {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
