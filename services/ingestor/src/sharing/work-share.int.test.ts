import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createLogger } from '@pm/shared/logger';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { createWorkShare, partitionOf, type WorkShare } from './work-share.js';

/**
 * Ingestors splitting the markets by leases, against the real (shared) Redis under a prefix of this
 * file's own, with short leases so that an owner's death is seen in about a second.
 */

const TTL_MS = 1_000;
const PARTITIONS = 16;
const logger = createLogger('test', { LOG_LEVEL: 'silent' });

let tr: TestRedis;
const connections: Redis[] = [];
const shares: WorkShare[] = [];

beforeAll(async () => {
  tr = await createTestRedis('work_share');
});
afterAll(async () => {
  for (const s of shares) await s.stop().catch(() => {});
  for (const c of connections) c.disconnect();
  await tr.cleanup();
});

/** An ingestor's share on a connection of its own, so the test can cut it off as if it died. */
async function ingestor(owner: string, prefix = tr.prefix): Promise<{ share: WorkShare; die(): void }> {
  const redis = new Redis(tr.url, { maxRetriesPerRequest: null });
  connections.push(redis);
  const share = createWorkShare({ redis, prefix, owner, logger, partitions: PARTITIONS, ttlMs: TTL_MS });
  shares.push(share);
  await share.start();
  return { share, die: () => redis.disconnect() };
}

/** Samples every 20 ms: the longest time any partition was served by two of `shares` at once. */
function watchOverlap(list: WorkShare[]): { stop(): number } {
  const since = new Map<number, number>();
  let worst = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    for (let n = 0; n < PARTITIONS; n++) {
      const servers = list.filter((s) => s.state().partitions.has(n)).length;
      if (servers > 1) {
        if (!since.has(n)) since.set(n, now);
        worst = Math.max(worst, now - since.get(n)!);
      } else since.delete(n);
    }
  }, 20);
  return {
    stop() {
      clearInterval(timer);
      return worst;
    },
  };
}

const served = (list: WorkShare[]) => list.reduce((sum, s) => sum + s.state().partitions.size, 0);

describe('ingestors sharing the markets by leases', () => {
  it('one alone serves every market and leads; a second takes half, with no market served twice', async () => {
    const prefix = `${tr.prefix}_pair`;
    const a = await ingestor('a', prefix);
    expect(a.share.state().partitions.size).toBe(PARTITIONS);
    expect(a.share.isLeader()).toBe(true);
    expect(['m-1', 'm-2', '0xabc'].every((m) => a.share.ownsMarket(m))).toBe(true);

    const b = await ingestor('b', prefix);
    const overlap = watchOverlap([a.share, b.share]);
    await until('the two to split the partitions', async () => a.share.state().partitions.size === PARTITIONS / 2 && b.share.state().partitions.size === PARTITIONS / 2, { timeoutMs: 5_000, everyMs: 20 });
    expect(overlap.stop()).toBe(0);
    // Every market has exactly one owner; the leader stays where it was.
    for (const m of ['m-1', 'm-2', 'm-3', '0xabc', '12345678901234567890']) {
      expect(Number(a.share.ownsMarket(m)) + Number(b.share.ownsMarket(m))).toBe(1);
    }
    expect([a.share.isLeader(), b.share.isLeader()]).toEqual([true, false]);
  });

  it('a dead ingestor stops serving before its leases expire, and the survivor takes them and the lead within a lease and a tick', async () => {
    const a = await ingestor('dies');
    const b = await ingestor('survives');
    await until('the split', async () => served([a.share, b.share]) === PARTITIONS && b.share.state().partitions.size > 0, { timeoutMs: 5_000, everyMs: 20 });
    expect(a.share.isLeader()).toBe(true);
    const overlap = watchOverlap([a.share, b.share]);

    const diedAt = Date.now();
    a.die();
    await until('the survivor to serve everything and lead', async () => b.share.state().partitions.size === PARTITIONS && b.share.isLeader(), { timeoutMs: 5_000, everyMs: 20 });
    const tookMs = Date.now() - diedAt;
    // The dead one's own view: nothing served once its leases may have run out.
    expect(a.share.state().partitions.size).toBe(0);
    expect(a.share.isLeader()).toBe(false);
    expect(overlap.stop()).toBe(0);
    // A lease and a tick by design; the margin is for a busy machine.
    expect(tookMs).toBeLessThan(3 * TTL_MS);
  });

  it('a restarted ingestor with the same id takes its own leases back at once', async () => {
    const prefix = `${tr.prefix}_restart`;
    const first = await ingestor('host:3001', prefix);
    first.die();
    const again = await ingestor('host:3001', prefix);
    expect(again.share.state().partitions.size).toBe(PARTITIONS);
  });

  it('hashes a market to the same partition everywhere', () => {
    expect(partitionOf('m-1', 64)).toBe(partitionOf('m-1', 64));
    const spread = new Set(Array.from({ length: 1000 }, (_, i) => partitionOf(`market-${i}`, 64)));
    expect(spread.size).toBe(64);
  });
});
