import { beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '@pm/shared/logger';
import { sql } from '@pm/shared/db';
import { KEY_FAMILIES, keyFamily } from '@pm/shared/queues';
import { redisKeys, type SnapshotName } from '@pm/shared/redis';
import { HISTORY_RANGES } from '@pm/shared/snapshots';
import type { TestDatabase, TestRedisPrefix } from '@pm/shared/testing';
import { useFreshStores } from '../testing/stores.js';
import { createRetirement } from './retire.js';

/**
 * A closed event's Redis state leaves after the retention: its page, its markets' histories and call
 * lists get an expiry at closed-at + retention (gone at once when that has passed), and its tokens'
 * chances and its markets' index entries are deleted then; an open event's, and a closed event's
 * inside the retention, stay as they were.
 */
const logger = createLogger('retire-test', { LOG_LEVEL: 'silent' });
const HOUR = 3_600_000;
const stores = useFreshStores('retire');
let tdb: TestDatabase;
let tr: TestRedisPrefix;

async function anEvent(id: string, opts: { closed: boolean; closedHoursAgo?: number }): Promise<void> {
  const at = new Date(Date.now() - (opts.closedHoursAgo ?? 0) * HOUR);
  await tdb.db.query(sql`
    insert into events (id, slug, title, category, closed, updated_at) values (${id}, ${`slug-${id}`}, ${id}, 'Politics', ${opts.closed}, ${at})
  `);
  await tdb.db.query(sql`
    insert into markets (id, event_id, condition_id, position, question, closed, updated_at)
    values (${`m-${id}`}, ${id}, ${`c-${id}`}, 0, 'Q?', ${opts.closed}, ${at})
  `);
  for (const i of [0, 1]) {
    await tdb.db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values (${`m-${id}`}, ${i}, ${i ? 'No' : 'Yes'}, ${`t-${id}-${i}`})`);
  }
}

/** Every key and field the stack keeps for an event, as the worker and ingestor write them. */
async function seed(id: string): Promise<string[]> {
  const keys = redisKeys(tr.prefix);
  const names: SnapshotName[] = [`event:slug-${id}`, ...HISTORY_RANGES.map((r) => `history:m-${id}:${r}` as const), `calls:market:m-${id}`];
  const snapshotKeys = names.map((n) => keys.snapshot(n));
  for (const key of snapshotKeys) await tr.redis.hset(key, { body: '{}', etag: '"x"', built_at: '1' });
  await tr.redis.hset(keys.chances, `t-${id}-0`, '0.5', `t-${id}-1`, '0.5');
  await tr.redis.hset(keys.chanceAt, `t-${id}-0`, '1', `t-${id}-1`, '1');
  await tr.redis.hset(keys.quotes, `t-${id}-0`, '0.49|0.51|0.5', `t-${id}-1`, '0.49|0.51|0.5');
  await tr.redis.hset(keys.marketEvents, `m-${id}`, `slug-${id}`);
  return snapshotKeys;
}

beforeEach(() => {
  ({ tdb, tr } = stores);
});

describe('retirement of closed events', () => {
  it('expires a closed event\'s snapshots at closed-at + retention and leaves open ones alone', async () => {
    await anEvent('open', { closed: false });
    await anEvent('recent', { closed: true, closedHoursAgo: 1 });
    const openKeys = await seed('open');
    const recentKeys = await seed('recent');
    const retire = createRetirement({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, logger, retentionMs: 24 * HOUR });

    expect(await retire.pass()).toEqual({ expiring: 1, retired: 0 });
    for (const key of openKeys) expect(await tr.redis.pttl(key), key).toBe(-1);
    for (const key of recentKeys) {
      const ttl = await tr.redis.pttl(key);
      // 23 hours left, give or take the test's own time.
      expect(ttl, key).toBeGreaterThan(22.9 * HOUR);
      expect(ttl, key).toBeLessThanOrEqual(23 * HOUR);
    }
    // Inside the retention the hash fields stay: the closed page still shows its chances.
    const keys = redisKeys(tr.prefix);
    expect(await tr.redis.hget(keys.chances, 't-recent-0')).toBe('0.5');
    expect(await tr.redis.hget(keys.marketEvents, 'm-recent')).toBe('slug-recent');
  });

  it('deletes what a closed event left once its retention has passed, hash fields included', async () => {
    await anEvent('open', { closed: false });
    await anEvent('old', { closed: true, closedHoursAgo: 30 });
    await seed('open');
    const oldKeys = await seed('old');
    const forgotten: string[] = [];
    const retire = createRetirement({
      db: tdb.db,
      redis: tr.redis,
      prefix: tr.prefix,
      logger,
      retentionMs: 24 * HOUR,
      onRetired: (r) => forgotten.push(...r.marketIds),
    });

    expect(await retire.pass()).toEqual({ expiring: 1, retired: 1 });
    for (const key of oldKeys) expect(await tr.redis.exists(key), key).toBe(0);
    const keys = redisKeys(tr.prefix);
    expect(await tr.redis.hkeys(keys.chances)).toEqual(['t-open-0', 't-open-1']);
    expect(await tr.redis.hkeys(keys.chanceAt)).toEqual(['t-open-0', 't-open-1']);
    expect(await tr.redis.hkeys(keys.quotes)).toEqual(['t-open-0', 't-open-1']);
    expect(await tr.redis.hkeys(keys.marketEvents)).toEqual(['m-open']);
    expect(forgotten).toEqual(['m-old']);

    // What is left belongs to the open event only, and every family the retirement owns was seen to go.
    const left: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await tr.redis.scan(cursor, 'MATCH', `${keys.snapshot('live').replace(/live$/, '')}*`, 'COUNT', 1000);
      cursor = next;
      left.push(...found);
    } while (cursor !== '0');
    expect(left.every((k) => k.includes('open'))).toBe(true);
    const retiredFamilies = KEY_FAMILIES.filter((f) => f.how === 'retired').map((f) => f.family);
    const seen = new Set([...oldKeys, keys.chances, keys.chanceAt, keys.quotes, keys.marketEvents].map((k) => keyFamily(k, tr.prefix)?.family));
    expect([...seen].sort()).toEqual([...retiredFamilies].sort());
  });

  it('looks again at every closed event after a restart, and later passes only within the window', async () => {
    await anEvent('ancient', { closed: true, closedHoursAgo: 24 * 30 });
    const keys = await seed('ancient');
    const retire = createRetirement({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, logger, retentionMs: HOUR });
    expect(await retire.pass()).toEqual({ expiring: 1, retired: 1 });
    for (const key of keys) expect(await tr.redis.exists(key)).toBe(0);
    // The first pass saw it; a later pass looks only at recent closes.
    expect(await retire.pass()).toEqual({ expiring: 0, retired: 0 });
  });
});
