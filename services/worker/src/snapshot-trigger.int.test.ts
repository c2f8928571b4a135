import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createSnapshotTrigger, queuePrefix, redisKeys } from '@pm/shared';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';

/** The producer side (shared/src/snapshot-trigger.ts), as the ingestor uses it. */
let tr: TestRedis;

beforeAll(async () => {
  tr = await createTestRedis('snapshot_trigger');
});

afterAll(async () => {
  await tr?.cleanup();
});

const eventsKey = () => `${queuePrefix(tr.prefix)}:snapshots:events`;
async function added(): Promise<number> {
  const entries = await tr.redis.xrange(eventsKey(), '-', '+');
  return entries.filter(([, f]) => f[0] === 'event' && f[1] === 'added').length;
}

describe('the snapshot trigger', () => {
  it('marks events dirty and makes one job for a burst inside the interval', async () => {
    const trigger = createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix, intervalMs: 5_000 });
    try {
      await Promise.all(Array.from({ length: 200 }, (_, i) => trigger.markEventsDirty([`e${i % 7}`, 'e0'])));
      expect((await tr.redis.smembers(redisKeys(tr.prefix).dirtyEvents)).sort()).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
      expect(await added()).toBe(1);
      const waiting = await tr.redis.lrange(`${queuePrefix(tr.prefix)}:snapshots:wait`, 0, -1);
      expect(waiting).toHaveLength(1);
    } finally {
      await trigger.close();
    }
  });

  it('bumps the catalog version on a catalog change', async () => {
    const trigger = createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix, intervalMs: 10 });
    try {
      const before = Number((await tr.redis.get(redisKeys(tr.prefix).catalogVersion)) ?? 0);
      await trigger.markCatalogChanged();
      await trigger.markCatalogChanged();
      expect(Number(await tr.redis.get(redisKeys(tr.prefix).catalogVersion))).toBe(before + 2);
    } finally {
      await trigger.close();
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
      intervalMs: 250,
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
