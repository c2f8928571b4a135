import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createSnapshotTrigger, queuePrefix } from '@pm/shared/queues';
import { CATALOG_RELOAD_ALL, redisKeys } from '@pm/shared/redis';
import { createTestRedis, startOwnRedis, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';

/** The producer side (shared/src/queues/snapshot-trigger.ts), as the ingestor uses it. */
let tr: TestRedis;

beforeAll(async () => {
  tr = await createTestRedis('snapshot_trigger');
});

afterAll(async () => {
  await tr?.cleanup();
});

/** Polls until `ok` holds; fails after 5 s. */
const waitUntil = (ok: () => boolean | Promise<boolean>) => until('the builds', async () => ok(), { timeoutMs: 5_000, everyMs: 10 });

const queueOf = (prefix: string) => new Queue('snapshots', { connection: tr.redis, prefix: queuePrefix(prefix) });

describe('the snapshot trigger', () => {
  it('marks events dirty and makes one job for a burst while no build runs', async () => {
    const trigger = createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix });
    const queue = queueOf(tr.prefix);
    try {
      await Promise.all(Array.from({ length: 200 }, (_, i) => trigger.markEventsDirty([`e${i % 7}`, 'e0'])));
      expect((await tr.redis.smembers(redisKeys(tr.prefix).dirtyEvents)).sort()).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
      expect(await queue.getJobCounts('waiting', 'active', 'delayed')).toMatchObject({ waiting: 1, active: 0, delayed: 0 });
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      await trigger.close();
    }
  });

  it('gives changes that arrive while a build runs exactly one build right after it, without waiting for anything else', async () => {
    // A prefix of its own: this test consumes the queue.
    const prefix = `${tr.prefix}_trailing`;
    const trigger = createSnapshotTrigger({ redis: tr.redis, prefix });
    const queue = queueOf(prefix);
    const worker = new Worker('snapshots', async () => {
      builds.push(await tr.redis.smembers(redisKeys(prefix).dirtyEvents).then((ids) => ids.sort()));
      await tr.redis.del(redisKeys(prefix).dirtyEvents);
      if (builds.length === 1) await firstMayEnd;
    }, { connection: tr.redis.duplicate({ maxRetriesPerRequest: null }), prefix: queuePrefix(prefix), concurrency: 1 });
    const builds: string[][] = [];
    let endFirst!: () => void;
    const firstMayEnd = new Promise<void>((r) => (endFirst = r));
    try {
      await trigger.markEventsDirty(['a']);
      await waitUntil(() => builds.length === 1);
      // The first build has taken its events and is still running: these come "during" it.
      for (const id of ['b', 'c', 'b']) await trigger.markEventsDirty([id]);
      endFirst();
      await waitUntil(() => builds.length === 2);
      await waitUntil(async () => (await queue.getJobCounts('waiting', 'active', 'delayed', 'completed')).completed === 2);
      expect(builds).toEqual([['a'], ['b', 'c']]);
      expect(await queue.getJobCounts('waiting', 'active', 'delayed')).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
    } finally {
      endFirst();
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
      await trigger.close();
    }
  });

  it('bumps the catalog version on a catalog change, marking the events it names for a re-read (all, when it names none)', async () => {
    const trigger = createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix });
    const keys = redisKeys(tr.prefix);
    await tr.redis.del(keys.dirtyEvents, keys.catalogDirtyEvents);
    try {
      const before = Number((await tr.redis.get(keys.catalogVersion)) ?? 0);
      await trigger.markCatalogChanged(['e1', 'e2']);
      expect((await tr.redis.smembers(keys.catalogDirtyEvents)).sort()).toEqual(['e1', 'e2']);
      expect((await tr.redis.smembers(keys.dirtyEvents)).sort()).toEqual(['e1', 'e2']);
      await trigger.markCatalogChanged();
      expect((await tr.redis.smembers(keys.catalogDirtyEvents)).sort()).toEqual([CATALOG_RELOAD_ALL, 'e1', 'e2']);
      expect(Number(await tr.redis.get(keys.catalogVersion))).toBe(before + 2);
    } finally {
      await trigger.close();
    }
  });

  it('lets a call that misses its deadline go through late, and logs it as late, not as dropped', async () => {
    // A Redis of its own whose writes are held for a second (a server busy, not away).
    await using own = await startOwnRedis();
    const redis = new Redis(own.url, { maxRetriesPerRequest: null });
    const pauser = new Redis(own.url);
    const warnings: Array<{ msg: string; fields: Record<string, unknown> }> = [];
    const trigger = createSnapshotTrigger({
      redis,
      prefix: 'late',
      timeoutMs: 200,
      logger: { warn: (fields: Record<string, unknown>, msg?: string) => void warnings.push({ msg: msg ?? '', fields }) },
    });
    try {
      await trigger.markEventsDirty(['warm']); // the trigger's connection and queue are ready
      await pauser.client('PAUSE', 1000, 'WRITE');
      const started = Date.now();
      await trigger.markEventsDirty(['late-event']);
      expect(Date.now() - started).toBeLessThan(900); // the caller did not wait for Redis
      const dirty = redisKeys('late').dirtyEvents;
      await until('the late call to land', async () => (await redis.sismember(dirty, 'late-event')) === 1, { timeoutMs: 5_000, everyMs: 20 });
      await until('the late call to be logged', async () => warnings.some((w) => /late/.test(w.msg)), { timeoutMs: 5_000, everyMs: 20 });
      expect(warnings.filter((w) => /dropped/.test(w.msg))).toEqual([]);
      expect(warnings.find((w) => /late/.test(w.msg))?.fields).toMatchObject({ late: 1, what: 'markEventsDirty' });
    } finally {
      await trigger.close();
      redis.disconnect();
      pauser.disconnect();
    }
  });

  it('fails fast and never throws while Redis is unreachable', async () => {
    // Nothing listens on port 1: every connection attempt is refused.
    const down = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: null, lazyConnect: true });
    down.on('error', () => {});
    const warnings: unknown[] = [];
    const trigger = createSnapshotTrigger({
      redis: down,
      prefix: tr.prefix,
      timeoutMs: 300,
      logger: { warn: (o: unknown) => void warnings.push(o) },
    });
    const started = Date.now();
    await trigger.markEventsDirty(['e1']);
    const first = Date.now() - started;
    const more = Date.now();
    for (let i = 0; i < 50; i += 1) await trigger.markEventsDirty([`e${i}`]);
    await trigger.markCatalogChanged();
    const rest = Date.now() - more;
    const closing = Date.now();
    await trigger.close();
    down.disconnect();
    expect(first).toBeLessThan(1_000);
    // Once the connection is known to be down, calls return at once instead of waiting a deadline each.
    expect(rest).toBeLessThan(1_000);
    expect(Date.now() - closing).toBeLessThan(1_000);
    expect(warnings.length).toBeGreaterThanOrEqual(1);
  });
});
