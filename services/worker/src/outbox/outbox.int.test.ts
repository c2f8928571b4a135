import { beforeEach, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createLogger } from '@pm/shared/logger';
import { createSnapshotTrigger, queuePrefix, settleJobId, type SnapshotTrigger } from '@pm/shared/queues';
import { writeOutbox } from '@pm/shared/outbox';
import { redisKeys } from '@pm/shared/redis';
import { sql } from '@pm/shared/db';
import { createRecordsTrigger, projectionUsersDirtyKey, recordsDirtyKey, type RecordsTrigger } from '@pm/shared/records';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { useFreshStores } from '../testing/stores.js';
import { createOutboxRelay, type OutboxRelayDeps } from './relay.js';

/**
 * The relay: outbox rows become jobs exactly as the rows say, several relays at once each send a
 * row once, a commit wakes a relay without waiting for its poll, and a Redis that does not answer
 * leaves the rows unsent for the next pass.
 */
const logger = createLogger('outbox-test', { LOG_LEVEL: 'silent' });
let tdb: TestDatabase;
let tr: TestRedisPrefix;
let records: RecordsTrigger;
let snapshots: SnapshotTrigger;
let settlement: Queue;

/** One database for the file, emptied before each test; a Redis prefix per test; `each` stopped after it. */
const stores = useFreshStores('outbox_relay');

// Each test starts from an empty outbox and a Redis prefix of its own, so none counts another's rows or jobs.
beforeEach(() => {
  ({ tdb, tr } = stores);
  const { each } = stores;
  records = each.adopt(createRecordsTrigger({ redis: tr.redis, prefix: tr.prefix }), (t) => t.close());
  snapshots = each.adopt(createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix }), (t) => t.close());
  settlement = each.adopt(new Queue('settlement', { connection: tr.redis, prefix: queuePrefix(tr.prefix) }), (q) => q.close());
});

const relayDeps = (over: Partial<OutboxRelayDeps> = {}): OutboxRelayDeps => ({
  db: tdb.db,
  connection: tr.redis,
  prefix: tr.prefix,
  records,
  snapshots,
  logger,
  ...over,
});

const unsent = async () => ((await tdb.db.query(sql`select count(*)::int as n from outbox where sent_at is null`)) as Array<{ n: number }>)[0]!.n;

describe('the outbox relay', () => {
  it('turns each topic into its jobs and marks the rows sent', async () => {
    await tdb.db.tx(async (tx) => {
      await writeOutbox(tx, 'market-resolved', { marketId: 'mk1', eventId: 'ev1' });
      // 'user:7' as earlier versions wrote it (a row from before the upgrade): forwarded as the row says.
      await writeOutbox(tx, 'records-changed', { userIds: [7], marketIds: ['mk2'], dirty: ['call:c1', 'user:7'] });
      await writeOutbox(tx, 'market-settled', { marketId: 'mk3', userIds: [8], callIds: ['c2'], combos: true });
      await writeOutbox(tx, 'events-changed', { eventIds: ['ev2'] });
    });
    const relay = createOutboxRelay(relayDeps());
    try {
      expect(await relay.drain()).toBe(4);
    } finally {
      await relay.stop();
    }
    expect(await unsent()).toBe(0);
    expect((await settlement.getJob(settleJobId('mk1')))?.data).toEqual({ marketId: 'mk1' });
    expect((await tr.redis.smembers(projectionUsersDirtyKey(tr.prefix))).sort()).toEqual(['7', '8']);
    expect((await tr.redis.smembers(recordsDirtyKey(tr.prefix))).sort()).toEqual(['call:c1', 'combos', 'market:mk3', 'user:7'].sort());
    expect((await tr.redis.smembers(redisKeys(tr.prefix).dirtyEvents)).sort()).toEqual(['ev1', 'ev2']);
  });

  it('asks only the snapshots of a settlement projected in its own transaction (none per person), never its projection', async () => {
    await tr.redis.del(projectionUsersDirtyKey(tr.prefix), recordsDirtyKey(tr.prefix));
    await writeOutbox(tdb.db, 'market-settled', { marketId: 'mk4', userIds: [9, 10], callIds: ['c3'], combos: false, projectedInTx: true });
    const relay = createOutboxRelay(relayDeps());
    try {
      expect(await relay.drain()).toBe(1);
    } finally {
      await relay.stop();
    }
    expect(await tr.redis.smembers(projectionUsersDirtyKey(tr.prefix))).toEqual([]);
    // A person's record and lists are read from Postgres by the API: no `user:<id>` for the people settled.
    expect((await tr.redis.smembers(recordsDirtyKey(tr.prefix))).sort()).toEqual(['leaderboard', 'market:mk4'].sort());
  });

  it('with three relays draining at once, every row is sent by exactly one of them', async () => {
    const markets = Array.from({ length: 300 }, (_, i) => `race${i}`);
    for (const m of markets) await writeOutbox(tdb.db, 'market-resolved', { marketId: m, eventId: 'ev-race' });
    const relays = [0, 1, 2].map(() => createOutboxRelay(relayDeps({ batch: 20 })));
    try {
      const sent = await Promise.all(relays.map((r) => r.drain()));
      console.log(`[outbox] three relays sent ${sent.join(' + ')} = ${sent.reduce((a, b) => a + b, 0)} of ${markets.length} rows`);
      expect(sent.reduce((a, b) => a + b, 0)).toBe(markets.length);
    } finally {
      await Promise.all(relays.map((r) => r.stop()));
    }
    expect(await unsent()).toBe(0);
    const jobs = await settlement.getJobs(['waiting', 'prioritized', 'delayed']);
    const ids = jobs.map((j) => j.id).filter((id) => id?.startsWith('settle-race'));
    expect(new Set(ids).size).toBe(markets.length);
    expect(ids).toHaveLength(markets.length);
  });

  it('a commit wakes a listening relay without waiting for its poll', async () => {
    const relay = createOutboxRelay(relayDeps({ databaseUrl: tdb.url, pollMs: 120_000 }));
    relay.start();
    try {
      // The listener is up once it drained what was there (it drains after LISTEN succeeds).
      await tdb.db.tx((tx) => writeOutbox(tx, 'market-resolved', { marketId: 'woken', eventId: 'ev-w' }));
      const started = Date.now();
      await until('the relay to wake on the notification', () => settlement.getJob(settleJobId('woken')), { timeoutMs: 20_000, everyMs: 20 });
      console.log(`[outbox] a committed row became a job after ${Date.now() - started} ms (poll period 120 s)`);
    } finally {
      await relay.stop();
    }
  });

  it('leaves the rows unsent while Redis does not answer, and sends them once it does', async () => {
    await writeOutbox(tdb.db, 'market-resolved', { marketId: 'later', eventId: 'ev-l' });
    // A connection to a port where nothing listens: every add fails or waits for a Redis that never comes.
    const dead = new Redis('redis://127.0.0.1:1/0', { maxRetriesPerRequest: null, retryStrategy: () => 1000 });
    dead.on('error', () => {});
    const stuck = createOutboxRelay(relayDeps({ connection: dead, deliverTimeoutMs: 500 }));
    try {
      await expect(stuck.drain()).rejects.toThrow();
    } finally {
      await stuck.stop().catch(() => {});
      dead.disconnect();
    }
    expect(await unsent()).toBe(1);
    const relay = createOutboxRelay(relayDeps());
    try {
      expect(await relay.drain()).toBe(1);
    } finally {
      await relay.stop();
    }
    expect(await settlement.getJob(settleJobId('later'))).toBeDefined();
  });
});
