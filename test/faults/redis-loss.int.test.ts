import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createLogger } from '@pm/shared/logger';
import { parseConfig } from '@pm/shared/config';
import { queuePrefix, type QueueName } from '@pm/shared/queues';
import { sql } from '@pm/shared/db';
import { createRecords, type Records } from '@pm/shared/records';
import { createTestDatabase, type TestDatabase } from '@pm/shared/testing';
import { createWorker, type WorkerService } from '../../services/worker/src/worker.js';
import { insertMarkets, logResolution } from '../../services/worker/src/settlement/test-fixture.js';
import { startOwnRedis, type OwnRedis } from '../support/own-servers.js';
import { callOn, listedCallsRight, PEOPLE, projectionsRight, secondsUntil, settledCalls } from './fault-fixture.js';

/**
 * Fault suite: Redis loses everything — FLUSHALL, then a restart without persistence —
 * while settlement, projection and snapshot jobs are queued. Nothing is typed by hand afterwards:
 * the outbox and the reconciler re-derive the work from Postgres. Each case prints what it measured.
 * Redis is a redis-server of this file's own; Postgres is a test database of its own.
 */
const logger = createLogger('fault-redis', { LOG_LEVEL: 'silent' });
const PREFIX = 'fault';
const QUEUES: QueueName[] = ['settlement', 'projections', 'snapshots', 'records'];
let tdb: TestDatabase;
let own: OwnRedis;
let redis: Redis;
let records: Records;
let worker: WorkerService;
const repairs = { settle: 0, projection: 0, snapshot: 0 };

/** Everything this file starts, stopped newest first after it. */
const teardown = new AsyncDisposableStack();
afterAll(() => teardown.disposeAsync());

beforeAll(async () => {
  tdb = teardown.use(await createTestDatabase('fault_redis'));
  own = teardown.use(await startOwnRedis());
  redis = teardown.adopt(new Redis(own.url, { maxRetriesPerRequest: null }), (r) => r.disconnect());
  redis.on('error', () => {}); // the restart case drops it on purpose
  await insertMarkets(tdb.db, ['f1', 'f2', 'f3', 'fo', 'r1', 'r2', 'r3', 'ro']);
  records = teardown.adopt(createRecords({ db: tdb.db, redis, prefix: PREFIX }), (r) => r.close());
  for (const handle of PEOPLE) await records.createUser({ handle, displayName: handle });
  worker = createWorker({
    config: parseConfig({ REDIS_PREFIX: PREFIX, PUBLIC_WEB_URL: 'https://predict.example', SNAPSHOT_INTERVAL_MS: '250' }),
    db: tdb.db,
    redis,
    logger,
    databaseUrl: tdb.url,
    onRepair: (kind, n) => (repairs[kind] += n),
  });
  await worker.start();
  teardown.defer(() => worker.stop());
});


async function queuedJobs(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of QUEUES) {
    const q = new Queue(name, { connection: redis, prefix: queuePrefix(PREFIX) });
    const counts = await q.getJobCounts('waiting', 'delayed', 'prioritized');
    out[name] = Object.values(counts).reduce((a, b) => a + b, 0);
    await q.close();
  }
  return out;
}

async function pauseQueues(): Promise<void> {
  for (const name of QUEUES) {
    const q = new Queue(name, { connection: redis, prefix: queuePrefix(PREFIX) });
    await q.pause();
    await q.close();
  }
}

/**
 * Calls on three markets and one open market, the normal path settles nothing yet; then the queues
 * are paused (so the jobs stay queued), the three markets resolve and a new call is made; once the
 * relay has queued that work, `fault` loses Redis. Measures until everything is right again.
 */
async function survives(label: string, markets: [string, string, string], open: string, fault: () => Promise<void>): Promise<void> {
  const calls = await callOn(records, redis, PREFIX, markets, 12);
  const before = { ...repairs };
  // The data before the fault: projections and market list snapshots built by the normal path.
  await secondsUntil(
    async () => (await projectionsRight(tdb.db)).right === PEOPLE.length && (await listedCallsRight(tdb.db, redis, PREFIX, calls)) === calls.length,
    60_000,
    async () => JSON.stringify(await projectionsRight(tdb.db)),
  );
  await pauseQueues();
  for (const m of markets) await logResolution(tdb.db, m, 0);
  const late = await callOn(records, redis, PREFIX, [open], 2);
  let queued: Record<string, number> = {};
  await secondsUntil(
    async () => {
      const unsent: Array<{ n: number }> = await tdb.db.query(sql`select count(*)::int as n from outbox where sent_at is null`);
      queued = await queuedJobs();
      return unsent[0]!.n === 0 && (queued['settlement'] ?? 0) >= 3 && (queued['projections'] ?? 0) >= 1 && (queued['records'] ?? 0) >= 1;
    },
    30_000,
    async () => JSON.stringify(queued),
  );

  await fault();
  const all = [...calls, ...late];
  const seconds = await secondsUntil(
    async () => {
      const s = await settledCalls(tdb.db, markets);
      const p = await projectionsRight(tdb.db);
      return s.settled === s.expected && p.right === p.people && (await listedCallsRight(tdb.db, redis, PREFIX, all)) === all.length;
    },
    120_000,
    async () => JSON.stringify({ settled: await settledCalls(tdb.db, markets), projections: await projectionsRight(tdb.db), snapshots: await listedCallsRight(tdb.db, redis, PREFIX, all) }),
  );
  const settled = await settledCalls(tdb.db, markets);
  const snapshots = await listedCallsRight(tdb.db, redis, PREFIX, all);
  const projections = await projectionsRight(tdb.db);
  const made = Object.fromEntries(Object.entries(repairs).map(([k, v]) => [k, v - before[k as keyof typeof repairs]]));
  console.log(
    `[fault] ${label} with jobs queued (${Object.entries(queued).map(([q, n]) => `${q} ${n}`).join(', ')}): ` +
      `calls settled ${settled.settled} of ${settled.expected} (markets settled twice: ${settled.settledTwice}); ` +
      `calls right in their market list snapshots ${snapshots} of ${all.length}; projections right for ${projections.right} of ${projections.people} people; ` +
      `recovered in ${seconds.toFixed(1)} s; reconciler repairs ${JSON.stringify(made)}`,
  );
  expect(settled).toEqual({ expected: 36, settled: 36, settledTwice: 0 });
  expect(snapshots).toBe(all.length);
  expect(projections.right).toBe(projections.people);
}

describe('Redis loses everything while work is queued', () => {
  it('FLUSHALL: every call settles once, projections and snapshots come back, no hand needed', async () => {
    await survives('Redis FLUSHALL', ['f1', 'f2', 'f3'], 'fo', () => own.flushAll());
  }, 240_000);

  it('a restart without persistence: the same', async () => {
    await survives('Redis restart', ['r1', 'r2', 'r3'], 'ro', () => own.restart());
  }, 240_000);
});
