import { beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '@pm/shared/logger';
import { sql } from '@pm/shared/db';
import { insertRawPoints, seriesIds } from '@pm/shared/history';
import { redisKeys, type SnapshotName } from '@pm/shared/redis';
import { HISTORY_RANGES } from '@pm/shared/snapshots';
import type { TestDatabase, TestRedisPrefix } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { useFreshStores } from '../testing/stores.js';
import { builderSource } from '../testing/builder-source.js';
import { createSnapshotBuilder } from '../market-snapshots/builder.js';
import { createHistoryBuilder } from '../market-snapshots/history.js';
import { createRecordSnapshotBuilder } from '../record-snapshots/builder.js';
import { REBUILT_KEEP_MS } from './closed-expiry.js';
import { createRetirement } from './retire.js';

/**
 * What the builders write for a closed event is bounded (docs/redis-keys.md "Closed events"): a
 * retired event is written again only when asked for by name (the API marks it), then with an expiry
 * the retirement pass does not cut short; nothing of it is written unasked, no market-index entry
 * comes back, and a builder that wrote a key before it expired writes it again when asked.
 */
const HOUR = 3_600_000;
const logger = createLogger('closed-expiry-test', { LOG_LEVEL: 'silent' });
const stores = useFreshStores('closed_expiry');
let tdb: TestDatabase;
let tr: TestRedisPrefix;
const keys = () => redisKeys(tr.prefix);
const ttlOf = (name: SnapshotName) => tr.redis.pttl(keys().snapshot(name));
const stored = async (name: SnapshotName) => (await tr.redis.exists(keys().snapshot(name))) === 1;
/** Gone as if its expiry had come (the key is this stack's own snapshot, not a library's). */
const expireNow = async (name: SnapshotName) => {
  await tr.redis.pexpire(keys().snapshot(name), 1);
  await until(`${name} to expire`, async () => !(await stored(name)), { timeoutMs: 2_000, everyMs: 5 });
};

/** An event with one market `m-<id>` (two outcomes, a drifting first-outcome history, one call), closed `closedHoursAgo` ago or open. */
async function anEvent(id: string, closedHoursAgo: number | null): Promise<void> {
  const closed = closedHoursAgo !== null;
  const at = new Date(Date.now() - (closedHoursAgo ?? 0) * HOUR);
  await tdb.db.query(sql`insert into events (id, slug, title, category, closed, updated_at) values (${id}, ${`slug-${id}`}, ${id}, 'Politics', ${closed}, ${at})`);
  await tdb.db.query(sql`
    insert into markets (id, event_id, condition_id, position, question, closed, resolved_outcome_index, resolved_at, settled_at, updated_at)
    values (${`m-${id}`}, ${id}, ${`c-${id}`}, 0, 'Q?', ${closed}, ${closed ? 0 : null}, ${closed ? at : null}, ${closed ? at : null}, ${at})
  `);
  for (const i of [0, 1]) {
    await tdb.db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id, catalog_price) values (${`m-${id}`}, ${i}, ${i ? 'No' : 'Yes'}, ${`t-${id}-${i}`}, 0.5)`);
  }
  const series = (await seriesIds(tdb.db, [`t-${id}-0`])).get(`t-${id}-0`)!;
  const t0 = Math.floor(Date.now() / 1000) - 40 * 3600;
  await insertRawPoints(tdb.db, Array.from({ length: 20 }, (_, i) => ({ series, t: t0 + i * 600, chance: 0.3 + i / 100 })));
  const [user] = await tdb.db.query(sql`insert into users (handle, display_name) values (${`u-${id}`}, 'U') returning id`);
  await tdb.db.query(sql`
    insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, made_at, settled_at)
    values (${`call-${id}`}, ${(user as { id: number }).id}, ${`m-${id}`}, 0, 0.4, ${closed ? 'won' : 'open'}, ${closed ? 15 : null}, ${new Date(t0 * 1000)}, ${closed ? at : null})
  `);
}

/** Every key a retired event's page, history and calls had. */
const namesOf = (id: string): SnapshotName[] => [`event:slug-${id}`, ...HISTORY_RANGES.map((r) => `history:m-${id}:${r}` as const), `calls:market:m-${id}`];

/** The expiry a key rebuilt now must carry: about REBUILT_KEEP_MS (the build and the test take a moment). */
async function expectRebuiltExpiry(name: SnapshotName): Promise<void> {
  const ttl = await ttlOf(name);
  expect(ttl, name).toBeGreaterThan(REBUILT_KEEP_MS - 60_000);
  expect(ttl, name).toBeLessThanOrEqual(REBUILT_KEEP_MS);
}

beforeEach(async () => {
  ({ tdb, tr } = stores);
  await anEvent('open', null);
  await anEvent('old', 30);
  await anEvent('recent', 1);
});

describe('a closed event past its retention', () => {
  it('is written by no builder unasked: not the full builds, not the first look at resolved markets', async () => {
    await createSnapshotBuilder(builderSource(tdb, tr)).build({ full: true });
    const history = createHistoryBuilder({ ...builderSource(tdb, tr), logger });
    await history.build();
    await createRecordSnapshotBuilder(builderSource(tdb, tr)).build({ full: true });
    for (const name of namesOf('old')) expect(await stored(name), name).toBe(false);
    // Inside its retention a closed event's histories and call list are written, with the retention's end as expiry.
    for (const name of namesOf('recent').slice(1)) {
      const ttl = await ttlOf(name);
      expect(ttl, name).toBeGreaterThan(22.9 * HOUR);
      expect(ttl, name).toBeLessThanOrEqual(23 * HOUR);
    }
    // An open event's keep no expiry.
    for (const name of namesOf('open')) expect(await ttlOf(name), name).toBe(-1);
  });

  it('is written when asked for, with an expiry the retirement pass keeps, and again once it expired, by the same builders', async () => {
    const pages = createSnapshotBuilder(builderSource(tdb, tr));
    const history = createHistoryBuilder({ ...builderSource(tdb, tr), logger });
    const records = createRecordSnapshotBuilder(builderSource(tdb, tr));
    await pages.build({ full: true });
    await history.build();
    await records.build({ full: true });
    const ask = () =>
      tr.redis
        .multi()
        .sadd(keys().dirtyEvents, 'old')
        .sadd(keys().backfilledHistory, 'm-old')
        .sadd(keys().dirtyRecords, 'market:m-old')
        .exec();
    const buildAll = async () => {
      await pages.build();
      await history.build();
      await records.build();
    };

    await ask();
    await buildAll();
    for (const name of namesOf('old')) await expectRebuiltExpiry(name);
    // No index entry: a hash field cannot expire, and the retirement pass deleted the event's own.
    expect(await tr.redis.hexists(keys().marketEvents, 'm-old')).toBe(0);

    // The retirement pass (a first one looks at every closed event) leaves the rebuilt keys their hour.
    await createRetirement({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, logger, retentionMs: 24 * HOUR }).pass();
    for (const name of namesOf('old')) await expectRebuiltExpiry(name);

    // Expired, and asked for again: the builders that wrote them write them again, though their bodies did not change.
    for (const name of namesOf('old')) await expireNow(name);
    await ask();
    await buildAll();
    for (const name of namesOf('old')) await expectRebuiltExpiry(name);
  });

  it('asked for while a full call-list build runs, is written by that build', async () => {
    await tr.redis.sadd(keys().dirtyRecords, 'market:m-old');
    await createRecordSnapshotBuilder(builderSource(tdb, tr)).build({ full: true });
    await expectRebuiltExpiry('calls:market:m-old');
  });
});
