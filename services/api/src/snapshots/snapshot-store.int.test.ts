import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '@pm/shared/logger';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { writeSnapshot } from '../testing/fixtures.js';
import { createSnapshotStore, type SnapshotStore } from './snapshot-store.js';

/**
 * The snapshots an API process holds are bounded by the bytes of their JSON text as well as by
 * count: a process that reads many large snapshots (a day's histories) keeps the most recently read
 * within its budget, and drops the least recently read first. Real Redis.
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
