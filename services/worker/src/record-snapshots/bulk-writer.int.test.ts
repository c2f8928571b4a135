import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { redisKeys, snapshotAnnouncementSchema, snapshotEtag, type SnapshotName } from '@pm/shared/redis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { createBulkSnapshotWriter } from './bulk-writer.js';

let tr: TestRedis;
let sub: Redis;
const heard: Array<{ name: string; etag: string }> = [];

beforeAll(async () => {
  tr = await createTestRedis('bulk_writer');
  sub = new Redis(tr.url);
  await sub.subscribe(redisKeys(tr.prefix).snapshotAnnounce);
  sub.on('message', (_channel, message: string) => heard.push(...snapshotAnnouncementSchema.parse(JSON.parse(message))));
});

afterAll(async () => {
  sub?.disconnect();
  await tr?.cleanup();
});

describe('the full build\'s bulk writer', () => {
  it('stores body, etag and built_at as the shared writer does, announces what it wrote, and skips unchanged bodies', async () => {
    let now = 1_000;
    const writer = createBulkSnapshotWriter({ redis: tr.redis, prefix: tr.prefix, now: () => now });
    const keys = redisKeys(tr.prefix);
    const names = Array.from({ length: 1203 }, (_, i) => `calls:market:m${i}` as SnapshotName);
    const first = names.map((name) => ({ name, body: `{"call":{"id":"${name}","x":"é\\"/"}}` }));
    expect(await writer.write(first)).toBe(names.length);
    expect(await tr.redis.hgetall(keys.snapshot('calls:market:m7'))).toEqual({ body: first[7]!.body, etag: snapshotEtag(first[7]!.body), built_at: '1000' });
    expect(await tr.redis.hget(keys.snapshotBuiltAt, 'calls:market')).toBe('1000');
    // Every written snapshot announced (in messages of at most ANNOUNCE_BATCH), with its ETag.
    await until('every write announced', async () => heard.length >= names.length, { timeoutMs: 10_000 });
    expect(new Map(heard.map((h) => [h.name, h.etag]))).toEqual(new Map(first.map((e) => [e.name, snapshotEtag(e.body)])));

    // The same bodies again plus one changed: only that one is written, stamped and announced.
    now = 2_000;
    heard.length = 0;
    const second = first.map((e, i) => (i === 11 ? { ...e, body: '{"call":{"changed":true}}' } : e));
    expect(await writer.write(second)).toBe(1);
    expect(await tr.redis.hget(keys.snapshot('calls:market:m7'), 'built_at')).toBe('1000');
    expect(await tr.redis.hgetall(keys.snapshot('calls:market:m11'))).toEqual({ body: '{"call":{"changed":true}}', etag: snapshotEtag('{"call":{"changed":true}}'), built_at: '2000' });
    await until('the change announced', async () => heard.length >= 1, { timeoutMs: 10_000 });
    expect(heard).toEqual([{ name: 'calls:market:m11', etag: snapshotEtag('{"call":{"changed":true}}') }]);
    expect(await writer.write([])).toBe(0);
  });
});
