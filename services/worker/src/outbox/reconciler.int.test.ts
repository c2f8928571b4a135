import { beforeEach, describe, expect, it } from 'vitest';
import { Queue, Worker } from 'bullmq';
import { createLogger } from '@pm/shared/logger';
import { queuePrefix, settleJobId } from '@pm/shared/queues';
import { writeOutbox } from '@pm/shared/outbox';
import { sql } from '@pm/shared/db';
import { createRecordsTrigger, projectionUsersDirtyKey, type RecordsTrigger } from '@pm/shared/records';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { useFreshStores } from '../testing/stores.js';
import { createWorkerMetrics } from '../ops.js';
import { insertMarkets, logResolution, setChance } from '../settlement/test-fixture.js';
import { createReconciler, type Reconciler } from './reconciler.js';

/**
 * The reconciler re-derives lost work from Postgres: a resolved market with open calls and no job
 * gets one (a failed one is retried), people whose record is older than their last change are
 * re-projected, missing snapshot families are rebuilt, a lost Redis makes one projection rebuild;
 * and the worker's metrics show the backlog and the pending settlements.
 */
const logger = createLogger('reconciler-test', { LOG_LEVEL: 'silent' });
let tdb: TestDatabase;
let tr: TestRedisPrefix;
let trigger: RecordsTrigger;
let settlement: Queue;
let projections: Queue;
let reconciler: Reconciler;
let rebuilt: { markets: number; records: number };
let repairs: Record<string, number>;

/** The database (emptied before each test), a Redis prefix per test, and `each`: its queues and reconciler. */
const stores = useFreshStores('reconciler');

// Each test: the two markets and nothing else in Postgres, a new (empty) Redis prefix, its own counts.
beforeEach(async () => {
  ({ tdb, tr } = stores);
  const { each } = stores;
  await insertMarkets(tdb.db, ['rc1', 'rc2']);
  trigger = each.adopt(createRecordsTrigger({ redis: tr.redis, prefix: tr.prefix }), (t) => t.close());
  settlement = each.adopt(new Queue('settlement', { connection: tr.redis, prefix: queuePrefix(tr.prefix) }), (q) => q.close());
  projections = each.adopt(new Queue('projections', { connection: tr.redis, prefix: queuePrefix(tr.prefix) }), (q) => q.close());
  rebuilt = { markets: 0, records: 0 };
  repairs = {};
  reconciler = createReconciler({
    db: tdb.db,
    redis: tr.redis,
    connection: tr.redis,
    prefix: tr.prefix,
    records: trigger,
    rebuildMarketSnapshots: async () => void rebuilt.markets++,
    rebuildRecordSnapshots: async () => void rebuilt.records++,
    logger,
    onRepair: (kind, n) => (repairs[kind] = (repairs[kind] ?? 0) + n),
  });
  each.defer(() => reconciler.stop());
});

async function aCall(marketId: string): Promise<number> {
  const users: Array<{ id: number }> = await tdb.db.query(sql`
    insert into users (handle, display_name) values (${`u${marketId}`}, 'U') on conflict do nothing returning id
  `);
  await setChance(tr.redis, tr.prefix, marketId, 0, '0.5');
  await tdb.db.query(sql`
    insert into calls (id, user_id, market_id, outcome_index, chance_at_call) values (${`c-${marketId}`}, ${users[0]!.id}, ${marketId}, 0, 0.5)
  `);
  return users[0]!.id;
}

describe('the reconciler', () => {
  it('on a new Redis: one projection rebuild, and the missing snapshot families rebuilt', async () => {
    const first = await reconciler.pass();
    expect(first).toMatchObject({ projection: 1, snapshot: 2 });
    expect(rebuilt).toEqual({ markets: 1, records: 1 });
    expect((await projections.getJobs(['waiting', 'delayed'])).map((j) => j.name)).toContain('rebuild-all');
    // Redis still holds its epoch: the next pass rebuilds no projection.
    expect((await reconciler.pass()).projection).toBe(0);
  });

  it('gives a resolved market with open calls and no job its settle job, and retries a failed one', async () => {
    await aCall('rc1');
    await logResolution(tdb.db, 'rc1', 0); // its outbox row is never relayed here: the job is "lost"
    expect((await reconciler.pass()).settle).toBe(1);
    expect((await settlement.getJob(settleJobId('rc1')))?.data).toEqual({ marketId: 'rc1' });
    // A job present and waiting is left alone.
    expect((await reconciler.pass()).settle).toBe(0);
    // A job that failed for good (here after one attempt) is retried.
    await (await settlement.getJob(settleJobId('rc1')))?.remove();
    await settlement.add('settle-market', { marketId: 'rc1' }, { jobId: settleJobId('rc1'), attempts: 1 });
    const connection = tr.redis.duplicate({ maxRetriesPerRequest: null });
    const failing = new Worker(
      'settlement',
      async () => {
        throw new Error('postgres away');
      },
      { connection, prefix: queuePrefix(tr.prefix) },
    );
    await until('the job to fail', async () => (await settlement.getJobState(settleJobId('rc1'))) === 'failed', { timeoutMs: 20_000, everyMs: 50 });
    await failing.close();
    connection.disconnect();
    expect((await reconciler.pass()).settle).toBe(1);
    expect(await settlement.getJobState(settleJobId('rc1'))).toBe('waiting');
  });

  it('re-projects people whose record is older than their last change', async () => {
    await reconciler.pass(); // this Redis takes its epoch: no "lost Redis" rebuild in the counts below
    const userId = await aCall('rc2');
    // The change was announced 20 s ago (its job is long gone), and the record predates it.
    await writeOutbox(tdb.db, 'records-changed', { userIds: [userId], marketIds: ['rc2'], dirty: [] });
    await tdb.db.query(sql`update outbox set created_at = now() - interval '20 seconds', sent_at = now() where payload -> 'userIds' @> ${JSON.stringify([userId])}::jsonb`);
    await tdb.db.query(sql`insert into user_records (user_id, updated_at) values (${userId}, now() - interval '1 hour')`);
    await tr.redis.del(projectionUsersDirtyKey(tr.prefix));
    expect((await reconciler.pass()).projection).toBe(1);
    expect(await tr.redis.smembers(projectionUsersDirtyKey(tr.prefix))).toEqual([String(userId)]);
    // Once the record is newer than the change, nothing more is asked.
    await tdb.db.query(sql`update user_records set updated_at = now() where user_id = ${userId}`);
    expect((await reconciler.pass()).projection).toBe(0);
  });

  it('leaves alone a person projected after the relay delivered the change, however soon after it', async () => {
    await reconciler.pass(); // this Redis takes its epoch
    const userId = await aCall('rc2');
    await writeOutbox(tdb.db, 'records-changed', { userIds: [userId], marketIds: ['rc2'], dirty: [] });
    // The usual case: delivered 50 ms after the change, projected 200 ms after it (before, the rule
    // "5 s after the change" counted every such person as lost work and projected them again).
    // Every time is set from one instant: statements a few tens of ms apart on a loaded machine
    // would otherwise move the times compared here past each other.
    const t0 = Date.now();
    const ago = (seconds: number) => new Date(t0 - seconds * 1000);
    await tdb.db.query(sql`
      update outbox set created_at = ${ago(20)}, sent_at = ${ago(19.95)}
      where payload -> 'userIds' @> ${JSON.stringify([userId])}::jsonb`);
    await tdb.db.query(sql`insert into user_records (user_id, updated_at) values (${userId}, ${ago(19.8)})`);
    await tr.redis.del(projectionUsersDirtyKey(tr.prefix));
    const counted = repairs.projection ?? 0;
    expect((await reconciler.pass()).projection).toBe(0);
    expect(repairs.projection ?? 0).toBe(counted); // no repair reported
    expect(await tr.redis.smembers(projectionUsersDirtyKey(tr.prefix))).toEqual([]);
    // A record projected before the relay read the change (its job then lost) is re-projected.
    await tdb.db.query(sql`update user_records set updated_at = ${ago(19.97)} where user_id = ${userId}`);
    expect((await reconciler.pass()).projection).toBe(1);
  });

  it('leaves a settlement projected by its own job alone, and re-projects one whose job died before projecting', async () => {
    const users: Array<{ id: number }> = await tdb.db.query(sql`
      insert into users (handle, display_name) values ('uset1', 'U'), ('uset2', 'U') returning id`);
    const [projected, died] = users.map((u) => u.id) as [number, number];
    // Both settlements were written 20 s ago, 2 s into their transaction (a big settlement is long).
    const writtenAt = new Date(Date.now() - 18_000);
    for (const userId of [projected, died]) {
      await writeOutbox(tdb.db, 'market-settled', { marketId: `m-${userId}`, userIds: [userId], projected: true, writtenAt: writtenAt.toISOString() });
    }
    await tdb.db.query(sql`update outbox set created_at = now() - interval '20 seconds', sent_at = now() where topic = 'market-settled' and payload ->> 'marketId' in (${`m-${projected}`}, ${`m-${died}`})`);
    // One job projected right after its commit (well within the old 5 s slack); the other died first:
    // the record is from a projection that ran while the settlement's transaction was still open.
    await tdb.db.query(sql`insert into user_records (user_id, updated_at) values (${projected}, ${new Date(writtenAt.getTime() + 50)}), (${died}, ${new Date(writtenAt.getTime() - 500)})`);
    await tr.redis.del(projectionUsersDirtyKey(tr.prefix));
    await reconciler.pass();
    const asked = await tr.redis.smembers(projectionUsersDirtyKey(tr.prefix));
    expect(asked).toContain(String(died));
    expect(asked).not.toContain(String(projected));
  });

  it('asks no projection for a settlement projected in its own transaction', async () => {
    const [user] = (await tdb.db.query(sql`insert into users (handle, display_name) values ('uset3', 'U') returning id`)) as [{ id: number }];
    await writeOutbox(tdb.db, 'market-settled', { marketId: `m-${user.id}`, userIds: [user.id], projectedInTx: true });
    await tdb.db.query(sql`update outbox set created_at = now() - interval '20 seconds', sent_at = now() where topic = 'market-settled' and payload ->> 'marketId' = ${`m-${user.id}`}`);
    // Even a record that looks older than the row: the row's transaction wrote it.
    await tdb.db.query(sql`insert into user_records (user_id, updated_at) values (${user.id}, now() - interval '1 hour')`);
    await tr.redis.del(projectionUsersDirtyKey(tr.prefix));
    await reconciler.pass();
    expect(await tr.redis.smembers(projectionUsersDirtyKey(tr.prefix))).not.toContain(String(user.id));
  });

  it('shows the outbox backlog, pending settlements and repairs in the worker metrics', async () => {
    await aCall('rc1');
    await aCall('rc2');
    await logResolution(tdb.db, 'rc1', 0); // never relayed: a lost settle job, which the pass repairs
    expect((await reconciler.pass()).settle).toBe(1);
    await writeOutbox(tdb.db, 'events-changed', { eventIds: ['ev-fixture'] });
    const metrics = createWorkerMetrics({ db: tdb.db, redis: tr.redis, redisPrefix: tr.prefix });
    try {
      for (const [kind, n] of Object.entries(repairs)) metrics.metrics.metric.reconcilerRepairs.inc({ kind }, n);
      const { body } = await metrics.metrics.scrape();
      const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(body)?.[1]);
      expect(value('outbox_backlog')).toBeGreaterThanOrEqual(2); // rc1's resolution and this row, never relayed
      expect(value('outbox_oldest_unsent_age_seconds')).toBeGreaterThan(0);
      expect(value('settlement_pending_markets')).toBe(1); // rc1 (rc2 is not resolved)
      expect(value('settlement_oldest_pending_age_seconds')).toBeGreaterThan(0);
      expect(body).toMatch(/^reconciler_repairs_total\{kind="settle",service="worker"\} 1$/m);
    } finally {
      await metrics.close();
    }
  });

  it('keeps idempotency keys at least 30 days: a pass prunes only those past the retention', async () => {
    const users: Array<{ id: number }> = await tdb.db.query(sql`insert into users (handle, display_name) values ('keyed', 'K') returning id`);
    for (const [key, days] of [['fresh', 0], ['month', 31], ['old', 36]] as const) {
      await tdb.db.query(sql`
        insert into write_keys (user_id, key, kind, request, result, made_at)
        values (${users[0]!.id}, ${key}, 'call', '{}', '{}', now() - ${`${days} days`}::interval)
      `);
    }
    await reconciler.pass();
    const kept: Array<{ key: string }> = await tdb.db.query(sql`select key from write_keys order by key`);
    expect(kept.map((k) => k.key)).toEqual(['fresh', 'month']);
  });
});
