import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Queue } from 'bullmq';
import { createLogger } from '@pm/shared/logger';
import { createDb, ensureDatabase, migrate, sql, type Db } from '@pm/shared/db';
import { comboStatus, comboXp, type SettlementStatus } from '@pm/shared/domain';
import { createSnapshotTrigger, queuePrefix, settleJobId } from '@pm/shared/queues';
import { createRecordsTrigger, projectionUsersDirtyKey, recordsDirtyKey } from '@pm/shared/records';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { sleep, until } from '@pm/shared/wait';
import { rebuildProjections } from '../../services/worker/src/projections/index.js';
import { settleMarket } from '../../services/worker/src/settlement/index.js';
import { createOutboxRelay } from '../../services/worker/src/outbox/relay.js';
import { generateDataset, resolveMarket } from '../support/records-dataset.js';
import { startOwnPostgres, type OwnPostgres } from '../support/own-servers.js';

/**
 * Fault suite: a market settling in parts (services/worker/src/settlement/settle-market.ts), with
 * the worker SIGKILLed at 20 random moments and Postgres restarted once in the middle, while a second
 * run of the same market (what the reconciler's re-enqueue to another worker amounts to) settles
 * beside it. Afterwards every call is settled once, every combo with a leg on the market decided
 * once, the people's records and the boards equal a recomputation from the calls, and the outbox
 * owes no projection and nothing unsent.
 *
 * The moments come from a seed, printed first: SETTLE_FAULT_SEED=<seed> reruns the same fault
 * points (the share of the market's calls settled when each kill comes, and a delay after it).
 * Size: SETTLE_FAULT_CALLS (default 10,000 calls by as many people, in parts of a fiftieth of that:
 * the CI size); SETTLE_FAULT_CALLS=100000 is the full size of the promise (a few minutes here).
 * Postgres is a server of this file's own; Redis is the shared one under a prefix of its own.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const killChild = path.resolve(here, '../../services/worker/src/settlement/kill-child.ts');
const CALLS = Number(process.env['SETTLE_FAULT_CALLS'] ?? 10_000);
const PART_CALLS = Math.max(50, Math.round(CALLS / 50));
const KILLS = 20;
const SEED = process.env['SETTLE_FAULT_SEED'] !== undefined ? Number(process.env['SETTLE_FAULT_SEED']) : Date.now() % 2 ** 31;

/** The kills, in order: when this share of the calls is settled, wait `delayMs`, then SIGKILL. The restart comes after kill 10. */
const plan = fc.sample(
  fc.record({
    // Unbiased: fast-check's default leans to the small end, which put most kills in the first part.
    kills: fc.array(fc.record({ share: fc.noBias(fc.integer({ min: 0, max: 900 })).map((n) => n / 1000), delayMs: fc.noBias(fc.integer({ min: 0, max: 400 })) }), {
      minLength: KILLS,
      maxLength: KILLS,
    }),
    restartDelayMs: fc.noBias(fc.integer({ min: 0, max: 400 })),
  }),
  { seed: SEED, numRuns: 1 },
)[0]!;
plan.kills.sort((a, b) => a.share - b.share);

const logger = createLogger('fault-settle-parts', { LOG_LEVEL: 'silent' });
let own: OwnPostgres;
let dbUrl: string;
let db: Db;
let tr: TestRedis;
const teardown = new AsyncDisposableStack();
afterAll(() => teardown.disposeAsync(), 120_000);

beforeAll(async () => {
  own = teardown.use(await startOwnPostgres());
  tr = teardown.use(await createTestRedis('fault_parts'));
  const url = new URL(own.url);
  url.pathname = '/pm_fault_parts';
  dbUrl = url.toString();
  await ensureDatabase(dbUrl);
  await migrate(dbUrl);
  db = teardown.adopt(createDb(dbUrl, { poolSize: 4 }), (d) => d.dispose());
  // The market `hot`: one open call by each of CALLS people, and a combo per 50 calls with a leg on
  // it whose other leg is decided already (so its part decides the combo).
  await generateDataset(db, { calls: CALLS * 2, users: CALLS, hot: CALLS });
  // Every other call settled more than a week ago: no record's week figure moves by the clock while
  // the test runs, so a recomputation at its end is comparable to what the settlement left.
  await db.query(sql`update calls set made_at = made_at - interval '10 days', settled_at = settled_at - interval '10 days' where market_id <> 'hot'`);
  await rebuildProjections(db, new Date());
  await resolveMarket(db, 'hot', 0);
}, 600_000);

const openOnHot = async () => ((await db.query(sql`select count(*)::int as n from calls where market_id = 'hot' and status = 'open'`)) as Array<{ n: number }>)[0]!.n;

function startChild(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', killChild, JSON.stringify({ databaseUrl: dbUrl, redisUrl: tr.url, prefix: tr.prefix, partCalls: PART_CALLS })], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

/** The people's records as figures (not their time), and every board's ranks. */
async function recordsAndBoards(): Promise<{ records: unknown[]; boards: unknown[] }> {
  const records = await db.query(sql`
    select user_id, calls, settled, won, lost, right_pct, profit_on_10::text as profit_on_10, profit_7d::text as profit_7d, xp, streak,
           followers, following, copies, brier_sum::numeric(40,20)::text as brier_sum, clv_sum::numeric(40,20)::text as clv_sum, clv_calls
    from user_records order by user_id`);
  const boards = await db.query(sql`select sort, rank, user_id from leaderboard_rows order by sort, rank`);
  return { records, boards };
}

describe(`a market of ${CALLS.toLocaleString('en')} calls settling in parts`, () => {
  it(`settles each call and combo once through ${KILLS} worker kills and a Postgres restart, its records and boards equal to a recomputation`, async () => {
    console.log(`[fault] settlement in parts: seed ${SEED} (SETTLE_FAULT_SEED=${SEED} reruns these fault points), ${CALLS} calls in parts of ${PART_CALLS}`);
    const started = Date.now();
    const queue = teardown.adopt(new Queue('settlement', { connection: tr.redis, prefix: queuePrefix(tr.prefix) }), (q) => q.close());
    await queue.add('settle-market', { marketId: 'hot' }, { jobId: settleJobId('hot'), attempts: 1000, backoff: { type: 'fixed', delay: 200 } });
    let child = startChild();
    teardown.defer(() => kill(child));
    let rival: Promise<unknown> | undefined;
    const killedAt: number[] = [];
    for (const [i, fault] of plan.kills.entries()) {
      const settledShare = async () => (CALLS - (await openOnHot())) / CALLS >= fault.share;
      await until(`${Math.round(fault.share * 100)} % of the calls settled (kill ${i + 1})`, settledShare, { timeoutMs: 300_000, everyMs: 20 });
      await sleep(fault.delayMs); // the fault point's own delay after its share, drawn from the seed
      killedAt.push(CALLS - (await openOnHot()));
      await kill(child);
      child = startChild();
      if (i === KILLS / 2 - 1) {
        // Postgres goes down in the middle of a part (the new worker is at work, or the rival below).
        await sleep(plan.restartDelayMs); // the restart moment drawn from the seed, not a wait for a result
        await own.restart();
        // A second run of the market beside the worker's, as a re-enqueue by the reconciler on
        // another worker would make it.
        rival = settleMarket(db, 'hot', new Date(), { partCalls: PART_CALLS });
        rival.catch(() => {}); // awaited (and its failure reported) after the kills
      }
    }
    console.log(`[fault] kills at settled calls: ${killedAt.join(', ')}`);
    await until('the market settled', async () => ((await db.query(sql`select settled_at is not null as done from markets where id = 'hot'`)) as Array<{ done: boolean }>)[0]!.done, {
      timeoutMs: 600_000,
    });
    await until('the job completed', async () => (await queue.getJobState(settleJobId('hot'))) === 'completed', { timeoutMs: 120_000 });
    await rival;
    await kill(child);
    console.log(`[fault] settlement in parts: ${CALLS} calls settled through ${KILLS} kills and a Postgres restart in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    // Every call settled once, by the rule: won on outcome 0, lost on 1, the profit and XP of its chance.
    const [calls] = (await db.query(sql`
      select count(*)::int as n,
             count(*) filter (where status = case outcome_index when 0 then 'won' else 'lost' end)::int as right_status,
             count(*) filter (where profit_on_10 = case status when 'won' then round(10 / chance_at_call - 10, 2) else -10 end
                               and xp_awarded = case status when 'won' then 10 + round(90 * (1 - chance_at_call))::int else 0 end
                               and settled_at is not null)::int as right_figures
      from calls where market_id = 'hot'`)) as Array<{ n: number; right_status: number; right_figures: number }>;
    expect(calls).toEqual({ n: CALLS, right_status: CALLS, right_figures: CALLS });
    expect(((await db.query(sql`select settle_progress from markets where id = 'hot'`)) as Array<{ settle_progress: unknown }>)[0]!.settle_progress).toBeNull();

    // Every combo with a leg on the market decided once, as its legs say.
    const legs: Array<{ id: string; status: SettlementStatus; xp: number | null; leg_status: SettlementStatus; chance: string }> = await db.query(sql`
      select k.id, k.status, k.xp_awarded as xp, l.status as leg_status, l.chance_at_call::text as chance
      from combos k join combo_legs l on l.combo_id = k.id
      where k.id in (select combo_id from combo_legs where market_id = 'hot')
      order by k.id, l.leg_index`);
    const combos = new Map<string, { status: SettlementStatus; xp: number | null; legs: Array<{ status: SettlementStatus; chance: number }> }>();
    for (const l of legs) {
      const c = combos.get(l.id) ?? { status: l.status, xp: l.xp, legs: [] };
      c.legs.push({ status: l.leg_status, chance: Number(l.chance) });
      combos.set(l.id, c);
    }
    expect(combos.size).toBeGreaterThan(0);
    for (const [id, c] of combos) {
      const status = comboStatus(c.legs.map((l) => l.status));
      expect({ id, status: c.status, xp: c.xp }).toEqual({ id, status, xp: comboXp(c.legs) });
    }

    // Records and boards equal to a recomputation from the calls (a combo or call counted twice, or
    // a part applied twice, would show here).
    const kept = await recordsAndBoards();
    await rebuildProjections(db, new Date());
    const recomputed = await recordsAndBoards();
    expect(kept.records).toEqual(recomputed.records);
    expect(kept.boards).toEqual(recomputed.boards);

    // The outbox owes nothing: no row asks for a projection (every part projected its people in its
    // own transaction), and a relay sends every row, the snapshots of the market and the boards among them.
    const rows: Array<{ in_tx: boolean }> = await db.query(sql`
      select coalesce(payload ->> 'projectedInTx', 'false') = 'true' as in_tx from outbox where topic = 'market-settled' and payload ->> 'marketId' = 'hot'`);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.in_tx)).toBe(true);
    const records = teardown.adopt(createRecordsTrigger({ redis: tr.redis, prefix: tr.prefix }), (t) => t.close());
    const snapshots = teardown.adopt(createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix }), (t) => t.close());
    const relay = createOutboxRelay({ db, connection: tr.redis, prefix: tr.prefix, records, snapshots, logger });
    try {
      await relay.drain();
    } finally {
      await relay.stop();
    }
    expect(((await db.query(sql`select count(*)::int as n from outbox where sent_at is null`)) as Array<{ n: number }>)[0]!.n).toBe(0);
    expect(await tr.redis.smembers(projectionUsersDirtyKey(tr.prefix))).toEqual([]);
    expect(await tr.redis.smembers(recordsDirtyKey(tr.prefix))).toEqual(expect.arrayContaining(['leaderboard', 'market:hot', 'combos']));
  }, 1_800_000);
});
