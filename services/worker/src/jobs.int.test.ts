import { afterEach, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { createLogger } from '@pm/shared/logger';
import { queuePrefix } from '@pm/shared/queues';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { startQueueWorkers, type QueueWorkers } from './jobs.js';

/**
 * The stall guard, on real BullMQ queues: a worker that stops taking jobs while jobs wait is replaced
 * and the jobs run; a worker busy with a long job while others wait is left alone.
 */
const logger = createLogger('jobs-test', { LOG_LEVEL: 'silent' });

let tr: TestRedis | undefined;
let workers: QueueWorkers | undefined;
let queue: Queue | undefined;

afterEach(async () => {
  await workers?.close();
  await queue?.close();
  await tr?.cleanup();
  workers = undefined;
  queue = undefined;
  tr = undefined;
});

async function start(processor: (marketId: string) => Promise<void>, replaced: string[]) {
  tr = await createTestRedis('jobs_guard');
  queue = new Queue('settlement', { connection: tr.redis, prefix: queuePrefix(tr.prefix) });
  workers = startQueueWorkers({
    registry: { settlement: { 'settle-market': async (job) => processor(job.data.marketId) } },
    consume: [{ queue: 'settlement', concurrency: 1 }],
    connection: tr.redis,
    prefix: tr.prefix,
    logger,
    guard: { everyMs: 150, idleChecks: 3, onReplaced: (q) => replaced.push(q) },
  });
  return { queue, workers };
}

describe('the stall guard', () => {
  it('replaces a worker that takes no job while jobs wait, and the waiting jobs run', async () => {
    const done: string[] = [];
    const replaced: string[] = [];
    const { queue, workers } = await start(async (id) => void done.push(id), replaced);
    await queue.add('settle-market', { marketId: 'a' });
    await until('the first job run', async () => done.includes('a'), { timeoutMs: 10_000 });

    // A worker that stopped fetching (as after a failover BullMQ did not recover from): paused here.
    const stalled = workers.workers[0]!;
    await stalled.pause(true);
    await queue.addBulk([{ name: 'settle-market', data: { marketId: 'b' } }, { name: 'settle-market', data: { marketId: 'c' } }]);
    await until('the waiting jobs run', async () => done.includes('b') && done.includes('c'), { timeoutMs: 10_000, context: () => `replaced ${replaced.join(',')}` });
    expect(replaced).toEqual(['settlement']);
    expect(workers.workers[0]).not.toBe(stalled);
    expect(done).toEqual(['a', 'b', 'c']);
  });

  it('leaves a worker alone while it runs a long job and others wait', async () => {
    const done: string[] = [];
    const replaced: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { queue, workers } = await start(async (id) => {
      if (id === 'long') await held;
      done.push(id);
    }, replaced);
    const first = workers.workers[0]!;
    await queue.add('settle-market', { marketId: 'long' });
    await until('the long job taken', async () => (await queue.getJobCounts('active')).active === 1, { timeoutMs: 10_000 });
    await queue.addBulk([{ name: 'settle-market', data: { marketId: 'x' } }, { name: 'settle-market', data: { marketId: 'y' } }]);
    // Ten checks' worth of a busy worker with jobs waiting (more than the three a stall takes): proving
    // that nothing happens needs the time to pass.
    const since = Date.now();
    await until('ten guard periods with the jobs still waiting', async () => Date.now() - since >= 1_500, { timeoutMs: 10_000, everyMs: 100 });
    expect((await queue.getJobCounts('wait')).wait).toBe(2);
    release();
    await until('every job run', async () => done.length === 3, { timeoutMs: 10_000 });
    expect(replaced).toEqual([]);
    expect(workers.workers[0]).toBe(first);
    expect(done).toEqual(['long', 'x', 'y']);
  });
});
