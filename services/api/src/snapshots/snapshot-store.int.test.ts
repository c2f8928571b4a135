import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createLogger } from '@pm/shared/logger';
import { queueSnapshotWrites, redisKeys } from '@pm/shared/redis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { writeSnapshot } from '../testing/fixtures.js';
import { createSnapshotStore, type SnapshotStore } from './snapshot-store.js';

/**
 * The snapshots an API process holds are bounded by the bytes of their JSON text as well as by
 * count: a process that reads many large snapshots (a day's histories) keeps the most recently read
 * within its budget, and drops the least recently read first. The periodic check of the held
 * versions finds one written without an announcement, and only that. Real Redis.
 */

let tr: TestRedis;
let store: SnapshotStore;
const schema = z.object({ pad: z.string() });
const BODY = 1_000;

beforeAll(async () => {
  tr = await createTestRedis('snapshot_bytes');
  // Room for about four bodies of 1,000 bytes, and far more than four entries.
  store = createSnapshotStore({ redis: tr.redis, prefix: tr.prefix, clock: Date.now, logger: createLogger('test', { LOG_LEVEL: 'silent' }), maxEntries: 100, maxBytes: 4_500 });
  store.start();
  await store.sync();
});
afterAll(async () => {
  await store?.stop();
  await tr?.cleanup();
});

describe('the snapshots a process holds', () => {
  it('stay within their byte budget, the least recently read dropped first', async () => {
    const names = Array.from({ length: 8 }, (_, i) => `event:bytes-${i}` as const);
    for (const [i, name] of names.entries()) await writeSnapshot(tr.redis, tr.prefix, name, { pad: 'x'.repeat(BODY - 12) }, `"v${i}"`);
    for (const name of names.slice(0, 4)) expect((await store.read(name, schema))?.etag).toBeDefined();
    // All four held; the first read again, so the second is now the least recently read.
    expect(names.slice(0, 4).map((n) => store.version(n))).toEqual(['"v0"', '"v1"', '"v2"', '"v3"']);
    await store.read(names[0]!, schema);
    await store.read(names[4]!, schema);
    expect(names.slice(0, 5).map((n) => store.version(n))).toEqual(['"v0"', undefined, '"v2"', '"v3"', '"v4"']);
    // Reading the rest keeps four at most, the newest.
    for (const name of names.slice(5)) await store.read(name, schema);
    expect(names.map((n) => store.version(n))).toEqual([undefined, undefined, undefined, undefined, '"v4"', '"v5"', '"v6"', '"v7"']);
    // A dropped one is read again from Redis when asked for.
    expect((await store.read(names[1]!, schema))?.data.pad.length).toBe(BODY - 12);
  });
});

describe('the check of the held versions', () => {
  it('re-reads a version written without an announcement, and takes announced ones, however often, as announced', async () => {
    const logger = createLogger('test', { LOG_LEVEL: 'silent' });
    const warn = vi.spyOn(logger, 'warn');
    // Checked every few ms, so that checks land between a version's write and its announcement's arrival.
    const checked = createSnapshotStore({ redis: tr.redis, prefix: tr.prefix, clock: Date.now, logger, verifyMs: 3 });
    checked.start();
    try {
      await checked.subscribed();
      const name = 'event:checked' as const;
      // A busy snapshot: written and announced (as the worker does, in one transaction) and read, over and over.
      for (let i = 0; i < 300; i++) {
        const tx = tr.redis.multi();
        queueSnapshotWrites(tx, tr.prefix, [{ name, body: JSON.stringify({ pad: `v${i}` }), etag: `"a${i}"` }], Date.now());
        await tx.exec();
        await checked.read(name, schema);
      }
      await until('the last announced version to be held', async () => (await checked.read(name, schema))?.etag === '"a299"', { timeoutMs: 5000, everyMs: 5 });
      expect(warn.mock.calls.map((c) => c[1] ?? c[0])).toEqual([]);
      // Written behind the announcements' back (a writer with a bug): the check finds it, once.
      await tr.redis.hset(redisKeys(tr.prefix).snapshot(name), { body: JSON.stringify({ pad: 'unannounced' }), etag: '"u"' });
      await until('the unannounced version to be served', async () => (await checked.read(name, schema))?.data.pad === 'unannounced', { timeoutMs: 5000, everyMs: 5 });
      expect(warn.mock.calls.map((c) => c[1])).toEqual(['snapshot changed without an announcement; re-reading it']);
    } finally {
      await checked.stop();
    }
  });
});
