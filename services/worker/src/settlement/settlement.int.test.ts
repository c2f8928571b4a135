import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createLogger } from '@pm/shared/logger';
import { queuePrefix, type JobData } from '@pm/shared/queues';
import { sql } from '@pm/shared/db';
import { profitOn10, round2, xpIfRight } from '@pm/shared/domain';
import { createRecords, createRecordsTrigger, recordsDirtyKey, type Records } from '@pm/shared/records';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import * as waiting from '@pm/shared/wait';
import { useFreshStores } from '../testing/stores.js';
import { createStreamWriter, toStreamEntry, type StreamWriter } from '@pm/shared/stream';
import { redisKeys } from '@pm/shared/redis';
import { projectChanges } from '../projections/run.js';
import { createSettleMarketProcessor } from './processor.js';
import { settleMarket, type SettleOptions } from './settle-market.js';
import { loadCatalog } from '../market-snapshots/catalog.js';
import { buildMarket } from '../market-snapshots/payloads.js';
import { insertMarkets, logResolution, setChance } from './test-fixture.js';

/**
 * Exactly once: the same resolution delivered twice, concurrently, and with the worker killed
 * mid-job, settles each call and combo once — profit and XP sums prove it. And the combo rules.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const logger = createLogger('settlement-test', { LOG_LEVEL: 'silent' });
let tdb: TestDatabase;
let tr: TestRedisPrefix;
let records: Records;
let queue: Queue<JobData['settle-market']>;
let stream: StreamWriter;
const CHANCES = ['0.2', '0.35', '0.5', '0.65', '0.8'];

const stores = useFreshStores('settlement');

// Each test: the markets and four people with no calls, an empty Redis prefix and its own queue.
beforeEach(async () => {
  ({ tdb, tr } = stores);
  await insertMarkets(tdb.db, ['twice', 'race', 'killed', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'bad']);
  records = createRecords({ db: tdb.db, redis: tr.redis, prefix: tr.prefix });
  queue = new Queue('settlement', { connection: tr.redis, prefix: queuePrefix(tr.prefix) });
  stream = createStreamWriter({ redis: tr.redis, prefix: tr.prefix, logger });
  for (const h of ['ann', 'ben', 'cat', 'dan']) await records.createUser({ handle: h, displayName: h });
});

afterEach(async () => {
  for (const c of connections.splice(0)) c.disconnect();
  await stream?.close();
  await queue?.close();
  await records?.close();
});

/** 20 calls on a market: each person on each outcome at varying chances. */
async function callsOn(marketId: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const outcome = i % 2;
    await setChance(tr.redis, tr.prefix, marketId, outcome, CHANCES[i % CHANCES.length]!);
    await records.recordCall({ handle: ['ann', 'ben', 'cat', 'dan'][i % 4]!, marketId, outcomeIndex: outcome, thesis: 't' });
  }
}

/** Profit and XP the calls of a market must total once settled with `winner`, computed here from their chances. */
async function expectedTotals(marketId: string, winner: number): Promise<{ profit: number; xp: number }> {
  const rows: Array<{ outcome_index: number; chance_at_call: string }> = await tdb.db.query(sql`select outcome_index, chance_at_call from calls where market_id = ${marketId}`);
  let profit = 0;
  let xp = 0;
  for (const r of rows) {
    const c = Number(r.chance_at_call);
    // The domain's decimal-safe rounding: 90 × (1 − 0.35) is 58.4999… in floating point, 58.5 → 59 in numeric.
    const status = r.outcome_index === winner ? 'won' : 'lost';
    profit += profitOn10(status, c)!;
    if (status === 'won') xp += xpIfRight(c);
  }
  return { profit: round2(profit), xp };
}

async function totals(marketId: string) {
  const rows: Array<{ open: number; settled: number; profit: string; xp: number; times: number }> = await tdb.db.query(sql`
    select count(*) filter (where status = 'open')::int as open, count(*) filter (where status <> 'open')::int as settled,
           coalesce(sum(profit_on_10), 0)::text as profit, coalesce(sum(xp_awarded), 0)::int as xp,
           count(distinct settled_at)::int as times
    from calls where market_id = ${marketId}
  `);
  const r = rows[0]!;
  return { open: r.open, settled: r.settled, profit: Number(r.profit), xp: r.xp, times: r.times };
}

const connections: Array<{ disconnect(): void }> = [];
function startWorker(parts?: SettleOptions) {
  const connection = tr.redis.duplicate({ maxRetriesPerRequest: null });
  connections.push(connection);
  return new Worker('settlement', createSettleMarketProcessor({ db: tdb.db, logger, stream, parts }), {
    connection,
    prefix: queuePrefix(tr.prefix),
    concurrency: 2,
    stalledInterval: 500,
  });
}

interface PlanNode {
  'Node Type': string;
  'Heap Fetches'?: number;
  Plans?: PlanNode[];
}

const until = (ok: () => Promise<boolean>, timeoutMs = 15_000) => waiting.until('the settlement jobs', ok, { timeoutMs, everyMs: 50 });


describe('exactly once', () => {
  it('the same resolution delivered twice, to two workers at once, settles each call once', async () => {
    await callsOn('twice');
    await logResolution(tdb.db, 'twice', 0);
    const expected = await expectedTotals('twice', 0);
    const [w1, w2] = [startWorker(), startWorker()];
    try {
      // Two deliveries with distinct job ids (the deterministic id would merge them in the queue;
      // a redelivery after completion or a second source can still reach the processor twice).
      await Promise.all([queue.add('settle-market', { marketId: 'twice' }, { jobId: 'twice-a' }), queue.add('settle-market', { marketId: 'twice' }, { jobId: 'twice-b' })]);
      await until(async () => (await queue.getCompletedCount()) >= 2);
    } finally {
      await Promise.all([w1.close(), w2.close()]);
    }
    expect(await totals('twice')).toEqual({ open: 0, settled: 20, profit: expected.profit, xp: expected.xp, times: 1 });
    expect(expected.xp).toBeGreaterThan(0);

    // The event stream (GET /api/v1/stream) heard of each call once, and of the settlement once.
    await stream.flush();
    const entries = (await tr.redis.xrange(redisKeys(tr.prefix).stream, '-', '+')).map(([id, fields]) => toStreamEntry(id, fields));
    const about = (topic: string) => entries.filter((e) => e.topic === topic).map((e) => JSON.parse(e.data) as Record<string, unknown>).filter((d) => d['market_id'] === 'twice');
    expect(about('call')).toHaveLength(20);
    expect(about('call')[0]).toMatchObject({ handle: 'ann', event: expect.any(String), outcome_index: 0, chance: 0.2 });
    expect(about('settlement')).toEqual([
      { event: expect.any(String), market_id: 'twice', resolved_outcome: 0, voided: false, calls: { won: 10, lost: 10, void: 0 }, closing_chances: null, combo_legs: 0, combos: 0, at: expect.any(String) },
    ]);
  });

  it('in parts by two workers at once, each call once: between parts the market object shows how far it got, and the stream hears once, with the totals', async () => {
    await callsOn('twice');
    await logResolution(tdb.db, 'twice', 1);
    const expected = await expectedTotals('twice', 1);
    // Parts of one person's calls (five each), settled by two workers on two deliveries.
    const [w1, w2] = [startWorker({ partCalls: 1 }), startWorker({ partCalls: 1 })];
    try {
      await Promise.all([queue.add('settle-market', { marketId: 'twice' }, { jobId: 'twice-a' }), queue.add('settle-market', { marketId: 'twice' }, { jobId: 'twice-b' })]);
      await until(async () => (await queue.getCompletedCount()) >= 2);
    } finally {
      await Promise.all([w1.close(), w2.close()]);
    }
    expect(await totals('twice')).toEqual({ open: 0, settled: 20, profit: expected.profit, xp: expected.xp, times: expect.any(Number) });
    await stream.flush();
    const entries = (await tr.redis.xrange(redisKeys(tr.prefix).stream, '-', '+')).map(([id, fields]) => toStreamEntry(id, fields));
    const settlements = entries.filter((e) => e.topic === 'settlement').map((e) => JSON.parse(e.data) as Record<string, unknown>);
    expect(settlements).toEqual([
      { event: expect.any(String), market_id: 'twice', resolved_outcome: 1, voided: false, calls: { won: 10, lost: 10, void: 0 }, closing_chances: null, combo_legs: 0, combos: 0, at: expect.any(String) },
    ]);

    // The market object as the snapshot build makes it, after each part.
    await callsOn('race');
    await logResolution(tdb.db, 'race', 0);
    const settlingOf = async () => {
      const { events } = await loadCatalog(tdb.db, { ids: ['ev-fixture'] });
      const market = events.flatMap((e) => e.markets).find((m) => m.id === 'race')!;
      return buildMarket(market, new Map(), new Map(), 'https://predict.example').settling;
    };
    expect(await settlingOf()).toBeNull();
    const seen: unknown[] = [];
    await settleMarket(tdb.db, 'race', new Date(), { partCalls: 1, onPart: async () => void seen.push(await settlingOf()) });
    expect(seen).toEqual([{ settled: 5, calls: 20 }, { settled: 10, calls: 20 }, { settled: 15, calls: 20 }, null]);
  });

  it('five settlements of one market racing in parallel change it once', async () => {
    await callsOn('race');
    await logResolution(tdb.db, 'race', 1);
    const expected = await expectedTotals('race', 1);
    const runs = await Promise.all(Array.from({ length: 5 }, (_, i) => settleMarket(tdb.db, 'race', new Date(Date.now() + i))));
    expect(runs.map((r) => r.calls.won + r.calls.lost).sort((a, b) => a - b)).toEqual([0, 0, 0, 0, 20]);
    expect(await totals('race')).toEqual({ open: 0, settled: 20, profit: expected.profit, xp: expected.xp, times: 1 });
  });

  it('waits for a running projection before locking its market: a projection writing that market\'s rows meanwhile finishes, and so does the settlement', async () => {
    await callsOn('race');
    await logResolution(tdb.db, 'race', 0);
    const expected = await expectedTotals('race', 0);
    let settlement: Promise<unknown> | undefined;
    // A projection transaction (the projections lock, as projections/run.ts takes it) that, once the
    // settlement waits for that lock, writes a market_splits row of the settling market: its foreign
    // key takes a key share of the market's row. Had the settlement locked the row first, each would
    // wait for the other and Postgres would fail one ("deadlock detected").
    await tdb.db.tx(async (tx) => {
      await tx.query(sql`select pg_advisory_xact_lock(hashtext('pm:projections'))`);
      settlement = settleMarket(tdb.db, 'race', new Date());
      settlement.catch(() => {}); // awaited below
      await waiting.until(
        'the settlement waiting for the projections lock',
        async () => {
          const [row] = await tdb.db.query(sql`
            select count(*)::int as n from pg_locks
            where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())
          `);
          return (row as { n: number }).n > 0;
        },
        { timeoutMs: 10_000, everyMs: 20 },
      );
      await tx.query(sql`insert into market_splits (market_id, outcome_index, people) values ('race', 0, 1) on conflict do nothing`);
    });
    await settlement;
    expect(await totals('race')).toEqual({ open: 0, settled: 20, profit: expected.profit, xp: expected.xp, times: 1 });
  });

  it('a worker killed mid-job leaves nothing settled; started again, it settles each call once', async () => {
    await callsOn('killed');
    await logResolution(tdb.db, 'killed', 0);
    const expected = await expectedTotals('killed', 0);
    // Hold one of the market's call rows, so the child's settlement transaction blocks half-way
    // (market locked, update under way) until it is killed.
    let killedAt = 0;
    const blocker = await tdb.db.tx(async (tx) => {
      await tx.query(sql`select id from calls where market_id = 'killed' order by id limit 1 for update`);
      const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'kill-child.ts'), JSON.stringify({ databaseUrl: tdb.url, redisUrl: tr.url, prefix: tr.prefix })], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      await queue.add('settle-market', { marketId: 'killed' }, { jobId: 'settle-killed', attempts: 5, backoff: { type: 'exponential', delay: 200 } });
      // The child's transaction waits on our row lock: it is mid-job. (Polled from another
      // connection: inside a transaction pg_stat_activity is one frozen snapshot.)
      await until(async () => {
        const rows: Array<{ n: number }> = await tdb.db.query(sql`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and query like '%update calls%'`);
        return rows[0]!.n > 0;
      }, 20_000);
      child.kill('SIGKILL');
      killedAt = Date.now();
      await new Promise((r) => child.once('exit', r));
      return 'released';
    });
    expect(blocker).toBe('released');
    // The killed transaction rolls back when its server process notices the client is gone.
    await until(async () => {
      const rows: Array<{ n: number }> = await tdb.db.query(sql`
        select count(*)::int as n from pg_stat_activity where datname = current_database() and query like '%update calls%' and state <> 'idle' and pid <> pg_backend_pid()`);
      return rows[0]!.n === 0;
    });
    expect(await totals('killed')).toMatchObject({ open: 20, settled: 0 });
    // A new worker finds the job stalled (its lock expired with the child) and runs it again.
    const worker = startWorker();
    try {
      await until(async () => (await queue.getJobState('settle-killed')) === 'completed', 20_000);
    } finally {
      await worker.close();
    }
    const after = await totals('killed');
    console.log(`[fault] worker SIGKILL mid-settlement: calls settled ${after.settled} of 20 (settle times: ${after.times}); recovered ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
    expect(after).toEqual({ open: 0, settled: 20, profit: expected.profit, xp: expected.xp, times: 1 });
  }, 60_000);

  it('a job for a market without a recorded resolution fails without retrying and stays in the failed set', async () => {
    const worker = startWorker();
    try {
      await queue.add('settle-market', { marketId: 'bad' }, { jobId: 'settle-bad', attempts: 5, backoff: { type: 'exponential', delay: 100 } });
      await until(async () => (await queue.getJobState('settle-bad')) === 'failed');
      const failed = await queue.getJob('settle-bad');
      expect(failed?.attemptsMade).toBe(1);
      expect(failed?.failedReason).toContain('no recorded resolution');
      await queue.add('settle-market', { marketId: '' } as unknown as JobData['settle-market'], { jobId: 'settle-invalid', attempts: 5 });
      await until(async () => (await queue.getJobState('settle-invalid')) === 'failed');
      expect((await queue.getJob('settle-invalid'))?.attemptsMade).toBe(1);
    } finally {
      await worker.close();
    }
  });
});

describe('combos', () => {
  async function combo(legs: Array<[string, number, string]>): Promise<string> {
    for (const [m, o, c] of legs) await setChance(tr.redis, tr.prefix, m, o, c);
    return (await records.recordCombo({ handle: 'ann', legs: legs.map(([marketId, outcomeIndex]) => ({ marketId, outcomeIndex })) })).id;
  }
  async function state(id: string) {
    const rows: Array<{ status: string; xp_awarded: number; legs: string[] }> = await tdb.db.query(sql`
      select c.status, c.xp_awarded, array_agg(l.status order by l.leg_index) as legs
      from combos c join combo_legs l on l.combo_id = c.id where c.id = ${id} group by c.id`);
    return rows[0];
  }
  const settle = async (m: string, winner: number | null) => {
    await logResolution(tdb.db, m, winner);
    await settleMarket(tdb.db, m, new Date());
  };

  it('is lost as soon as one leg is lost, won when every leg won, void when every leg is void, exactly once', async () => {
    const lost = await combo([['c1', 0, '0.5'], ['c2', 0, '0.5']]);
    const won = await combo([['c3', 0, '0.5'], ['c4', 1, '0.8']]);
    const voided = await combo([['c5', 0, '0.3'], ['c6', 0, '0.3']]);
    const partVoid = await combo([['c7', 0, '0.25'], ['c8', 0, '0.6']]);

    await settle('c1', 1);
    expect(await state(lost)).toEqual({ status: 'lost', xp_awarded: 0, legs: ['lost', 'open'] });
    await settle('c2', 0);
    expect(await state(lost)).toEqual({ status: 'lost', xp_awarded: 0, legs: ['lost', 'won'] });

    await settle('c3', 0);
    expect(await state(won)).toMatchObject({ status: 'open', legs: ['won', 'open'] });
    await settle('c4', 1);
    // 0.5 × 0.8 = 0.4: xp_if_right 10 + round(54) = 64, × 2 legs.
    expect(await state(won)).toEqual({ status: 'won', xp_awarded: 128, legs: ['won', 'won'] });

    await settle('c5', null);
    await settle('c6', null);
    expect(await state(voided)).toEqual({ status: 'void', xp_awarded: 0, legs: ['void', 'void'] });

    await settle('c7', 0);
    await settle('c8', null);
    // The void leg drops out: xp_if_right(0.25) = 10 + round(67.5) = 78, × 1 leg.
    expect(await state(partVoid)).toEqual({ status: 'won', xp_awarded: 78, legs: ['won', 'void'] });

    // Settling every market again changes nothing.
    for (const m of ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8']) await settleMarket(tdb.db, m, new Date());
    expect(await state(won)).toEqual({ status: 'won', xp_awarded: 128, legs: ['won', 'won'] });
    const xp: Array<{ total: number }> = await tdb.db.query(sql`select sum(xp_awarded)::int as total from combos`);
    expect(xp[0]!.total).toBe(128 + 78);
  });

  it('two markets settling the last two legs of one combo at once decide it', async () => {
    await insertMarkets(tdb.db, ['p1', 'p2']).catch(() => undefined);
    const id = await combo([['p1', 0, '0.5'], ['p2', 0, '0.5']]);
    await logResolution(tdb.db, 'p1', 0);
    await logResolution(tdb.db, 'p2', 0);
    await Promise.all([settleMarket(tdb.db, 'p1', new Date()), settleMarket(tdb.db, 'p2', new Date())]);
    // 0.25: xp_if_right 78, × 2 legs.
    expect(await state(id)).toEqual({ status: 'won', xp_awarded: 156, legs: ['won', 'won'] });
  });
});

describe('the people of a settlement', () => {
  it('have their records and the boards committed with the settlement: a job that dies right after the commit owes no projection', async () => {
    await insertMarkets(tdb.db, ['bare', 'bare2']);
    await callsOn('bare');
    // A combo of ann's that this settlement decides as won (its other leg already won): its XP is
    // part of the record's delta.
    for (const [m, o] of [['bare', 1], ['bare2', 0]] as const) await setChance(tr.redis, tr.prefix, m, o, '0.5');
    const { id: comboId } = await records.recordCombo({ handle: 'ann', legs: [{ marketId: 'bare', outcomeIndex: 1 }, { marketId: 'bare2', outcomeIndex: 0 }] });
    await logResolution(tdb.db, 'bare2', 0);
    await settleMarket(tdb.db, 'bare2', new Date());
    // Everyone's record current before the settlement (as the write path's projections leave it),
    // so the settlement moves rows rather than making them.
    const people = ((await tdb.db.query(sql`select id from users where handle in ('ann', 'ben', 'cat', 'dan')`)) as Array<{ id: number }>).map((u) => u.id);
    await projectChanges(tdb.db, { userIds: people, marketIds: [] }, new Date());
    await logResolution(tdb.db, 'bare', 1);
    // The transaction alone, as a job that dies right after its commit leaves it.
    await settleMarket(tdb.db, 'bare', new Date());
    // Each person's record against their calls and combos as they now stand.
    const compared: Array<{ handle: string; same: boolean }> = await tdb.db.query(sql`
      select u.handle, (r.settled, r.won, r.lost, r.profit_on_10, r.xp) = (t.settled, t.won, t.lost, t.profit, t.xp + t.combo_xp) as same
      from users u join user_records r on r.user_id = u.id
      cross join lateral (
        select count(*) filter (where c.status <> 'open')::int as settled, count(*) filter (where c.status = 'won')::int as won,
               count(*) filter (where c.status = 'lost')::int as lost, coalesce(sum(c.profit_on_10), 0) as profit,
               coalesce(sum(c.xp_awarded), 0)::int as xp,
               coalesce((select sum(k.xp_awarded) from combos k where k.user_id = u.id and k.status = 'won'), 0)::int as combo_xp
        from calls c where c.user_id = u.id) t
      where u.handle in ('ann', 'ben', 'cat', 'dan') order by u.handle`);
    const [combo] = (await tdb.db.query(sql`select status, xp_awarded from combos where id = ${comboId}`)) as [{ status: string; xp_awarded: number }];
    expect(combo.status).toBe('won');
    expect(combo.xp_awarded).toBeGreaterThan(0);
    const mismatched = compared.filter((c) => !c.same);
    expect(compared).toHaveLength(4);
    expect(mismatched).toEqual([]);
    const board: Array<{ n: number }> = await tdb.db.query(sql`
      select count(*)::int as n from leaderboard_rows l join users u on u.id = l.user_id where l.sort = 'profit' and u.handle in ('ann', 'ben', 'cat', 'dan')`);
    expect(board[0]!.n).toBe(4);
  });

  it('are projected in the settlement\'s own transaction, and the snapshots they show on requested by the job, without a project-users job', async () => {
    await insertMarkets(tdb.db, ['proj']);
    await callsOn('proj');
    await logResolution(tdb.db, 'proj', 0);
    const connection = tr.redis.duplicate({ maxRetriesPerRequest: null });
    connections.push(connection);
    const trigger = createRecordsTrigger({ redis: connection, prefix: tr.prefix });
    const worker = new Worker('settlement', createSettleMarketProcessor({ db: tdb.db, logger, records: trigger }), { connection, prefix: queuePrefix(tr.prefix) });
    try {
      await tr.redis.del(recordsDirtyKey(tr.prefix));
      await queue.add('settle-market', { marketId: 'proj' }, { jobId: 'settle-proj' });
      await until(async () => (await queue.getJobState('settle-proj')) === 'completed');
      // Each person's record counts the calls just settled (five each), with no projection worker running.
      const settled: Array<{ handle: string; settled: number }> = await tdb.db.query(sql`
        select u.handle, r.settled from users u join user_records r on r.user_id = u.id
        where u.handle in ('ann', 'ben', 'cat', 'dan') order by u.handle`);
      const ownSettled: Array<{ handle: string; n: number }> = await tdb.db.query(sql`
        select u.handle, count(*)::int as n from calls c join users u on u.id = c.user_id
        where c.status <> 'open' and u.handle in ('ann', 'ben', 'cat', 'dan') group by u.handle order by u.handle`);
      expect(settled.map((r) => [r.handle, r.settled])).toEqual(ownSettled.map((r) => [r.handle, r.n]));
      expect(settled).toHaveLength(4);
      // The market (whose build remakes its settled calls' listed objects) and the boards are asked
      // for; nothing per call or per person (the API reads a person's record and lists, and a call's
      // page, from Postgres), no combos (none has a leg here).
      const calls: Array<{ id: string }> = await tdb.db.query(sql`select id from calls where market_id = 'proj'`);
      expect(calls).toHaveLength(20);
      const dirty = await tr.redis.smembers(recordsDirtyKey(tr.prefix));
      expect(dirty.sort()).toEqual(['market:proj', 'leaderboard'].sort());
      // The outbox row tells the relay the people are already projected.
      const rows: Array<{ payload: { projectedInTx?: boolean } }> = await tdb.db.query(sql`
        select payload from outbox where topic = 'market-settled' and payload->>'marketId' = 'proj'`);
      expect(rows.map((r) => r.payload.projectedInTx)).toEqual([true]);
    } finally {
      await worker.close();
      await trigger.close();
    }
  });

  it('are vacuumed after a settlement that moved many of them: counting a rank over their records reads the index alone', async () => {
    /** Heap pages a rank count (an index range of a board, migration 0012) had to read to check its entries. */
    const heapFetches = async (): Promise<number> =>
      tdb.db.tx(async (tx) => {
        await tx.query(sql`set local enable_seqscan = off`);
        await tx.query(sql`set local enable_bitmapscan = off`);
        const [row] = (await tx.query(sql`
          explain (analyze, format json) select count(*) from user_records o where o.settled >= 1 and (o.profit_on_10, o.settled) > (-1000000, 0)`)) as Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>;
        const found: PlanNode[] = [];
        const walk = (n: PlanNode) => {
          if (n['Node Type'] === 'Index Only Scan') found.push(n);
          for (const c of n.Plans ?? []) walk(c);
        };
        walk(row!['QUERY PLAN'][0]!.Plan);
        expect(found).toHaveLength(1);
        return found[0]!['Heap Fetches']!;
      });
    async function settleWith(marketId: string, tidyAfter: number): Promise<void> {
      await insertMarkets(tdb.db, [marketId]);
      await callsOn(marketId);
      await logResolution(tdb.db, marketId, 0);
      const connection = tr.redis.duplicate({ maxRetriesPerRequest: null });
      connections.push(connection);
      const worker = new Worker('settlement', createSettleMarketProcessor({ db: tdb.db, logger, tidyAfter }), { connection, prefix: queuePrefix(tr.prefix) });
      try {
        await queue.add('settle-market', { marketId }, { jobId: `settle-${marketId}` });
        await until(async () => (await queue.getJobState(`settle-${marketId}`)) === 'completed');
      } finally {
        await worker.close();
      }
    }
    // Four people moved, fewer than asked for: their rewritten records are left to autovacuum, and the
    // count checks the heap for them.
    await settleWith('few', 5);
    expect(await heapFetches()).toBeGreaterThan(0);
    // As many as asked for: the job vacuums the records before it completes.
    await settleWith('many', 4);
    expect(await heapFetches()).toBe(0);
  });

  it('are settled and the job completes when the Redis its follow-ups write to never answers: the follow-ups are left to the outbox relay after their deadline', async () => {
    await insertMarkets(tdb.db, ['hung']);
    await callsOn('hung');
    await logResolution(tdb.db, 'hung', 0);
    // A server that accepts connections and never replies: a command parked across a failover.
    const sockets: net.Socket[] = [];
    const blackhole = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const hung = new Redis((blackhole.address() as net.AddressInfo).port, '127.0.0.1', { maxRetriesPerRequest: null, lazyConnect: false });
    hung.on('error', () => {});
    const trigger = createRecordsTrigger({ redis: hung, prefix: tr.prefix });
    const connection = tr.redis.duplicate({ maxRetriesPerRequest: null });
    connections.push(connection, hung);
    const processor = createSettleMarketProcessor({ db: tdb.db, logger, records: trigger, followUpDeadlineMs: 300 });
    const worker = new Worker('settlement', processor, { connection, prefix: queuePrefix(tr.prefix) });
    try {
      await queue.add('settle-market', { marketId: 'hung' }, { jobId: 'settle-hung' });
      await until(async () => (await queue.getJobState('settle-hung')) === 'completed', 10_000);
      expect((await totals('hung')).open).toBe(0);
      // The outbox row the relay turns into the same requests.
      const rows: Array<{ n: number }> = await tdb.db.query(sql`select count(*)::int as n from outbox where topic = 'market-settled' and payload->>'marketId' = 'hung'`);
      expect(rows[0]!.n).toBe(1);
    } finally {
      await worker.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => blackhole.close(() => resolve()));
    }
  });
});
