import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { queuePrefix, queues, type JobData, type JobName, type QueueName } from '@pm/shared/queues';
import type { Logger } from '@pm/shared/logger';
import { duplicateRedis } from '@pm/shared/redis';
import { withDeadline } from '@pm/shared/wait';

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
export type ConsumedQueue = 'snapshots' | 'records' | 'settlement' | 'projections' | 'history' | 'archive';

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
  /** The workers taking jobs now (a stalled one is replaced, see `StallGuard`). */
  readonly workers: Worker[];
  /** Stop taking jobs and wait for the running ones to finish. */
  close(): Promise<void>;
}

/**
 * A BullMQ Worker can stop taking jobs without an error: after a Redis Cluster master failed over, the
 * failover e2e saw settlement jobs wait for minutes while both workers' fetch loops stayed parked (a
 * known class of BullMQ/ioredis reconnection bugs). The guard counts the queue's waiting jobs every
 * `everyMs`; a worker with nothing running that took no job through `idleChecks` checks in a row while
 * jobs waited is closed and replaced by a new one on a connection of its own.
 */
export interface StallGuard {
  /** Default 10 s. */
  everyMs?: number;
  /** Default 3: a stall is noticed after 20-30 s. */
  idleChecks?: number;
  /** Called with the queue's name when a worker was replaced (a metric). */
  onReplaced?: (queue: string) => void;
}

/** A count that takes longer than this says nothing (Redis failing over): the check is skipped. */
const GUARD_COUNT_TIMEOUT_MS = 2_000;
/** Closing a stalled worker may never finish: the replacement does not wait longer than this. */
const GUARD_CLOSE_TIMEOUT_MS = 5_000;

/**
 * Start one BullMQ Worker per consumed queue, watched by a stall guard.
 * @param connection a connection with `maxRetriesPerRequest: null` (BullMQ's rule for workers); shared
 *   by the workers, not closed by them (a replacement's connection of its own is).
 * @param onWorker called with every worker started, the replacements included (metrics).
 */
export function startQueueWorkers<Q extends QueueName>(opts: {
  registry: ProcessorRegistry<Q>;
  consume: ReadonlyArray<ConsumeSpec<Q>>;
  connection: Redis;
  prefix: string;
  logger: Logger;
  onWorker?: (worker: Worker) => void;
  guard?: StallGuard | false;
}): QueueWorkers {
  const missing = missingProcessors(
    opts.registry,
    opts.consume.map((c) => c.queue),
  );
  if (missing.length > 0) throw new Error(`refusing to start: no processor for ${missing.join(', ')}`);

  interface Slot {
    queue: Q;
    concurrency: number;
    worker: Worker;
    /** The replacement's own connection (the first worker shares `opts.connection`). */
    own?: Redis;
    running: number;
    /** Jobs taken since the last check. */
    taken: number;
    idleChecks: number;
    log: Logger;
  }

  function startWorker(queue: Q, concurrency: number, connection: Redis, slot?: Slot): Worker {
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
      { connection, prefix: queuePrefix(opts.prefix), concurrency },
    );
    const log = opts.logger.child({ queue });
    worker.on('failed', (job, err) => log.error({ err, jobId: job?.id, job: job?.name }, 'job failed'));
    worker.on('error', (err) => log.error({ err }, 'queue worker error'));
    if (slot) watch(slot, worker);
    opts.onWorker?.(worker);
    return worker;
  }

  function watch(slot: Slot, worker: Worker): void {
    worker.on('active', () => {
      if (slot.worker !== worker) return;
      slot.running++;
      slot.taken++;
    });
    const done = () => {
      if (slot.worker === worker) slot.running = Math.max(0, slot.running - 1);
    };
    worker.on('completed', done);
    worker.on('failed', done);
  }

  const slots: Slot[] = opts.consume.map(({ queue, concurrency }) => {
    const slot = { queue, concurrency, running: 0, taken: 0, idleChecks: 0, log: opts.logger.child({ queue }) } as Slot;
    slot.worker = startWorker(queue, concurrency, opts.connection, slot);
    return slot;
  });

  const guard = opts.guard === false ? undefined : (opts.guard ?? {});
  const counters = guard ? new Map(slots.map((s) => [s.queue, new Queue(s.queue, { connection: opts.connection, prefix: queuePrefix(opts.prefix) })])) : new Map<Q, Queue>();
  for (const q of counters.values()) q.on('error', () => {});
  let checking = false;
  let closing = false;

  async function check(slot: Slot): Promise<void> {
    const taken = slot.taken;
    slot.taken = 0;
    if (slot.running > 0 || taken > 0) {
      slot.idleChecks = 0;
      return;
    }
    const counts = await withDeadline(counters.get(slot.queue)!.getJobCounts('wait', 'prioritized'), GUARD_COUNT_TIMEOUT_MS, 'counting waiting jobs').catch(() => undefined);
    const waiting = counts === undefined ? 0 : (counts.wait ?? 0) + (counts.prioritized ?? 0);
    if (waiting === 0 || slot.running > 0 || slot.taken > 0) {
      slot.idleChecks = 0;
      return;
    }
    if (++slot.idleChecks < (guard?.idleChecks ?? 3)) return;
    slot.idleChecks = 0;
    slot.log.warn({ waiting }, 'queue worker took no job while jobs waited: replaced by a new one on a connection of its own');
    const old = { worker: slot.worker, own: slot.own };
    slot.own = duplicateRedis(opts.connection, { maxRetriesPerRequest: null });
    slot.running = 0;
    slot.worker = startWorker(slot.queue, slot.concurrency, slot.own, slot);
    guard?.onReplaced?.(slot.queue);
    void withDeadline(old.worker.close(true), GUARD_CLOSE_TIMEOUT_MS, 'closing a stalled worker')
      .catch(() => {})
      .finally(() => old.own?.disconnect());
  }

  const timer = guard
    ? setInterval(() => {
        if (checking || closing) return;
        checking = true;
        void Promise.all(slots.map((slot) => check(slot).catch((err: unknown) => slot.log.warn({ err }, 'stall check failed')))).finally(() => (checking = false));
      }, guard.everyMs ?? 10_000)
    : undefined;
  timer?.unref();

  return {
    get workers() {
      return slots.map((s) => s.worker);
    },
    async close() {
      closing = true;
      clearInterval(timer);
      await Promise.all(slots.map((s) => s.worker.close()));
      for (const s of slots) s.own?.disconnect();
      await Promise.all([...counters.values()].map((q) => q.close()));
    },
  };
}
