import { beforeEach, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { createLogger } from '@pm/shared/logger';
import { createSnapshotTrigger, queuePrefix, type SnapshotTrigger } from '@pm/shared/queues';
import { sql, tables } from '@pm/shared/db';
import { createRecords, createRecordsTrigger, projectionMarketsDirtyKey, projectionUsersDirtyKey, type Records, type RecordsTrigger } from '@pm/shared/records';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import * as waiting from '@pm/shared/wait';
import { useFreshStores } from '../testing/stores.js';
import { startQueueWorkers } from '../jobs.js';
import { createSettleMarketProcessor } from '../settlement/processor.js';
import { settleMarket } from '../settlement/settle-market.js';
import { insertMarkets, logResolution, setChance } from '../settlement/test-fixture.js';
import { createOutboxRelay } from '../outbox/relay.js';
import { createWindowUpkeepProcessor, createProjectUsersProcessor, createRebuildAllProcessor } from './processor.js';
import { upkeepWindows, rebuildProjections } from './run.js';
import { requestRebuildIfStale } from './schedule.js';

/**
 * A user's record against their calls, with figures computed by hand; a leaderboard row against the
 * record; the coalesced incremental path (real BullMQ jobs) against a rebuild, row for row.
 */
const logger = createLogger('projections-test', { LOG_LEVEL: 'silent' });
const DAY = 86_400_000;
let tdb: TestDatabase;
let tr: TestRedisPrefix;
let records: Records;
let trigger: RecordsTrigger;
let snapshotTrigger: SnapshotTrigger;
const ids: Record<string, number> = {};
/** Moves the projection worker's clock forward (the roll-over test). */
let clockOffsetMs = 0;

/** The database (emptied before each test), a Redis prefix per test, and `each`: its workers and relay. */
const stores = useFreshStores('projections');

// Each test: eight markets and five people with no calls, an empty Redis prefix, its own workers and relay.
beforeEach(async () => {
  ({ tdb, tr } = stores);
  const { each } = stores;
  clockOffsetMs = 0;
  await insertMarkets(tdb.db, ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8']);
  trigger = each.adopt(createRecordsTrigger({ redis: tr.redis, prefix: tr.prefix, intervalMs: 100 }), (t) => t.close());
  records = each.adopt(createRecords({ db: tdb.db, redis: tr.redis, prefix: tr.prefix }), (r) => r.close());
  snapshotTrigger = each.adopt(createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix }), (t) => t.close());
  const deps = { db: tdb.db, redis: tr.redis, prefix: tr.prefix, trigger, snapshots: snapshotTrigger, logger, now: () => new Date(Date.now() + clockOffsetMs) };
  each.adopt(startQueueWorkers({
    registry: {
      settlement: { 'settle-market': createSettleMarketProcessor({ db: tdb.db, logger }) },
      projections: { 'project-users': createProjectUsersProcessor(deps), 'rebuild-all': createRebuildAllProcessor(deps), 'window-upkeep': createWindowUpkeepProcessor(deps) },
    },
    consume: [
      { queue: 'settlement', concurrency: 1 },
      { queue: 'projections', concurrency: 1 },
    ],
    connection: tr.redis,
    prefix: tr.prefix,
    logger,
  }), (w) => w.close());
  // Turns the write path's outbox rows into the projection jobs, as the worker does.
  const relay = createOutboxRelay({
    db: tdb.db,
    databaseUrl: tdb.url,
    connection: tr.redis,
    prefix: tr.prefix,
    records: trigger,
    snapshots: snapshotTrigger,
    logger,
  });
  relay.start();
  each.defer(() => relay.stop());
  for (const h of ['alice', 'bob', 'carol', 'dave', 'erin']) ids[h] = (await records.createUser({ handle: h, displayName: h.toUpperCase() })).id;
});


/** A person's user_records row without the time it was written, its amounts as numbers. */
async function recordOf(handle: string) {
  const row = await tables.user_records(tdb.db).findOne({ user_id: ids[handle]! });
  if (!row) return undefined;
  const { updated_at: _written, ...record } = row;
  // numeric arrives as text ("77.50"): compare the amounts, not their scale.
  return { ...record, profit_on_10: Number(row.profit_on_10), profit_7d: Number(row.profit_7d) };
}

/** Coalesced jobs run a few hundred ms after a write; on a loaded machine much later. */
const eventually = <T>(read: () => Promise<T>, ok: (v: T) => boolean) => waiting.eventually(read, ok, { timeoutMs: 25_000 });

/**
 * Waits until nothing is left in flight between the write path and the projection tables (a
 * timeout says what was still pending). Read upstream first — settlement jobs, the outbox (rows not yet relayed; a
 * settlement's own row is committed before its job completes), the projection jobs, then the dirty
 * sets — so work moving from one stage to the next while this looks is never missed. Job counts
 * are BullMQ's own (its Redis layout is its own business).
 */
async function pipelineIdle(): Promise<void> {
  const queue = (name: string) => new Queue(name, { connection: tr.redis, prefix: queuePrefix(tr.prefix) });
  const settlement = queue('settlement');
  const projections = queue('projections');
  const pendingJobs = async (q: Queue) =>
    Object.values(await q.getJobCounts('active', 'wait', 'delayed', 'prioritized', 'waiting-children')).reduce((a, b) => a + b, 0);
  let seen = '';
  try {
    await waiting.until(
      () => `the projection pipeline to go idle (last seen ${seen})`,
      async () => {
        const settling = await pendingJobs(settlement);
        const unsent: Array<{ n: number }> = await tdb.db.query(sql`select count(*)::int as n from outbox where sent_at is null`);
        const projecting = await pendingJobs(projections);
        const dirty = (await tr.redis.scard(projectionUsersDirtyKey(tr.prefix))) + (await tr.redis.scard(projectionMarketsDirtyKey(tr.prefix)));
        seen = JSON.stringify({ settling, unsent: unsent[0]!.n, projecting, dirty });
        return settling === 0 && unsent[0]!.n === 0 && projecting === 0 && dirty === 0;
      },
      { timeoutMs: 25_000, everyMs: 100 },
    );
  } finally {
    await Promise.all([settlement.close(), projections.close()]);
  }
}

/** Projection tables as plain rows, without the time they were written. */
async function projectionRows() {
  return {
    user_records: await tdb.db.query(sql`
      select user_id, calls, settled, won, lost, right_pct, profit_on_10::text, profit_7d::text, xp, streak, followers, following, copies
      from user_records order by user_id`),
    leaderboard_rows: await tdb.db.query(sql`select sort, rank, user_id from leaderboard_rows order by sort, rank`),
    market_splits: await tdb.db.query(sql`select market_id, outcome_index, people from market_splits order by market_id, outcome_index`),
    user_window_records: await tdb.db.query(sql`
      select span, field, user_id, settled, won, lost, profit_on_10::text, xp, brier_sum::text, clv_sum::text, clv_calls
      from user_window_records order by span, field, user_id`),
  };
}

async function callAt(handle: string, marketId: string, outcomeIndex: number, chance: string, extra: { copiedFrom?: string; madeAt?: Date } = {}) {
  await setChance(tr.redis, tr.prefix, marketId, outcomeIndex, chance);
  return records.recordCall({ handle, marketId, outcomeIndex, thesis: `${handle} on ${marketId}`, ...extra });
}

/**
 * Settles a market as of `at` (in the past). Logging the resolution also writes the outbox row the
 * relay turns into a `settle-market` job, which settles as of the worker's clock, i.e. now: call this
 * only while the settlement queue is paused (`withSettlementHeld`), or that job may settle first.
 */
async function settleAt(marketId: string, winner: number | null, at: Date) {
  await logResolution(tdb.db, marketId, winner);
  const settled = await settleMarket(tdb.db, marketId, at);
  await trigger.projectionStale({ userIds: settled.userIds });
}

/**
 * Runs `work` with the settlement queue paused, so a `settle-market` job owed by a logged
 * resolution waits; once resumed it finds the market settled and changes nothing.
 */
async function withSettlementHeld(work: () => Promise<void>): Promise<void> {
  const settlement = new Queue('settlement', { connection: tr.redis, prefix: queuePrefix(tr.prefix) });
  await settlement.pause();
  try {
    await work();
  } finally {
    await settlement.resume();
    await settlement.close();
  }
}

/**
 * The scenario the record is checked against: alice's eight calls (two copied by others, one her own
 * copy), a combo, follows, and six settlements from 8 days to half an hour ago.
 */
async function aliceScenario() {
  const now = Date.now();
  const made = new Date(now - 10 * DAY);
  const a1 = await callAt('alice', 'm1', 0, '0.25', { madeAt: made }); // won: +30, xp 10 + round(67.5) = 78
  await callAt('alice', 'm2', 0, '0.4', { madeAt: made }); // lost: −10
  const a3 = await callAt('alice', 'm3', 0, '0.5', { madeAt: made }); // won: +10, xp 55
  await callAt('alice', 'm4', 0, '0.8', { madeAt: made }); // won: +2.5, xp 28
  await callAt('alice', 'm5', 0, '0.2', { madeAt: made }); // void: 0
  await callAt('alice', 'm6', 1, '0.4', { madeAt: made }); // won 8 days ago: +15, xp 64 (not in profit_7d)
  await callAt('alice', 'm7', 0, '0.1', { madeAt: made }); // open
  await callAt('bob', 'm1', 0, '0.25', { copiedFrom: a1.id, madeAt: made }); // won +30, xp 78
  await callAt('carol', 'm3', 0, '0.5', { copiedFrom: a3.id, madeAt: made }); // won +10, xp 55
  await callAt('dave', 'm1', 0, '0.25', { madeAt: made }); // won +30, xp 78: ties bob on profit
  await callAt('alice', 'm1', 0, '0.25', { copiedFrom: a1.id, madeAt: made }); // her own copy: not a copy by others; won +30, xp 78
  // alice's combo m3 Yes 0.5 × m4 Yes 0.8 = 0.4, both won: xp_if_right(0.4) = 64, × 2 legs = 128
  await setChance(tr.redis, tr.prefix, 'm3', 0, '0.5');
  await setChance(tr.redis, tr.prefix, 'm4', 0, '0.8');
  await records.recordCombo({ handle: 'alice', legs: [{ marketId: 'm3', outcomeIndex: 0 }, { marketId: 'm4', outcomeIndex: 0 }] });
  await records.follow('bob', 'alice');
  await records.follow('carol', 'alice');
  await records.follow('alice', 'bob');

  // Settled in the past, as of these times: the settlement jobs the resolutions owe would settle
  // them as of now (m6 then counted in profit_7d and as her newest call), so they are held.
  await withSettlementHeld(async () => {
    await settleAt('m6', 1, new Date(now - 8 * DAY));
    await settleAt('m2', 1, new Date(now - 3 * DAY));
    await settleAt('m1', 0, new Date(now - 2 * DAY));
    await settleAt('m3', 0, new Date(now - 1 * DAY));
    await settleAt('m4', 0, new Date(now - 3600_000));
    await settleAt('m5', null, new Date(now - 1800_000));
  });
}

/** alice's record once everything the scenario set in motion is done (no job can change it after). */
async function aliceProjected() {
  await pipelineIdle();
  return recordOf('alice');
}

describe('a record and the calls behind it', () => {
  it('agrees with hand-computed figures, and the leaderboard rows agree with the records', async () => {
    await aliceScenario();

    // alice: calls 8; settled 7 (won 5: m1 ×2, m3, m4, m6; lost 1: m2; void 1: m5); right_pct round(100 × 5/6) = 83;
    // profit 30 + 30 − 10 + 10 + 2.5 + 0 + 15 = 77.5; profit_7d 77.5 − 15 = 62.5;
    // streak: newest non-void first m4 won, m3 won, m1 won ×2, then m2 lost → 4;
    // xp 78 × 2 + 55 + 28 + 64 + 128 (combo) = 431; copies 2 (bob, carol); followers 2; following 1.
    const alice = await aliceProjected();
    // brier over the won and lost calls: (0.25 − 1)² × 2 + (0.4 − 0)² + (0.5 − 1)² + (0.8 − 1)² + (0.4 − 1)²
    // = 1.125 + 0.16 + 0.25 + 0.04 + 0.36 = 1.935; no market closed with a live chance here, so no clv.
    // Her newest settlement is m5's (void, half an hour ago).
    expect(alice).toEqual({
      user_id: ids.alice, calls: 8, settled: 7, won: 5, lost: 1, right_pct: 83, profit_on_10: 77.5, profit_7d: 62.5,
      xp: 431, streak: 4, followers: 2, following: 1, copies: 2,
      brier_sum: '1.9350', clv_calls: 0, clv_sum: '0', last_settled_at: expect.any(Date),
    });
    const sinceLast = Date.now() - (alice as unknown as { last_settled_at: Date }).last_settled_at.getTime();
    expect(sinceLast).toBeGreaterThan(29 * 60_000);
    expect(sinceLast).toBeLessThan(40 * 60_000);
    expect(await recordOf('bob')).toMatchObject({ calls: 1, settled: 1, won: 1, right_pct: 100, profit_on_10: 30, profit_7d: 30, xp: 78, streak: 1, followers: 1, following: 1, copies: 0 });
    // erin has no calls: her row is the UserCreated projection's, done by the time the pipeline is idle.
    expect(await recordOf('erin')).toMatchObject({ calls: 0, settled: 0, right_pct: 0, profit_on_10: 0, xp: 0, streak: 0 });

    const board: Array<{ sort: string; rank: number; handle: string; profit_on_10: string; right_pct: number; settled: number; xp: number }> =
      await eventually(
        () => tdb.db.query(sql`
          select l.sort, l.rank, u.handle, r.profit_on_10, r.right_pct, r.settled, r.xp
          from leaderboard_rows l join users u on u.id = l.user_id join user_records r on r.user_id = l.user_id
          order by l.sort, l.rank`),
        (rows) => rows.length === 13,
      );
    const of = (sort: string) => board.filter((r) => r.sort === sort).map((r) => [r.rank, r.handle]);
    // profit: alice 77.5; bob and dave 30 with 1 settled each (handle order); carol 10. erin has no settled call.
    expect(of('profit')).toEqual([[1, 'alice'], [2, 'bob'], [3, 'dave'], [4, 'carol']]);
    // right: only alice has 5 or more settled calls.
    expect(of('right')).toEqual([[1, 'alice']]);
    expect(of('xp')).toEqual([[1, 'alice'], [2, 'bob'], [3, 'dave'], [4, 'carol']]);
    expect(of('week')).toEqual([[1, 'alice'], [2, 'bob'], [3, 'dave'], [4, 'carol']]);
    const aliceRow = board.find((r) => r.sort === 'profit' && r.handle === 'alice');
    expect(aliceRow).toMatchObject({ profit_on_10: '77.50', right_pct: alice!.right_pct, settled: alice!.settled, xp: alice!.xp });
  }, 60_000);

  it('counts each person once in a market split, on the side of their latest call', async () => {
    const now = Date.now();
    await callAt('erin', 'm8', 0, '0.3', { madeAt: new Date(now - 2000) });
    await callAt('erin', 'm8', 1, '0.7', { madeAt: new Date(now - 1000) }); // changed her mind
    await callAt('bob', 'm8', 0, '0.3');
    await callAt('carol', 'm8', 0, '0.3');
    const splits = await eventually(
      () => tdb.db.query(sql`select outcome_index, people from market_splits where market_id = 'm8' order by outcome_index`) as Promise<Array<{ outcome_index: number; people: number }>>,
      (rows) => rows.length === 2 && rows[0]!.people === 2,
    );
    expect(splits).toEqual([{ outcome_index: 0, people: 2 }, { outcome_index: 1, people: 1 }]);
    // m2 called by alice alone, on Yes: the No side shows 0 rather than missing.
    await callAt('alice', 'm2', 0, '0.4');
    expect(await eventually(
      () => tdb.db.query(sql`select outcome_index, people from market_splits where market_id = 'm2' order by outcome_index`),
      (rows) => rows.length > 0,
    )).toEqual([
      { outcome_index: 0, people: 1 },
      { outcome_index: 1, people: 0 },
    ]);
  }, 60_000);
});

describe('rebuild', () => {
  it('gives row for row the projections the incremental path gave', async () => {
    // The window records count settlements from their first build on (before it, the API reads the calls).
    await rebuildProjections(tdb.db, new Date());
    await aliceScenario();
    await aliceProjected();
    // A settlement through the real queue, then a burst of calls: the coalesced jobs must drain.
    await logResolution(tdb.db, 'm7', 1);
    const settlement = new Queue('settlement', { connection: tr.redis, prefix: queuePrefix(tr.prefix) });
    await settlement.add('settle-market', { marketId: 'm7' }, { jobId: 'settle-m7' });
    await settlement.close();
    for (let i = 0; i < 20; i++) await callAt(['bob', 'carol', 'dave', 'erin'][i % 4]!, 'm8', i % 2, '0.45');
    // The rows are read after the work was seen idle, so they include everything done by then.
    await pipelineIdle();
    // The window upkeep as of the rebuild's instant: calls that left a window since the first build
    // (m3, settled a day before the scenario's start) leave the kept rows as they do the rebuilt ones.
    const at = new Date();
    await upkeepWindows(tdb.db, at);
    const incremental = await projectionRows();
    const userRows = incremental.user_records as Array<{ calls: number; settled: number; user_id: number }>;
    expect(userRows.length).toBe(5);
    expect(userRows.find((r) => r.user_id === ids.alice)?.settled).toBe(8);
    expect(userRows.find((r) => r.user_id === ids.erin)?.calls).toBe(5);
    expect(incremental.user_window_records.length).toBeGreaterThan(0);
    await rebuildProjections(tdb.db, at);
    expect(await projectionRows()).toEqual(incremental);
    const versions: Array<{ name: string; version: number }> = await tdb.db.query(sql`select name, version from projection_versions order by name`);
    expect(versions.map((v) => v.name)).toEqual(['leaderboard_rows', 'market_splits', 'user_field_records', 'user_records', 'user_window_records']);
  }, 60_000);

  it('is requested at start only when a projection was never built or changed version, and runs as a job', async () => {
    // Projections built at their current versions, from the scenario's records.
    await aliceScenario();
    await aliceProjected();
    await rebuildProjections(tdb.db, new Date());
    expect(await requestRebuildIfStale(tdb.db, tr.redis, tr.prefix)).toBe(false);
    const before = await projectionRows();
    await tdb.db.query(sql`truncate user_records, leaderboard_rows, market_splits`);
    await tdb.db.query(sql`delete from projection_versions where name = 'user_records'`);
    expect(await requestRebuildIfStale(tdb.db, tr.redis, tr.prefix)).toBe(true);
    await pipelineIdle();
    expect(await projectionRows()).toEqual(before);
  }, 60_000);
});

describe('the 7-day window', () => {
  it('moves with the clock: a quiet batch 8 days later takes last week\'s profit out of profit_7d and the week board', async () => {
    await aliceScenario();
    const before = await aliceProjected();
    expect(before!.profit_7d).toBeGreaterThan(0);
    clockOffsetMs = 8 * DAY;
    const projections = new Queue('projections', { connection: tr.redis, prefix: queuePrefix(tr.prefix) });
    // What the job scheduler adds every 10 minutes: a batch without ids.
    await projections.add('project-users', { userIds: [], marketIds: [] });
    await projections.close();
    await pipelineIdle();
    expect(await recordOf('alice')).toEqual({ ...before, profit_7d: 0 });
    const week: Array<{ n: number }> = await tdb.db.query(sql`select count(*)::int as n from leaderboard_rows where sort = 'week'`);
    expect(week[0]!.n).toBe(0);
  }, 60_000);
});
