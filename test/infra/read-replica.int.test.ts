import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import pg from 'pg';
import { loadConfig } from '@pm/shared/config';
import { createDb, ensureDatabase, migrate, postgresCheck, sql, type Db, type ReadPool } from '@pm/shared/db';
import { checkReadiness } from '@pm/shared/ops';
import { isConnectionLoss } from '@pm/shared/records';
import { createServiceMetrics, type ServiceMetrics } from '@pm/shared/metrics';
import { createPageReader, type PageReader } from '../../services/api/src/pages/pages.js';
import { createApiReadPool } from '../../services/api/src/pages/read-pool.js';
import { insertRecordsFixture, WEB_URL, type SeededIds } from '../../services/worker/src/record-snapshots/test-fixture.js';
import { startPostgresReplica, type PostgresReplica } from '../../scripts/lib/pg-replica.js';
import { freePort } from '../support/stack.js';
import { startOwnPostgres, type OwnPostgres } from '../support/own-servers.js';
import { until } from '@pm/shared/wait';

/**
 * The API's read replica (DATABASE_READ_URL): a Postgres of the test's own with a streaming replica of
 * it (scripts/lib/pg-replica.ts, Postgres's own replication), and the API's page reader on its read
 * pool (services/api/src/pages/read-pool.ts). Page reads land on the replica; a replica stopped in the
 * middle of a walk through a list costs no request; a replica that stops replaying is read around
 * before a settlement on a person's page could be late.
 */

const MAX_LAG_MS = 500;

let own: OwnPostgres;
let replica: PostgresReplica;
let primaryDb: Db;
let primaryUrl: string;
let ids: SeededIds;
let metrics: ServiceMetrics<'api'>;
let readDb: ReadPool;
let pages: PageReader;

beforeAll(async () => {
  own = await startOwnPostgres();
  const url = new URL(own.url);
  url.pathname = '/pm_read_replica';
  primaryUrl = url.toString();
  await ensureDatabase(primaryUrl);
  await migrate(primaryUrl);
  primaryDb = createDb(primaryUrl, { poolSize: 2 });
  ids = await insertRecordsFixture(primaryDb);
  replica = await startPostgresReplica({ primaryUrl, port: await freePort(), primaryDataDir: own.dataDir });
  metrics = createServiceMetrics('api');
  const config = loadConfig({ DATABASE_URL: primaryUrl, DATABASE_READ_URL: replica.url, DATABASE_READ_MAX_LAG_MS: String(MAX_LAG_MS) });
  readDb = createApiReadPool(config, pino({ level: 'silent' }), metrics);
  pages = createPageReader({ db: readDb, webUrl: WEB_URL, logger: pino({ level: 'silent' }) });
  await until('reads to go to the replica', async () => readDb.state().target === 'replica', { timeoutMs: 20_000, everyMs: 50 });
}, 120_000);

afterAll(async () => {
  await pages?.close();
  await primaryDb?.dispose();
  await replica?.stop();
  await own?.stop();
});

/** api_db_reads_total by server, as /metrics shows it. */
async function reads(): Promise<{ replica: number; primary: number }> {
  const { values } = await metrics.metric.dbReads.get();
  const of = (server: string) => values.find((v) => v.labels['server'] === server)?.value ?? 0;
  return { replica: of('replica'), primary: of('primary') };
}

/** Every page of the calls list, `limit` a page, as the API walks it with `next_cursor`; `between` runs after each page. */
async function walk(limit: number, between: (page: number) => Promise<void> = async () => {}): Promise<{ shown: string[]; pages: number }> {
  const shown: string[] = [];
  // The first page of the list is the worker's snapshot in the API; here it is the page after the newest call.
  const [newest] = (await primaryDb.query(sql`select id from calls order by made_at desc, id desc limit 1`)) as Array<{ id: string }>;
  let after: string | null = newest!.id;
  shown.push(after);
  let n = 0;
  for (; after !== null; n++) {
    const page = await pages.calls({ market: null, after, limit });
    shown.push(...page.bodies.map((b) => (JSON.parse(b) as { id: string }).id));
    after = page.nextAfter === null ? null : String(page.nextAfter);
    await between(n);
  }
  return { shown, pages: n };
}

/** Sessions on the replica in the test's database, with the last statement each ran. */
async function replicaSessions(): Promise<Array<{ query: string }>> {
  const client = new pg.Client({ connectionString: replica.url });
  await client.connect();
  try {
    return (await client.query<{ query: string }>(`select query from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`)).rows;
  } finally {
    await client.end();
  }
}

describe('the API read replica (DATABASE_READ_URL)', () => {
  it('sends page reads to the replica: its counter grows, and the replica\'s pg_stat_activity shows the page statements', async () => {
    const before = await reads();
    const { shown, pages: walked } = await walk(2);
    const [all] = (await primaryDb.query(sql`select count(*)::int as n from calls`)) as Array<{ n: number }>;
    expect(shown).toHaveLength(all!.n);
    const call = await pages.call('a7');
    expect(call).toContain('"id":"a7"');
    const after = await reads();
    expect(after.replica - before.replica).toBe(walked + 1);
    expect(after.primary - before.primary).toBe(0);
    const sessions = await replicaSessions();
    // The pool's sessions on the replica, each showing the last page statement it ran.
    expect(sessions.filter((s) => /from calls/.test(s.query)).length, JSON.stringify(sessions.map((s) => s.query.slice(0, 200)))).toBeGreaterThan(0);
    expect(readDb.state()).toMatchObject({ target: 'replica', reason: null });
  });

  it('a replica stopped in the middle of a walk: every page still answered (by the primary), the same walk as with it', async () => {
    const whole = await walk(1);
    const before = await reads();
    const walked = await walk(1, async (page) => {
      if (page === 3) await replica.halt();
    });
    expect(walked.shown).toEqual(whole.shown);
    const after = await reads();
    // Pages 0–3 on the replica, the rest on the primary.
    expect(after.primary - before.primary).toBe(whole.pages - 4);
    expect(readDb.state().target).toBe('primary');
    // Back: reads return to it once it streams again.
    await replica.start();
    await until('reads back on the replica', async () => readDb.state().target === 'replica', { timeoutMs: 20_000, everyMs: 50 });
    const again = await reads();
    await walk(5);
    expect((await reads()).replica).toBeGreaterThan(again.replica);
  }, 60_000);

  it('a replica that stops replaying is read around past the lag bound: a settlement shows on the person\'s page within it', async () => {
    const probe = new pg.Client({ connectionString: replica.url });
    await probe.connect();
    try {
      await probe.query('select pg_wal_replay_pause()');
      const record = async () => JSON.parse((await pages.user('carol'))!) as { user: { settled: number } };
      expect((await record()).user.settled).toBe(0);
      await primaryDb.query(sql`insert into user_records (user_id, calls, settled, lost) values (${ids.carol}, 1, 1, 1)`);
      const committedAt = Date.now();
      const shownAfter = await until('the settlement on carol\'s page', async () => ((await record()).user.settled === 1 ? Date.now() - committedAt : undefined), {
        timeoutMs: 10_000,
        everyMs: 20,
      });
      // Read from the primary once the replica's lag passed the bound (plus the probe's period).
      expect(shownAfter).toBeLessThan(MAX_LAG_MS + 1_000);
      expect(readDb.state().reason).toMatch(/lag/);
    } finally {
      await probe.query('select pg_wal_replay_resume()');
      await probe.end();
    }
    await until('reads back on the replica', async () => readDb.state().target === 'replica', { timeoutMs: 20_000, everyMs: 50 });
  }, 30_000);

  it('the primary away: pages keep being read from the replica', async () => {
    const alice = async () => (JSON.parse((await pages.user('alice'))!) as { user: { calls: number } }).user.calls;
    await own.restart({
      whileDown: async () => {
        // Once the probe has seen the primary gone (a read begun before it may fail on the primary, as without a replica).
        await until('reads on the replica with the primary away', async () => readDb.state().target === 'replica' && (await alice().then(() => true, () => false)), { timeoutMs: 10_000, everyMs: 50 });
        for (let i = 0; i < 10; i++) expect(await alice()).toBe(7);
        expect((await pages.calls({ market: null, after: 'c1', limit: 3 })).bodies).toHaveLength(3);
      },
    });
    await until('the replica streaming again', async () => readDb.state().target === 'replica' && readDb.state().lagMs !== null, { timeoutMs: 30_000, everyMs: 100 });
  }, 60_000);

  it('a writer\'s readiness check pointed at the replica says it is a standby, not the primary; on the primary it passes', async () => {
    const onReplica = createDb(replica.url, { poolSize: 1 });
    try {
      const host = `127.0.0.1:${new URL(replica.url).port}`;
      expect((await checkReadiness({ postgres: postgresCheck(onReplica, replica.url) })).checks['postgres']).toMatchObject({
        ok: false,
        error: `Postgres at ${host} is a read-only standby (in recovery), not the primary`,
      });
      expect((await checkReadiness({ postgres: postgresCheck(primaryDb, primaryUrl) })).checks['postgres']).toMatchObject({ ok: true });
    } finally {
      await onReplica.dispose();
    }
  });

  it('a write on a connection that reached a standby (a failover\'s old primary, a proxy not yet moved) is a lost connection: retried by the writers\' rules, and the connection dropped from the pool', async () => {
    const onReplica = createDb(replica.url, { poolSize: 1 });
    try {
      const pid = async () => ((await onReplica.query(sql`select pg_backend_pid() as pid`)) as Array<{ pid: number }>)[0]!.pid;
      const before = await pid();
      const err = await onReplica.query(sql`insert into thesis_updates (call_id, body) values ('a7', 'on a standby')`).catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe('25006');
      expect(isConnectionLoss(err)).toBe(true);
      // The pool's one connection was closed, not handed out again: the next statement has a new session.
      expect(await pid()).not.toBe(before);
    } finally {
      await onReplica.dispose();
    }
  });
});
