import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createLogger } from '@pm/shared/logger';
import { createSnapshotTrigger, type SnapshotTrigger } from '@pm/shared/queues';
import { parseConfig } from '@pm/shared/config';
import { redisKeys, snapshotEtag } from '@pm/shared/redis';
import { sql } from '@pm/shared/db';
import { createRecords } from '@pm/shared/records';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import * as waiting from '@pm/shared/wait';
import { useFreshStores } from './testing/stores.js';
import { createWorker, type WorkerService } from './main.js';
import { reconcilerEpochKey } from './outbox/reconciler.js';
import { rebuildProjections } from './projections/run.js';
import { eventSnapshotSchema, insertFixture, readSnapshot, scanSnapshots, token, WEB_URL } from './market-snapshots/test-fixture.js';

const logger = createLogger('worker-test', { LOG_LEVEL: 'silent' });
let tdb: TestDatabase;
let tr: TestRedisPrefix;

const stores = useFreshStores('worker_service');

// Each test: the fixture catalog alone in Postgres and an empty Redis prefix.
beforeEach(async () => {
  ({ tdb, tr } = stores);
  await insertFixture(tdb.db, tr.redis, tr.prefix);
});

const config = () => parseConfig({ REDIS_PREFIX: tr.prefix, PUBLIC_WEB_URL: WEB_URL, SNAPSHOT_INTERVAL_MS: '250' });

const eventually = <T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 8000) => waiting.eventually(read, ok, { timeoutMs, everyMs: 25 });

/**
 * Calls `seen(n)` just before the n-th command (from 0) goes out on this connection, pipelines
 * included: fault injection on the real connection, at a point of the build rather than a time.
 */
function onEachCommand(redis: Redis, seen: (n: number) => void): void {
  let n = 0;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    seen(n++);
    return send(...args);
  }) as Redis['sendCommand'];
}

/** The commands one full build sends on its connection. */
async function commandsOfOneBuild(): Promise<number> {
  const redis = tr.redis.duplicate();
  const worker = createWorker({ config: config(), db: tdb.db, redis, logger });
  let commands = 0;
  onEachCommand(redis, () => commands++);
  await tr.redis.incr(redisKeys(tr.prefix).catalogVersion);
  await worker.buildAll();
  const total = commands;
  await worker.stop();
  redis.disconnect();
  return total;
}

function assertConsistent(snapshots: Map<string, Record<string, string>>) {
  expect(snapshots.size).toBeGreaterThan(0);
  for (const [name, h] of snapshots) {
    expect(h.body, name).toBeTypeOf('string');
    expect(h.etag, name).toBe(snapshotEtag(h.body ?? ''));
    expect(Number(h.built_at), name).toBeGreaterThan(0);
    expect(() => JSON.parse(h.body ?? '') as unknown, name).not.toThrow();
  }
}

describe('the worker service', () => {
  let worker: WorkerService;
  let trigger: SnapshotTrigger;
  /** `build-snapshots` jobs this worker finished. */
  let builds: number;

  // Each test: a running worker service of its own and the ingestor's trigger.
  beforeEach(async () => {
    builds = 0;
    worker = createWorker({
      config: config(),
      db: tdb.db,
      redis: tr.redis,
      logger,
      onQueueWorker: (w) =>
        w.on('completed', (job) => {
          if (job.name === 'build-snapshots') builds++;
        }),
    });
    await worker.start();
    // The ingestor's side: its own trigger on its own connection.
    trigger = createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix });
  });

  afterEach(async () => {
    await trigger?.close();
    await worker?.stop();
  });

  it('buildAll rebuilds every snapshot of the catalog', async () => {
    // trending, 7 categories, 2 leagues, search and the live list
    expect(await worker.buildAll()).toMatchObject({ events: 3, lists: 12 });
    const e = await readSnapshot(tr.redis, tr.prefix, 'event:ars-che', eventSnapshotSchema);
    expect(e.event.market_count).toBe(5);
  });

  it('a burst of 500 changes in ~100 ms makes a few build jobs, one at a time, and ends on the last chance', async () => {
    const before = builds;
    const chances = redisKeys(tr.prefix).chances;
    const calls: Array<Promise<unknown>> = [];
    const started = Date.now();
    for (let i = 1; i <= 500; i += 1) {
      // One connection keeps the order: the last HSET is the chance the page must end on.
      calls.push(tr.redis.hset(chances, token('m1', 0), (i / 1000).toFixed(3)));
      calls.push(trigger.markEventsDirty(['e-soccer']));
      if (i % 100 === 0) await Promise.all(calls); // spread over five round trips, builds running meanwhile
    }
    await Promise.all(calls);
    const burstMs = Date.now() - started;

    const page = await eventually(
      () => readSnapshot(tr.redis, tr.prefix, 'event:ars-che', eventSnapshotSchema),
      (s) => s.event.markets[0]?.outcomes[0]?.chance === 0.5,
    );
    expect(page.event.markets[0]?.outcomes[0]).toMatchObject({ chance: 0.5, odds: { percent: '50%', decimal: '2.00' } });
    // The page shows before its job ends (pages come first): wait for the jobs to finish.
    await eventually(
      async () => ({ dirty: await tr.redis.scard(redisKeys(tr.prefix).dirtyEvents), builds: builds - before }),
      (n) => n.dirty === 0 && n.builds >= 1,
    );
    expect(burstMs).toBeLessThan(1000);
    // A change during a build makes one more build after it, however many came: far fewer than the changes.
    expect(builds - before).toBeGreaterThanOrEqual(1);
    expect(builds - before).toBeLessThanOrEqual(50);
  });

  it('a change whose build request was lost is built by the sweep', async () => {
    // Mark dirty without requesting a job, as when a Redis blip dropped the trigger's job add.
    await tr.redis.hset(redisKeys(tr.prefix).chances, token('m4', 0), '0.123');
    await tr.redis.sadd(redisKeys(tr.prefix).dirtyEvents, 'e-soccer');
    const page = await eventually(
      () => readSnapshot(tr.redis, tr.prefix, 'event:ars-che', eventSnapshotSchema),
      (s) => s.event.markets[3]?.outcomes[0]?.chance === 0.123,
      5000,
    );
    expect(page.event.markets[3]?.outcomes[0]?.chance).toBe(0.123);
  });

  it('a catalog change reaches the pages through markCatalogChanged', async () => {
    await tdb.db.query(sql`update markets set question = 'Will the House change hands?' where id = 'm20'`);
    await trigger.markCatalogChanged();
    const page = await eventually(
      () => readSnapshot(tr.redis, tr.prefix, 'event:us-election', eventSnapshotSchema),
      (s) => s.event.markets[0]?.question === 'Will the House change hands?',
    );
    expect(page.event.markets[0]?.question).toBe('Will the House change hands?');
  });
});

describe("a call's platform_split", () => {
  it('shows on its event page once projected, with nothing else moving on the event', async () => {
    // Nothing else may rebuild the page meanwhile: projections current and this Redis known to the
    // reconciler (no start-up rebuild-all, which marks every event), no periodic full build, no feed.
    await rebuildProjections(tdb.db, new Date());
    await tr.redis.set(reconcilerEpochKey(tr.prefix), String(Date.now()));
    const worker = createWorker({ config: config(), db: tdb.db, redis: tr.redis, logger, fullBuildEveryMs: 600_000 });
    await worker.start();
    const records = createRecords({ db: tdb.db, redis: tr.redis, prefix: tr.prefix });
    try {
      // The write path wants a live price.
      await tr.redis.hset(redisKeys(tr.prefix).chanceAt, token('m20', 0), String(Date.now()));
      await records.createUser({ handle: 'splitter', displayName: 'Splitter' });
      await records.recordCall({ handle: 'splitter', marketId: 'm20', outcomeIndex: 0, thesis: 'the House flips' });
      const page = await eventually(
        () => readSnapshot(tr.redis, tr.prefix, 'event:us-election', eventSnapshotSchema),
        (s) => s.event.markets[0]?.platform_split[0] === 1,
      );
      expect(page.event.markets[0]?.platform_split).toEqual([1, 0]);
    } finally {
      await records.close();
      await worker.stop();
    }
  });
});

describe('stopping mid-build', () => {
  it('leaves every snapshot whole after a graceful stop during a running job', async () => {
    const worker = createWorker({ config: config(), db: tdb.db, redis: tr.redis, logger });
    await worker.start();
    const trigger = createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix });
    for (let i = 0; i < 20; i += 1) {
      await tr.redis.hset(redisKeys(tr.prefix).chances, token('m20', 0), String(0.3 + i / 100));
      await trigger.markEventsDirty(['e-pol']);
    }
    const building = worker.buildAll(); // and a full build in flight as well
    await worker.stop();
    await building;
    await trigger.close();
    assertConsistent(await scanSnapshots(tr.redis, tr.prefix));
  });

  it('leaves every snapshot whole when its Redis connection drops in the middle of builds', async () => {
    // Enough events that a build takes a while, so the drop lands at varied points of it.
    for (let i = 0; i < 200; i += 1) {
      await tdb.db.query(sql`
        insert into events (id, slug, title, category, volume_24h) values (${`bulk-${i}`}, ${`bulk-${i}`}, ${`Bulk ${i}`}, 'Culture', ${i})
      `);
      await tdb.db.query(sql`
        insert into markets (id, event_id, condition_id, position, question) values (${`bm-${i}`}, ${`bulk-${i}`}, ${`c${i}`}, 0, ${`Bulk question ${i}?`})
      `);
      await tdb.db.query(sql`
        insert into outcomes (market_id, outcome_index, name, token_id, catalog_price) values (${`bm-${i}`}, 0, 'Yes', ${`bt-${i}`}, 0.5)
      `);
    }
    // How many commands a whole build sends, then a drop just before each of several of them.
    const commands = await commandsOfOneBuild();
    let interrupted = 0;
    for (const fraction of [0, 0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1]) {
      const redis: Redis = tr.redis.duplicate();
      redis.on('error', () => {});
      await redis.ping();
      const worker = createWorker({ config: config(), db: tdb.db, redis, logger });
      await tr.redis.incr(redisKeys(tr.prefix).catalogVersion);
      await tr.redis.hset(redisKeys(tr.prefix).chances, token('m1', 0), String(0.1 + fraction / 2));
      const dropAt = Math.round(fraction * commands);
      onEachCommand(redis, (n) => {
        if (n === dropAt) redis.disconnect(); // a crash, as far as Redis can tell
      });
      const interruptedNow = await worker.buildAll().then(
        () => false,
        () => true,
      );
      if (interruptedNow) interrupted += 1;
      await worker.stop();
      assertConsistent(await scanSnapshots(tr.redis, tr.prefix));
    }
    // At least one drop really landed inside a build (at 0 ms it always does).
    expect(interrupted).toBeGreaterThanOrEqual(1);
  });
});
