import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { queuePrefix } from '@pm/shared/queues';
import { createDb, sql, type Db } from '@pm/shared/db';
import { createLogger } from '@pm/shared/logger';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import type { ExportDayResult } from '@pm/shared/archive/write';
import { startQueueWorkers, type QueueWorkers } from '../jobs.js';
import { createArchiveDayProcessor, createArchivePlanProcessor, planArchive, scheduleArchivePlan } from './archive-job.js';
import { D, DAY, simulateDay } from './archive-fixture.js';

/**
 * The archive's jobs on real BullMQ queues with two workers (each its own Redis connection and
 * Postgres pool) and the plan scheduled by both: every closed day the service holds is written,
 * each (day, dataset) exactly once, and nothing is planned for a day that has not closed.
 */
const logger = createLogger('archive-job-test', { LOG_LEVEL: 'silent' });

let tdb: TestDatabase;
let tr: TestRedis;
let dir: string;
beforeAll(async () => {
  tdb = await createTestDatabase('archive_job');
  tr = await createTestRedis('archive_job');
  dir = await mkdtemp(path.join(tmpdir(), 'archive-job-'));
  await simulateDay(tdb.db);
});
afterAll(async () => {
  await tr?.cleanup();
  await tdb?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the archive jobs', () => {
  it('plans only closed days: the day the clock is in, and a day the rollup has not passed, wait', async () => {
    // The day before D holds a call; D is closed at D + 1 day + the margin, once the rollup passed it.
    expect((await planArchive(tdb.db, D + 86_400 + 60)).map((p) => p.day)).not.toContain(DAY);
    const later = await planArchive(tdb.db, D + 86_400 + 3 * 3600);
    expect(new Set(later.map((p) => p.day))).toEqual(new Set(['2026-11-29', DAY]));
    expect(new Set(later.map((p) => p.dataset))).toEqual(new Set(['candles', 'trades', 'markets', 'calls', 'combos']));
  });

  it('two workers write every closed day once', async () => {
    const clock = { now: () => (D + 86_400 + 3 * 3600) * 1000 };
    const written: ExportDayResult[] = [];
    let plans = 0;
    const started: Array<{ workers: QueueWorkers; db: Db; connection: Redis }> = [];
    try {
      for (let i = 0; i < 2; i++) {
        const db = createDb(tdb.url, { poolSize: 3 });
        const connection = new Redis(tr.url, { maxRetriesPerRequest: null });
        const plan = createArchivePlanProcessor({ db, connection, prefix: tr.prefix, logger, clock });
        const workers = startQueueWorkers({
          registry: {
            archive: {
              'archive-plan': async () => {
                const added = await plan();
                plans++;
                return added;
              },
              'archive-day': createArchiveDayProcessor({ db, dir, logger, onWritten: (r) => r.outcome === 'written' && written.push(r) }),
            },
          },
          consume: [{ queue: 'archive', concurrency: 1 }],
          connection,
          prefix: tr.prefix,
          logger,
          guard: false,
        });
        started.push({ workers, db, connection });
        await scheduleArchivePlan(connection, tr.prefix, 500);
      }
      const listed = async () => ((await tdb.db.query(sql`select count(*)::int as n from archive_files`)) as Array<{ n: number }>)[0]?.n ?? 0;
      await until('both closed days written', async () => (await listed()) === 2 * 5 * 2, { timeoutMs: 60_000 });
      // Plans keep running every 500 ms: three more rounds had their chance to add anything twice.
      const seen = plans;
      await until('three more plans ran', async () => plans >= seen + 3, { timeoutMs: 10_000 });
      const queue = new Queue('archive', { connection: started[0]!.connection, prefix: queuePrefix(tr.prefix) });
      try {
        // Nothing left but the scheduler's next plan (one delayed job).
        await until('no archive-day job waiting or running', async () => {
          const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
          return Object.values(counts).every((n) => n === 0) || (counts['delayed'] === 1 && counts['wait'] === 0 && counts['active'] === 0);
        }, { timeoutMs: 10_000 });
      } finally {
        await queue.close();
      }
      expect(await listed()).toBe(20);
      expect(written.map((r) => `${r.day}/${r.dataset}`).sort()).toEqual(
        ['2026-11-29', DAY].flatMap((d) => ['calls', 'candles', 'combos', 'markets', 'trades'].map((s) => `${d}/${s}`)).sort(),
      );
      for (const d of ['2026-11-29', DAY]) expect((await readdir(path.join(dir, d))).length).toBe(10);
    } finally {
      for (const s of started) {
        await s.workers.close();
        s.connection.disconnect();
        await s.db.dispose();
      }
    }
  });
});
