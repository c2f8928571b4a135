import type { Redis } from 'ioredis';
import { ANNOUNCE_BATCH, redisKeys, snapshotEtag, snapshotFamily, type SnapshotName } from '@pm/shared/redis';

/**
 * The full build's writer: the same stored form as the shared snapshot writer (market-snapshots/writer.ts,
 * `queueSnapshotWrites`) — the hash `{body, etag, built_at}`, the family's newest write time, and the
 * announcement on `snapshotAnnounce` in batches of ANNOUNCE_BATCH — but a million snapshots at a cost
 * Redis and Node can carry: one script call per batch finds the snapshots whose ETag differs from the
 * stored one, and one more writes just those (comparing again: atomic), announcing them in the same
 * step. The shared writer
 * spends three commands per snapshot (HGET of the stored ETag, HSET, and MULTI's queueing), which
 * at a million calls was over a minute of the full build.
 *
 * All keys carry the stack's hash tag (`{prefix}`, shared/src/redis/keys.ts), so a batch is one slot
 * on a Redis Cluster as the MULTI was.
 */

/**
 * KEYS: the snapshot hashes, then the family built-at hash. ARGV: built_at, channel, family count,
 * families, then name and etag per key, then the bodies, then the expiry per key (Unix ms; 0: none).
 */
const WRITE_CHANGED = `
local n = #KEYS - 1
local builtAt = ARGV[1]
local families = tonumber(ARGV[3])
local first = 4 + families
local bodies = first + 2 * n
local expiries = bodies + n
local changed = {}
for i = 1, n do
  local name = ARGV[first + 2 * (i - 1)]
  local etag = ARGV[first + 2 * (i - 1) + 1]
  if redis.call('HGET', KEYS[i], 'etag') ~= etag then
    redis.call('HSET', KEYS[i], 'body', ARGV[bodies + i - 1], 'etag', etag, 'built_at', builtAt)
    local expireAt = ARGV[expiries + i - 1]
    if expireAt ~= '0' then redis.call('PEXPIREAT', KEYS[i], expireAt) end
    changed[#changed + 1] = {name = name, etag = etag}
  end
end
if #changed > 0 then
  for f = 1, families do redis.call('HSET', KEYS[n + 1], ARGV[3 + f], builtAt) end
  local batch = {}
  for i = 1, #changed do
    batch[#batch + 1] = changed[i]
    if #batch == ${ANNOUNCE_BATCH} or i == #changed then
      redis.call('PUBLISH', ARGV[2], cjson.encode(batch))
      batch = {}
    end
  end
end
return #changed
`;

/** KEYS: snapshot hashes. ARGV: their ETags. Returns the (1-based) positions whose stored ETag differs. */
const FIND_CHANGED = `
local out = {}
for i = 1, #KEYS do
  if redis.call('HGET', KEYS[i], 'etag') ~= ARGV[i] then out[#out + 1] = i end
end
return out
`;

type WithScript = Redis & {
  pmWriteChangedSnapshots(...args: Array<string | number>): Promise<number>;
  pmFindChangedSnapshots(...args: Array<string | number>): Promise<number[]>;
};

export interface BulkSnapshotWriter {
  /**
   * Writes the snapshots whose ETag differs from the stored one; resolves to how many were written.
   * One with `expireAtMs` (a closed event's: retire/closed-expiry.ts) gets that expiry when written.
   */
  write(entries: ReadonlyArray<{ name: SnapshotName; body: string; expireAtMs?: number }>): Promise<number>;
}

export function createBulkSnapshotWriter(deps: { redis: Redis; prefix: string; now: () => number }): BulkSnapshotWriter {
  const keys = redisKeys(deps.prefix);
  if (!('pmWriteChangedSnapshots' in deps.redis)) deps.redis.defineCommand('pmWriteChangedSnapshots', { lua: WRITE_CHANGED });
  if (!('pmFindChangedSnapshots' in deps.redis)) deps.redis.defineCommand('pmFindChangedSnapshots', { lua: FIND_CHANGED });
  const redis = deps.redis as unknown as WithScript;
  return {
    async write(all) {
      if (all.length === 0) return 0;
      // The ETags first (a few bytes each): an unchanged snapshot's body never travels to Redis.
      const etags = all.map((e) => snapshotEtag(e.body));
      const changed = await redis.pmFindChangedSnapshots(all.length, ...all.map((e) => keys.snapshot(e.name)), ...etags);
      if (changed.length === 0) return 0;
      const entries = changed.map((i) => ({ ...all[i - 1]!, etag: etags[i - 1]! }));
      const families = [...new Set(entries.map((e) => snapshotFamily(e.name)))];
      const meta: string[] = [];
      for (const e of entries) meta.push(e.name, e.etag);
      return redis.pmWriteChangedSnapshots(
        entries.length + 1,
        ...entries.map((e) => keys.snapshot(e.name)),
        keys.snapshotBuiltAt,
        String(deps.now()),
        keys.snapshotAnnounce,
        families.length,
        ...families,
        ...meta,
        ...entries.map((e) => e.body),
        ...entries.map((e) => String(e.expireAtMs ?? 0)),
      );
    },
  };
}
