/**
 * npm run bench:settle [-- --calls N --users N --hot N] [--keep  (leave the scratch database for inspection)] [--replica]
 * Makes the data set-based in SQL in a scratch database (dropped afterwards) and a Redis of its own
 * (a throwaway redis-server on a free port: a full build writes over a million snapshots), then:
 *   1. rebuild, first half: every projection (rebuildProjections: `npm run rebuild`);
 *   2. in process, the real code paths on the market `hot2` with `--hot` open calls (default
 *      10,000): settleMarket (the settle-market job's transaction, records and boards included),
 *      and for comparison projectChanges over the same people (the old path, recomputing them whole);
 *      then the rebuild's second half: every record snapshot
 *      (the worker process's full build at start, as its log reports it) over `--calls` calls
 *      (default 1,000,000) of `--users` people (default 50,000)  →  `bench:rebuild calls=… users=… s=…`;
 *   3. end to end: the worker and the API started as processes against that database and Redis; a
 *      `settle-market` job for the market `hot` (`--hot` open calls) is enqueued as the ingestor does,
 *      and the API is read over HTTP until every page that shows a settled call or a moved record
 *      shows what Postgres committed (settle-visible.ts: each call, each moved person's record,
 *      each caller's call lists, the market's, latest and combo lists, each board's row of a moved
 *      person and the kept boards' first pages)
 *      →  `bench:settle calls=… settled_visible_s=…`.
 * With --replica the scratch database lives on a Postgres of the bench's own (embedded, in a temp folder)
 * with a streaming replica of it (scripts/lib/pg-replica.ts), and the API reads the replica
 * (DATABASE_READ_URL): the settlement must still show within the bound, and the replica's lag is
 * sampled every 20 ms through the end-to-end phase (the time from a primary WAL position being noted to
 * the replica having replayed it)  →  `bench:settle replica_lag_ms p50=… p99=… max=…`.
 * A benchmark measures; it asserts nothing beyond the work having been done.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { queuePrefix, settleJobId } from '@pm/shared/queues';
import { sql, type Db } from '@pm/shared/db';
import { createDb, ensureDatabase, lsnBytes, migrate } from '@pm/shared/db';
import { createTestDatabase, freePort, startOwnRedis } from '@pm/shared/testing';
import { startPostgresReplica, type PostgresReplica } from '../../scripts/lib/pg-replica.js';
import { startOwnPostgres, type OwnPostgres } from '../support/own-servers.js';
import { projectChanges, rebuildProjections } from '../../services/worker/src/projections/index.js';
import { settleMarket } from '../../services/worker/src/settlement/index.js';
import { reconcilerEpochKey } from '../../services/worker/src/outbox/reconciler.js';
import { datasetSteps, resolveMarket } from '../support/records-dataset.js';
import { until } from '@pm/shared/wait';
import { BOARDS, pickWatched, readBefore, readExpected, readKeptRanking, waitForSettlement, type Affected, type Expected, type KeptRanking, type Picked } from './settle-visible.js';
import { benchCli } from './cli.js';
import { settleSizes } from './settle-sizes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values } = benchCli('bench:settle', `usage: npm run bench:settle [-- --calls N --users N --hot N --keep]
A 10,000-call settlement seen through the API, and a full rebuild, on a generated scratch database;
prints bench:settle calls=<n> settled_visible_s=<s> and bench:rebuild calls=<n> users=<n> s=<s>.
  --calls N   calls in the generated data (default 1000000)
  --users N   people (default 50000)
  --hot N     open calls on the settled market (default 10000)
  --keep      leave the scratch database for inspection
  --replica   on a Postgres of its own with a streaming replica the API reads; prints the replica's lag
  --hot-sizes N,N,…  instead: one market of each size settled in parts, the first size three times,
              and during the largest small settlements and call writes beside it (settle-sizes.ts)
  --help      this text`, {
    calls: { type: 'string', default: '1000000' },
    users: { type: 'string', default: '50000' },
    hot: { type: 'string', default: '10000' },
    keep: { type: 'boolean', default: false },
    replica: { type: 'boolean', default: false },
    'hot-sizes': { type: 'string' },
});
const CALLS = Number(values.calls);
const USERS = Number(values.users);
const HOT = Math.min(Number(values.hot), CALLS);
for (const [name, n] of Object.entries({ calls: CALLS, users: USERS, hot: HOT })) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
}
const WEB_URL = 'http://localhost:3000';
/** The worker's debug line after its full record build (JSON logs). */
const FULL_BUILD_LOGGED = /^.*"msg":"record snapshots built".*$/m;

/** Resolves once nothing runs or waits on the worker's projection and snapshot queues for two looks a second apart (delayed jobs are left out: the week roll-over always has one). */
async function workerIdle(redis: Redis): Promise<void> {
  const queues = ['projections', 'snapshots', 'records'].map((name) => new Queue(name, { connection: redis, prefix: queuePrefix(PREFIX) }));
  try {
    let quiet = 0;
    await until(
      'the worker queues to empty',
      async () => {
        const counts = await Promise.all(queues.map((q) => q.getJobCounts('active', 'waiting', 'prioritized')));
        const busy = counts.some((c) => Object.values(c).some((n) => n > 0));
        quiet = busy ? 0 : quiet + 1;
        return quiet >= 2;
      },
      { timeoutMs: 3_600_000, everyMs: 1000 },
    );
  } finally {
    await Promise.all(queues.map((q) => q.close()));
  }
}

/** The worker's job and record build log lines after its full build, shortened to what they measured. */
function workerSteps(output: string): string[] {
  const lines = output.split('\n').filter((l) => l.startsWith('{'));
  const start = lines.findIndex((l) => l.includes('"msg":"record snapshots built"') && l.includes('"full":true'));
  return lines
    .slice(start + 1)
    .filter((l) => /"msg":"(record snapshots built|projections updated|market settled|job (completed|failed))"/.test(l))
    .map((l) => {
      const { level: _level, pid: _pid, hostname: _hostname, service: _service, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return JSON.stringify(rest);
    });
}

function fullBuildStats(output: string): { ms: number; calls: number; markets: number; written: number; stages?: Record<string, number> } {
  for (const line of output.split('\n')) {
    if (!line.includes('"msg":"record snapshots built"')) continue;
    const stats = JSON.parse(line) as { full?: boolean; ms: number; calls: number; markets: number; written: number; stages?: Record<string, number> };
    if (stats.full === true) return stats;
  }
  throw new Error('the worker logged no full record build');
}
const PREFIX = 'bench';

const say = (line: string) => process.stdout.write(`${line}\n`);
async function timed<T>(label: string, work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await work();
  const ms = Math.round(performance.now() - t0);
  say(`  ${label.padEnd(58)} ${String(ms).padStart(7)} ms`);
  return { value, ms };
}

/** A child process with its output kept (the worker's says when its start-up build is done). */
function startService(entry: string, env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string; waitFor(re: RegExp, ms: number): Promise<void> } {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    output += d.toString();
    if (output.length > 4_000_000) output = output.slice(-1_000_000);
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  return {
    child,
    output: () => output,
    waitFor(re, ms) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`${entry}: no ${String(re)} within ${ms} ms; output:\n${output.slice(-3000)}`));
        }, ms);
        const check = () => {
          if (!re.test(output)) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
      });
    },
  };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/**
 * What the settlement committed, read as soon as it has (the market's `settled_at` is set in its
 * transaction): settle-visible.ts's readKeptRanking first (the kept boards' watched people), then
 * readExpected.
 */
function committed(db: Db, affected: Affected, picked: Picked, onCommit: () => void): { kept: Promise<KeptRanking>; expected: Promise<Expected & { atMs: number }> } {
  const seen = until('the settlement to commit', async () => (await db.query(sql`select 1 from markets where id = ${affected.marketId} and settled_at is not null`)).length > 0, {
    timeoutMs: 120_000,
    everyMs: 10,
  }).then(() => {
    onCommit();
    return performance.now();
  });
  const kept = seen.then(() => readKeptRanking(db, picked));
  const expected = seen.then(async (atMs) => ({ atMs, ...(await readExpected(db, affected, picked, kept)) }));
  return { kept, expected };
}

async function main() {
  say(`bench:settle — ${CALLS.toLocaleString('en')} calls, ${USERS.toLocaleString('en')} users, markets hot and hot2 with ${HOT.toLocaleString('en')} open calls each`);
  const redisServer = await startOwnRedis();
  const redisUrl = redisServer.url;
  let own: OwnPostgres | undefined;
  let replica: PostgresReplica | undefined;
  const tdb = values.replica ? await ownDatabase((o) => (own = o)) : await createTestDatabase('bench_settle');
  const { db } = tdb;
  if (values.replica) {
    replica = await startPostgresReplica({ primaryUrl: tdb.url, port: await freePort(), primaryDataDir: own!.dataDir, log: (l) => say(`  ${l}`) });
  }
  let lag: ReturnType<typeof sampleLag> | undefined;
  let worker: ReturnType<typeof startService> | undefined;
  let api: ReturnType<typeof startService> | undefined;
  let redis: Redis | undefined;
  try {
    redis = new Redis(redisUrl, { maxRetriesPerRequest: null, retryStrategy: (n) => (n > 50 ? null : 100) });
    await redis.ping();
    say('generating (set-based SQL):');
    for (const step of datasetSteps({ calls: CALLS, users: USERS, hot: HOT, moreHot: 1 })) await timed(step.label, () => step.run(db));

    say('rebuild (real code paths):');
    const projections = await timed(`every projection (${CALLS.toLocaleString('en')} calls, ${USERS.toLocaleString('en')} users)`, () => rebuildProjections(db, new Date()));
    say(`    per projection: ${JSON.stringify(projections.value.ms)}`);
    // After the projections exist (as in production: a settlement moves existing records).
    say('settlement in process (real code paths, market hot2):');
    await resolveMarket(db, 'hot2', 0);
    // The transaction also moves the people's records by the settlement's delta and re-ranks the boards.
    const settle = await timed(`settle hot2 (${HOT.toLocaleString('en')} open calls) with records and boards`, () => settleMarket(db, 'hot2', new Date()));
    const s = settle.value;
    say(`    settled calls ${s.calls.won + s.calls.lost + s.calls.void}, legs ${s.legs}, combos decided ${s.combos.length}, users affected ${s.userIds.length}`);
    say(`    per step: ${JSON.stringify(s.ms)}`);
    // What the records cost the old way (every touched person recomputed from all their calls), for comparison.
    const project = await timed(`the same ${s.userIds.length.toLocaleString('en')} records recomputed whole + re-rank (the old path)`, () =>
      projectChanges(db, { userIds: s.userIds, marketIds: [] }, new Date()),
    );
    say(`    per projection: ${JSON.stringify(project.value.ms)}`);
    const again = await timed('the same settlement delivered again (no-op)', () => settleMarket(db, 'hot2', new Date()));
    if (again.value.calls.won + again.value.calls.lost !== 0) throw new Error('a repeated settlement changed calls');

    const [apiPort, workerPort, metricsPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const env = {
      NODE_ENV: 'production',
      DATABASE_URL: tdb.url,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: PREFIX,
      PUBLIC_WEB_URL: WEB_URL,
      PORT: String(apiPort),
      WORKER_PORT: String(workerPort),
      RATE_LIMIT_PER_MINUTE: '100000000',
      PRETTY_LOGS: '0',
      API_METRICS_PORT: String(metricsPort),
      ...(replica ? { DATABASE_READ_URL: replica.url } : {}),
    };
    // The worker's first build at start is the full one (every record snapshot into an empty Redis):
    // its own log line says how long it took, without the process's start-up. The reconciler would
    // take this new Redis for one that lost everything and rebuild every projection and record
    // snapshot a second time: the projections were just rebuilt above and the start-up build writes
    // every snapshot, so the bench gives Redis its epoch first (minutes of waiting at a million calls).
    await redis.set(reconcilerEpochKey(PREFIX), String(Date.now()));
    worker = startService('services/worker/src/main.ts', { ...env, LOG_LEVEL: 'debug' });
    await worker.waitFor(FULL_BUILD_LOGGED, 3_600_000);
    const full = fullBuildStats(worker.output());
    say(`  ${'every record snapshot (the worker\'s full build)'.padEnd(58)} ${String(full.ms).padStart(7)} ms`);
    say(`    Call objects ${full.calls}, markets ${full.markets}, snapshots written ${full.written}`);
    say(`    stages (ms): ${JSON.stringify(full.stages ?? {})}`);
    say(`bench:rebuild calls=${CALLS} users=${USERS} s=${((projections.ms + full.ms) / 1000).toFixed(1)}`);

    // The settlement is timed on a database in its steady state. The rebuild and the full build above
    // rewrote every record, board row and Call object; a server's autovacuum vacuums such tables
    // within minutes (it is off on this project's machines), and without it every index-only read of
    // the records (a person's ranks) checked the heap for each entry while the settlement was timed.
    await timed('vacuum analyze (what autovacuum would have done by now)', () => db.query(sql`vacuum (analyze)`));
    say('end to end (worker and API processes, read over HTTP, market hot):');
    // Whatever the worker still has queued (nothing, normally) is done before the settlement is timed.
    await timed('worker idle', () => workerIdle(redis!));
    api = startService('services/api/src/main.ts', { ...env, LOG_LEVEL: 'warn' });
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    // A process start is seconds on a quiet machine; on a shared, loaded one it took over a minute.
    await until('the API serving the leaderboard', async () => (await fetch(`${apiUrl}/api/v1/leaderboard`)).status === 200, {
      timeoutMs: 300_000,
      everyMs: 100,
      context: () => api?.output() ?? '',
    });
    // The market resolves to its first outcome (resolveMarket below): its calls on it are won, the others lost.
    const hot: Array<{ id: string; handle: string; status: string }> = await db.query(sql`
      select c.id, u.handle, case when c.outcome_index = 0 then 'won' else 'lost' end as status from calls c join users u on u.id = c.user_id where c.market_id = 'hot' and c.status = 'open' order by c.id`);
    const owners: Array<{ handle: string }> = await db.query(sql`
      select distinct u.handle from combos k join users u on u.id = k.user_id
      where k.status = 'open' and exists (select 1 from combo_legs l where l.combo_id = k.id and l.market_id = 'hot' and l.status = 'open')
      order by u.handle`);
    const affected = { marketId: 'hot', calls: hot, comboOwners: owners.map((o) => o.handle) };
    const picked = (await timed('pick moved people to watch on the boards', () => pickWatched(db, affected, new Date()))).value;
    say(`    watched on computed boards: ${picked.watched.map((w) => `${w.board.query} → ${w.handle}`).join(', ')}; on kept boards, one of ${picked.steady.size} moved callers with steady figures`);
    if (picked.leftOut.length > 0) say(`    boards left out (no moved person can be on them): ${picked.leftOut.map((l) => `${l.board.query} (${l.why})`).join(', ')}`);
    const before = await timed(`read the ${picked.watched.length} watched rows and ${BOARDS.filter((b) => b.kept).length} first pages before`, () => readBefore(apiUrl, picked.watched));
    if (replica) lag = sampleLag(tdb.url, replica.url);
    await resolveMarket(db, 'hot', 0);
    const queue = new Queue('settlement', { connection: redis, prefix: queuePrefix(PREFIX) });
    try {
      const t0 = performance.now();
      // The job id the relay and the reconciler give it: a reconciler pass that finds the market
      // resolved and unsettled meanwhile sees this job instead of adding a second one (which waited
      // for the first's lock and then settled nothing).
      await queue.add('settle-market', { marketId: 'hot' }, { jobId: settleJobId('hot') });
      let commitSeen!: () => void;
      const commit = new Promise<void>((resolve) => (commitSeen = resolve));
      const { kept, expected } = committed(db, affected, picked, commitSeen);
      // awaited by the wait below
      kept.catch(() => {});
      expected.catch(() => {});
      const visible = await waitForSettlement(apiUrl, affected, picked, kept, before.value, commit, expected, t0, 120_000).catch((err: unknown) => {
        for (const line of workerSteps(worker?.output() ?? '')) say(`    worker: ${line}`);
        // The API logs at warn: what it refused and why.
        for (const line of (api?.output() ?? '').split('\n').filter((l) => l.startsWith('{')).slice(-10)) say(`    api: ${line.slice(0, 1500)}`);
        throw err;
      });
      say(`    settlement committed ${Math.round((await expected).atMs - t0)} ms after the enqueue`);
      say(`  ${'enqueued → every affected page shows it'.padEnd(58)} ${String(Math.round(visible.lastMs)).padStart(7)} ms`);
      say(`    sentinels (boards, lists and ${visible.sampled} sampled calls, people and their lists) all visible at ${Math.round(visible.sampleMs)} ms; every one of ${visible.checked} pages verified by ${Math.round(visible.lastMs)} ms (every call, call list, list and board page; the records of ${visible.people.checked} of the ${visible.people.moved} people moved)`);
      if (Object.keys(visible.unavailable).length > 0) say(`    503s answered (polled again), per kind: ${JSON.stringify(visible.unavailable)}`);
      const byTime = (from: number, to: number) => visible.latencies.filter((l) => l.sentMs >= from && l.sentMs < to).map((l) => l.ms).sort((a, b) => a - b);
      for (const [from, to] of [[0, 500], [500, 1000], [1000, 1500], [1500, 2000], [2000, 1e9]] as const) {
        const ms = byTime(from, to);
        if (ms.length > 0) say(`    sentinel requests sent ${from}–${to === 1e9 ? '' : to} ms: ${ms.length}, answer p50 ${Math.round(ms[Math.floor(ms.length / 2)]!)} ms, p99 ${Math.round(ms[Math.floor(ms.length * 0.99)]!)} ms`);
      }
      // Where the API's answers were slow: each kind's answer times (the requests are sent from the commit on).
      const kinds = [...new Set(visible.latencies.map((l) => l.kind))].map((kind) => {
        const ms = visible.latencies.filter((l) => l.kind === kind).map((l) => l.ms).sort((a, b) => a - b);
        return `${kind} ${ms.length}× p50 ${Math.round(ms[Math.floor(ms.length / 2)]!)} max ${Math.round(ms.at(-1)!)}`;
      });
      say(`    sentinel answers per kind (ms): ${kinds.join(', ')}`);
      say(`    watched on kept boards: ${(await kept).watched.map((w) => `${w.board.query} → ${w.handle}`).join(', ')}`);
      if (visible.keptLeftOut.length > 0) say(`    kept boards left out (no moved person with steady figures in their committed ranking): ${visible.keptLeftOut.join(', ')}`);
      if (visible.unmovedTops.length > 0) say(`    first pages with no moved person before or after, not waited for: ${visible.unmovedTops.join(', ')}`);
      say(`    sentinels polled in ${visible.passes} passes; last seen per kind (ms after the enqueue): ${JSON.stringify(visible.byKind)}`);
      say(`bench:settle calls=${hot.length} settled_visible_s=${(visible.lastMs / 1000).toFixed(2)}`);
      if (lag) {
        const ms = (await lag.stop()).sort((a, b) => a - b);
        const q = (f: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(ms.length * f))] ?? NaN);
        say(`    replica lag samples ${ms.length} (every 20 ms from the boards read before the settlement until it was visible everywhere)`);
        say(`bench:settle replica_lag_ms p50=${q(0.5)} p99=${q(0.99)} max=${q(1)}`);
        const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
        say(`    API reads by server: ${metrics.split('\n').filter((l) => l.startsWith('api_db_reads_total')).join('; ')}`);
      }
      // Where the time went, as the worker logged it (jobs and incremental builds since the full one).
      for (const line of workerSteps(worker?.output() ?? '')) say(`    worker: ${line}`);
    } finally {
      await queue.close();
    }

    // The boards there are: six kept as rows (the all-time boards of every field, and the week
    // board); every other window × sort × field is computed when asked for. Each computed kind
    // answered once more here, on its own, to show what a first page costs.
    const [{ leagues }] = (await db.query(sql`select count(distinct league)::integer as leagues from events where league is not null`)) as [{ leagues: number }];
    const fields = 7 + leagues;
    const computed = 3 * 5 - 1 + 4 * 5 * fields;
    say('boards:');
    for (const { query } of BOARDS.filter((b) => !b.kept)) {
      await timed(`first page of /leaderboard?${query}`, async () => {
        const res = await fetch(`${apiUrl}/api/v1/leaderboard?${query}&limit=100`);
        if (res.status !== 200) throw new Error(`/leaderboard?${query}: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      });
    }
    say(`bench:boards variants=${6 + computed} kept=6 computed=${computed} (windows day|week|month|all × sorts × fields: every field, 7 categories, ${leagues} leagues)`);
  } finally {
    await lag?.stop();
    await stop(api?.child);
    await stop(worker?.child);
    redis?.disconnect();
    await redisServer.stop();
    await replica?.stop();
    if (values.keep) {
      say(`kept the scratch database: ${tdb.url}`);
      await db.dispose();
    } else await tdb.drop();
    await own?.stop();
  }
}

/** The scratch database on a Postgres of the bench's own (so that a replica of it can be made). */
async function ownDatabase(onServer: (own: OwnPostgres) => void): Promise<{ url: string; db: Db; drop(): Promise<void> }> {
  const own = await startOwnPostgres();
  onServer(own);
  const url = new URL(own.url);
  url.pathname = '/bench_settle';
  await ensureDatabase(url.toString());
  await migrate(url.toString());
  const db = createDb(url.toString(), { poolSize: 5 });
  return { url: url.toString(), db, drop: () => db.dispose() };
}

/**
 * Every 20 ms: the primary's WAL position noted with the time, and the replica's replayed position;
 * a noted position's lag is the time until a look saw the replica past it.
 */
function sampleLag(primaryUrl: string, replicaUrl: string): { stop(): Promise<number[]> } {
  const primary = createDb(primaryUrl, { poolSize: 1 });
  const replicaDb = createDb(replicaUrl, { poolSize: 1 });
  const pending: Array<{ at: number; lsn: number }> = [];
  const lags: number[] = [];
  let stopped = false;
  const loop = until('the lag sampler to be stopped', async () => {
    if (stopped) return true;
    const [p] = (await primary.query(sql`select pg_current_wal_lsn()::text as lsn`)) as Array<{ lsn: string }>;
    pending.push({ at: performance.now(), lsn: lsnBytes(p!.lsn) });
    const [r] = (await replicaDb.query(sql`select pg_last_wal_replay_lsn()::text as lsn`)) as Array<{ lsn: string }>;
    const replayed = lsnBytes(r!.lsn);
    const now = performance.now();
    while (pending.length > 0 && pending[0]!.lsn <= replayed) lags.push(now - pending.shift()!.at);
    return false;
  }, { timeoutMs: 3_600_000, everyMs: 20 });
  let done: Promise<number[]> | undefined;
  return {
    stop() {
      stopped = true;
      done ??= loop.catch(() => {}).then(async () => {
        await Promise.all([primary.dispose(), replicaDb.dispose()]);
        return lags;
      });
      return done;
    },
  };
}

const sizes = values['hot-sizes']?.split(',').map(Number);
if (sizes?.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--hot-sizes must be positive integers separated by commas');
(sizes === undefined ? main() : settleSizes(sizes)).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:settle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
