import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KEY_FAMILIES, keyFamily, queuePrefix, QUEUE_NAMES, spaceBase } from '@pm/shared/queues';
import { redisKeys, SNAPSHOT_FAMILIES, type RedisKeys, type SnapshotName } from '@pm/shared/redis';
import { projectionMarketsDirtyKey, projectionUsersDirtyKey } from '@pm/shared/records';
import { weekEdgeKey } from '../../services/worker/src/projections/processor.js';
import { reconcilerEpochKey } from '../../services/worker/src/outbox/reconciler.js';

/**
 * Every Redis key family has a bound, and docs/redis-keys.md says it: each key the code builds
 * (shared/src/redis/keys.ts, the snapshot families, the queues, the keys other modules add) belongs
 * to exactly one family of shared/src/queues/key-families.ts, and every family has a row in the
 * docs' table with the same bound. A new key without a family, or a family without a row, fails here.
 * (The bounds themselves are exercised where they are kept: services/worker/src/retire for closed
 * events, the stream writer, the rate limiter and the open-stream counts.)
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const P = 'pfx';

/** A name of each snapshot family, as the worker writes them. */
function snapshotExample(family: (typeof SNAPSHOT_FAMILIES)[number]): SnapshotName {
  if (family === 'history') return 'history:540001:1d';
  if (family === 'markets:trending' || family === 'markets:search' || family === 'live' || family === 'calls:latest') return family;
  return `${family}:example` as SnapshotName;
}

/** Every key the code builds for the stack P, with where it came from. */
function everyKey(): Array<[string, string]> {
  const keys = redisKeys(P);
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(keys) as Array<[keyof RedisKeys, RedisKeys[keyof RedisKeys]]>) {
    if (name === 'snapshot') continue;
    if (name === 'rateLimitPrefix') out.push([name, `${keys.rateLimitPrefix}127.0.0.1`]);
    else if (typeof value === 'string') out.push([name, value]);
    else out.push([name, (value as (arg: string) => string)('example')]);
  }
  for (const family of SNAPSHOT_FAMILIES) out.push([`snapshot ${family}`, keys.snapshot(snapshotExample(family))]);
  for (const queue of QUEUE_NAMES) for (const suffix of ['wait', 'completed', 'events', '42']) out.push([`queue ${queue}`, `${queuePrefix(P)}:${queue}:${suffix}`]);
  out.push(
    ['weekEdgeKey', weekEdgeKey(P)],
    ['reconcilerEpochKey', reconcilerEpochKey(P)],
    ['projectionUsersDirtyKey', projectionUsersDirtyKey(P)],
    ['projectionMarketsDirtyKey', projectionMarketsDirtyKey(P)],
  );
  return out;
}

describe('Redis key families', () => {
  it('gives every key the code builds exactly one family', () => {
    for (const [source, key] of everyKey()) {
      const matching = KEY_FAMILIES.filter((f) => key.startsWith(`${spaceBase(f.space, P)}:`) && f.tail.test(key.slice(spaceBase(f.space, P).length + 1)));
      expect(matching.map((f) => f.family), `${source}: ${key}`).toHaveLength(1);
      expect(keyFamily(key, P)?.family, source).toBe(matching[0]!.family);
    }
  });

  it('names each family once, each with a bound, and uses every family', () => {
    const names = KEY_FAMILIES.map((f) => f.family);
    expect(new Set(names).size).toBe(names.length);
    for (const f of KEY_FAMILIES) expect(f.bound.trim().length, f.family).toBeGreaterThan(5);
    const used = new Set(everyKey().map(([, key]) => keyFamily(key, P)?.family));
    expect(names.filter((n) => !used.has(n))).toEqual([]);
  });

  it('documents every family with its bound in docs/redis-keys.md', () => {
    const doc = readFileSync(path.join(root, 'docs', 'redis-keys.md'), 'utf8');
    const rows = new Map(
      doc
        .split('\n')
        .filter((l) => l.startsWith('| `'))
        .map((l) => {
          const cells = l.split('|').map((c) => c.trim());
          return [cells[1]!.replace(/`/g, ''), cells] as const;
        }),
    );
    for (const f of KEY_FAMILIES) {
      const row = rows.get(f.family);
      expect(row, `docs/redis-keys.md has no row for ${f.family}`).toBeDefined();
      expect(row!.join(' | '), f.family).toContain(f.bound);
      expect(row!.join(' | '), f.family).toContain(f.how);
    }
    expect([...rows.keys()].filter((name) => !KEY_FAMILIES.some((f) => f.family === name))).toEqual([]);
  });

  it('tells a key of another stack from this one\'s', () => {
    expect(keyFamily(`${spaceBase('stack', 'other')}:chances`, P)).toBeUndefined();
    expect(keyFamily(redisKeys(P).chances, P)?.family).toBe('chances');
  });
});
