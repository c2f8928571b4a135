import type { Redis } from 'ioredis';

/**
 * Leases in Redis: a key holds its owner's id for `ttlMs`; only that owner may renew or release it
 * (a compare-and-set script, so a lease that expired and was taken by another is never renewed or
 * deleted by its old owner). Taking one is SET NX PX, or a renewal when this owner holds it already
 * (an ingestor restarted under the same id takes its own leases back at once).
 *
 * Keys are passed in already built (keys.ts `leaseKeys`), all under the stack's hash tag, so a
 * pipeline of several leases is one slot on a Redis Cluster.
 */

/** KEYS[1] lease, ARGV[1] owner, ARGV[2] ttl ms → 1 when renewed (still this owner's). */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** KEYS[1] lease, ARGV[1] owner, ARGV[2] ttl ms → 1 when this owner holds it now: free, or a renewal. */
const TAKE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
${RENEW}`;

/** KEYS[1] lease, ARGV[1] owner → 1 when it was this owner's and is now free. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;

interface LeaseCommands {
  pmLeaseTake(key: string, owner: string, ttlMs: number): Promise<number>;
  pmLeaseRenew(key: string, owner: string, ttlMs: number): Promise<number>;
  pmLeaseRelease(key: string, owner: string): Promise<number>;
}

export interface Leases {
  /** Takes (or keeps) each lease it can; returns those now held by `owner`. One round trip. */
  take(keys: readonly string[]): Promise<Set<string>>;
  /** Renews each lease still held by `owner`; returns those renewed. One round trip. */
  renew(keys: readonly string[]): Promise<Set<string>>;
  /** Frees each lease `owner` holds, so another takes it at once instead of after it expires. */
  release(keys: readonly string[]): Promise<void>;
}

export function createLeases(redis: Redis, owner: string, ttlMs: number): Leases {
  if (!('pmLeaseTake' in redis)) {
    redis.defineCommand('pmLeaseTake', { numberOfKeys: 1, lua: TAKE });
    redis.defineCommand('pmLeaseRenew', { numberOfKeys: 1, lua: RENEW });
    redis.defineCommand('pmLeaseRelease', { numberOfKeys: 1, lua: RELEASE });
  }
  const run = async (keys: readonly string[], call: (p: LeaseCommands, key: string) => Promise<number>) => {
    const held = new Set<string>();
    if (keys.length === 0) return held;
    const pipeline = redis.pipeline() as unknown as LeaseCommands & { exec(): Promise<Array<[Error | null, unknown]> | null> };
    for (const key of keys) void call(pipeline, key);
    const results = (await pipeline.exec()) ?? [];
    results.forEach(([err, value], i) => {
      if (err) throw err;
      if (value === 1) held.add(keys[i]!);
    });
    return held;
  };
  return {
    take: (keys) => run(keys, (p, key) => p.pmLeaseTake(key, owner, ttlMs)),
    renew: (keys) => run(keys, (p, key) => p.pmLeaseRenew(key, owner, ttlMs)),
    async release(keys) {
      await run(keys, (p, key) => p.pmLeaseRelease(key, owner));
    },
  };
}
