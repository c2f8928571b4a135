import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATEGORIES } from '@pm/shared/api';
import { queuePrefix, settleJobId } from '@pm/shared/queues';
import { redisKeys } from '@pm/shared/redis';
import { sql } from '@pm/shared/db';
import { profitOn10, round2, xpIfRight } from '@pm/shared/domain';
import { createRecords } from '@pm/shared/records';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { freePort } from '../support/stack.js';
import * as waiting from '@pm/shared/wait';
import { logResolution } from '../../services/worker/src/settlement/test-fixture.js';

/**
 * SIGTERM, as an orchestrator sends it: the process stops taking work, finishes what is in flight,
 * and exits within 10 s. The work is made slow by putting a proxy between the service and Redis
 * that holds every reply back, so the signal lands while a request (API) or a job (worker) runs.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXIT_DEADLINE_MS = 10_000;

let database: TestDatabase;
let redis: TestRedis;

/** A TCP proxy to Redis whose replies can be delayed or held back at will, and which keeps what clients sent. */
interface SlowProxy {
  url: string;
  setDelay(ms: number): void;
  /** Replies are held back from now on, until `release()`. */
  hold(): void;
  release(): void;
  /** Everything clients have sent to Redis so far (RESP text). */
  sent(): string;
  close(): Promise<void>;
}

async function slowRedisProxy(redisUrl: string): Promise<SlowProxy> {
  const target = new URL(redisUrl);
  let delayMs = 0;
  let sent = '';
  // While held, replies wait for this promise (release resolves it).
  let held: { promise: Promise<void>; release: () => void } | null = null;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (d) => {
      sent += d.toString('latin1');
      upstream.write(d);
    });
    // Replies keep their order: each waits for the same delay (the slow Redis this proxy plays) after
    // the one before it, and for the release while held.
    let chain = Promise.resolve();
    upstream.on('data', (d) => {
      const wait = delayMs;
      const gate = held?.promise;
      chain = chain
        .then(() => gate)
        .then(() => (wait > 0 ? new Promise<void>((r) => setTimeout(r, wait)) : undefined))
        .then(() => {
          if (!client.destroyed) client.write(d);
        });
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    // Redis closes right after its QUIT reply: pass the held-back replies on before closing.
    upstream.on('close', () => void chain.then(end)).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}${target.pathname}`,
    setDelay: (ms) => {
      delayMs = ms;
    },
    hold: () => {
      let release = () => {};
      const promise = new Promise<void>((r) => (release = r));
      held = { promise, release };
    },
    release: () => {
      held?.release();
      held = null;
    },
    sent: () => sent,
    close: () =>
      new Promise<void>((r) => {
        held?.release();
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

interface Service {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; at: number }>;
}

function startService(entry: string, env: Record<string, string>): Service {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'info', PRETTY_LOGS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.once('exit', (code) => resolve({ code, at: Date.now() })));
  return { child, output: () => output, exited };
}

/** The service exited 0 within the deadline after `signalledAt`; returns when it exited. */
async function expectCleanExit(service: Service, signalledAt: number): Promise<number> {
  const { code, at } = await service.exited;
  expect(code, service.output()).toBe(0);
  expect(at - signalledAt).toBeLessThan(EXIT_DEADLINE_MS);
  return at;
}

/** Cleanup: a service still running is stopped as an operator would, and waited for. */
async function stopIfRunning(service: Service): Promise<void> {
  if (service.child.exitCode !== null) return;
  service.child.kill('SIGTERM');
  await service.exited;
}

const until = (what: string, ok: () => Promise<boolean>, timeoutMs: number, logs: () => string) =>
  waiting.until(what, ok, { timeoutMs, everyMs: 100, context: logs });

beforeAll(async () => {
  database = await createTestDatabase('shutdown');
  redis = await createTestRedis('shutdown');
});

afterAll(async () => {
  await database?.drop();
  await redis?.cleanup();
});

describe('SIGTERM', () => {
  it('API: refuses new connections, finishes the request in flight, exits 0 within 10 s', async () => {
    const proxy = await slowRedisProxy(redis.url);
    const port = await freePort();
    const api = startService('services/api/src/main.ts', { REDIS_URL: proxy.url, REDIS_PREFIX: redis.prefix, PORT: String(port), HOST: '127.0.0.1' });
    try {
      const base = `http://127.0.0.1:${port}`;
      await until('the API', async () => (await fetch(`${base}/healthz`)).ok, 30_000, api.output);
      // An empty trending list, latest calls and board, as the worker writes them before anything exists.
      const list = JSON.stringify({ categories: CATEGORIES, leagues: [], events: [] });
      await redis.redis.hset(redisKeys(redis.prefix).snapshot('markets:trending'), { body: list, etag: '"empty"', built_at: String(Date.now()) });
      await redis.redis.hset(redisKeys(redis.prefix).snapshot('calls:latest'), { body: '{"calls":[]}', etag: '"empty"', built_at: String(Date.now()) });
      await redis.redis.hset(redisKeys(redis.prefix).snapshot('leaderboard:profit'), { body: '{"rows":[]}', etag: '"empty"', built_at: String(Date.now()) });
      await until('Redis and the snapshot', async () => (await fetch(`${base}/readyz`)).status === 200, 30_000, api.output);

      // Redis's replies held back: the request is in flight, waiting on Redis, once its rate-limit hit was sent.
      proxy.hold();
      const sentBefore = proxy.sent().length;
      const started = Date.now();
      const inFlight = fetch(`${base}/api/v1/markets`).then(async (res) => ({ status: res.status, body: (await res.json()) as unknown, at: Date.now() }));
      const rateLimitKey = redisKeys(redis.prefix).rateLimitPrefix;
      await until('the request to reach Redis', async () => proxy.sent().slice(sentBefore).includes(rateLimitKey), 10_000, api.output);
      const signalledAt = Date.now();
      api.child.kill('SIGTERM');
      // The shutdown has begun (no new connection) while the request still waits on Redis; then Redis answers.
      await until('the API to stop listening', () => fetch(`${base}/healthz`).then(() => false, () => true), 10_000, api.output);
      proxy.release();

      const answer = await inFlight;
      expect(answer.at).toBeGreaterThan(signalledAt);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ ok: true, count: 0, events: [] });

      // Stopped listening: a new connection is refused.
      await expect(fetch(`${base}/healthz`)).rejects.toThrow();

      const at = await expectCleanExit(api, signalledAt);
      expect(signalledAt - started).toBeLessThan(answer.at - started);
      // Well inside the deadline: a keep-alive connection must not hold the exit for its 5 s timeout.
      expect(at - signalledAt).toBeLessThan(4_000);
    } finally {
      if (api.child.exitCode === null) api.child.kill('SIGKILL');
      await proxy.close();
    }
  });

  it('worker: lets the running job complete, loses and repeats nothing, exits 0 within 10 s', async () => {
    const proxy = await slowRedisProxy(redis.url);
    const port = await freePort();
    const worker = startService('services/worker/src/main.ts', {
      DATABASE_URL: database.url,
      REDIS_URL: proxy.url,
      REDIS_PREFIX: redis.prefix,
      WORKER_PORT: String(port),
      HOST: '127.0.0.1',
      // No sweeps of its own during the test: only our job runs.
      SNAPSHOT_INTERVAL_MS: '60000',
    });
    const queue = new Queue('snapshots', { connection: redis.redis, prefix: queuePrefix(redis.prefix) });
    try {
      const ops = `http://127.0.0.1:${port}`;
      await until('the worker to be ready', async () => (await fetch(`${ops}/readyz`)).ok, 60_000, worker.output);

      // Every Redis reply of the worker now takes 300 ms: the job's build spans several of them.
      proxy.setDelay(300);
      await queue.add('build-snapshots', { reason: 'sigterm-test' }, { jobId: 'sigterm-test', attempts: 3 });
      await until(
        'the job to be active',
        async () => (await queue.getJobState('sigterm-test')) === 'active',
        20_000,
        worker.output,
      );
      const signalledAt = Date.now();
      worker.child.kill('SIGTERM');

      await expectCleanExit(worker, signalledAt);

      // Completed by the stopping worker, once: not failed, not left active for a stall check to rerun.
      const job = await queue.getJob('sigterm-test');
      expect(await job?.getState()).toBe('completed');
      expect(job?.attemptsMade).toBe(1);
      expect(job?.attemptsStarted).toBe(1);
      expect(job?.failedReason).toBeFalsy();
      expect(await queue.getJobCounts('active', 'failed')).toMatchObject({ active: 0, failed: 0 });
      // Nothing of ours is left to run again. (Other work may wait for the next start: the worker's
      // sweep requests a record-snapshot build when none exists yet, and a stopping worker leaves it queued.)
      const pending = await queue.getJobs(['waiting', 'delayed', 'active']);
      expect(pending.filter((j) => j.id === 'sigterm-test' || (j.data as { reason?: string }).reason === 'sigterm-test')).toEqual([]);
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
      await queue.close();
      await proxy.close();
    }
  });

  it('worker during a settlement: the settlement completes once, its follow-up work survives, exit 0 within 10 s', async () => {
    const db = database.db;
    const market = 'sigterm-market';
    const handles = ['sig_ann', 'sig_ben', 'sig_cat', 'sig_dan'];
    // A market as the ingestor leaves it and 20 calls at live chances; its resolution comes below.
    await db.query(sql`insert into events (id, slug, title, category) values ('ev-sigterm', 'sigterm', 'SIGTERM event', 'Sport') on conflict do nothing`);
    await db.query(sql`insert into markets (id, event_id, condition_id, position, question) values (${market}, 'ev-sigterm', 'cond-sigterm', 0, 'Will it stop cleanly?')`);
    for (const [i, name] of ['Yes', 'No'].entries()) {
      await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values (${market}, ${i}, ${name}, ${`tok-sig-${i}`})`);
    }
    const keys = redisKeys(redis.prefix);
    const records = createRecords({ db, redis: redis.redis, prefix: redis.prefix });
    try {
      for (const h of handles) await records.createUser({ handle: h, displayName: h });
      const chances = ['0.2', '0.35', '0.5', '0.65', '0.8'];
      for (let i = 0; i < 20; i++) {
        const outcome = i % 2;
        await redis.redis.hset(keys.chances, `tok-sig-${outcome}`, chances[i % chances.length]!);
        await redis.redis.hset(keys.chanceAt, `tok-sig-${outcome}`, String(Date.now()));
        await records.recordCall({ handle: handles[i % 4]!, marketId: market, outcomeIndex: outcome, thesis: 'clean stop' });
      }
    } finally {
      await records.close();
    }
    const calls: Array<{ outcome_index: number; chance_at_call: string }> = await db.query(sql`select outcome_index, chance_at_call from calls where market_id = ${market}`);
    const expectedProfit = round2(calls.reduce((sum, c) => sum + profitOn10(c.outcome_index === 0 ? 'won' : 'lost', Number(c.chance_at_call))!, 0));
    const expectedXp = calls.reduce((sum, c) => sum + (c.outcome_index === 0 ? xpIfRight(Number(c.chance_at_call)) : 0), 0);

    const port = await freePort();
    const env = { DATABASE_URL: database.url, REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix, WORKER_PORT: String(port), HOST: '127.0.0.1' };
    const queue = new Queue('settlement', { connection: redis.redis, prefix: queuePrefix(redis.prefix) });
    let worker = startService('services/worker/src/main.ts', env);
    try {
      await until('the worker to be ready', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 60_000, worker.output);
      const jobId = settleJobId(market);
      let signalledAt = 0;
      // Hold one call row: the settlement transaction blocks half-way until we let go, so the
      // signal lands mid-settlement, and the settlement then has to finish after it.
      await db.tx(async (tx) => {
        await tx.query(sql`select id from calls where market_id = ${market} order by id limit 1 for update`);
        // The resolution (Yes won), recorded as the ingestor records it: the worker's relay makes the job.
        await logResolution(db, market, 0);
        await until(
          'the settlement to wait on the held row',
          async () => {
            const waiting: Array<{ n: number }> = await db.query(sql`
              select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'
            `);
            return waiting[0]!.n > 0 && (await queue.getJobState(jobId)) === 'active';
          },
          20_000,
          worker.output,
        );
        signalledAt = Date.now();
        worker.child.kill('SIGTERM');
        await until('the worker to begin its shutdown', async () => worker.output().includes('"signal":"SIGTERM"'), 10_000, worker.output);
        expect(worker.child.exitCode, 'the worker must wait for the running settlement').toBeNull();
      });

      await expectCleanExit(worker, signalledAt);
      const job = await queue.getJob(jobId);
      expect(await job?.getState()).toBe('completed');
      expect(job?.attemptsStarted).toBe(1);

      const totals = async () => {
        const rows: Array<{ open: number; settled: number; profit: string; xp: number; times: number }> = await db.query(sql`
          select count(*) filter (where status = 'open')::int as open, count(*) filter (where status <> 'open')::int as settled,
                 coalesce(sum(profit_on_10), 0)::text as profit, coalesce(sum(xp_awarded), 0)::int as xp, count(distinct settled_at)::int as times
          from calls where market_id = ${market}
        `);
        const r = rows[0]!;
        return { open: r.open, settled: r.settled, profit: Number(r.profit), xp: r.xp, times: r.times };
      };
      expect(await totals()).toEqual({ open: 0, settled: 20, profit: expectedProfit, xp: expectedXp, times: 1 });

      // The records the settlement asked to re-project were not lost with the process: a new
      // worker brings every user's record to exactly its settled calls.
      worker = startService('services/worker/src/main.ts', env);
      const projected = async () => {
        const rows: Array<{ settled: number; won: number }> = await db.query(sql`
          select coalesce(sum(r.settled), 0)::int as settled, coalesce(sum(r.won), 0)::int as won
          from user_records r join users u on u.id = r.user_id where u.handle = any(${handles})
        `);
        return rows[0]!;
      };
      await until('user records to count the settled calls', async () => (await projected()).settled === 20, 30_000, worker.output);
      expect(await projected()).toEqual({ settled: 20, won: 10 });
      expect(await totals()).toEqual({ open: 0, settled: 20, profit: expectedProfit, xp: expectedXp, times: 1 });
    } finally {
      await stopIfRunning(worker);
      await queue.close();
    }
  });

  it('ingestor: closes its sockets and pools and exits 0 within 10 s while the feed streams', async () => {
    const [simPort, port] = await Promise.all([freePort(), freePort()]);
    const sim = startService('services/exchange-sim/src/main.ts', { SIM_PORT: String(simPort), HOST: '127.0.0.1' });
    const exchange = `127.0.0.1:${simPort}`;
    const ingestor = startService('services/ingestor/src/main.ts', {
      DATABASE_URL: database.url,
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      INGESTOR_PORT: String(port),
      HOST: '127.0.0.1',
      GAMMA_URL: `http://${exchange}`,
      CLOB_URL: `http://${exchange}`,
      CLOB_WS_URL: `ws://${exchange}`,
      SPORTS_WS_URL: `ws://${exchange}`,
    });
    try {
      const ops = `http://127.0.0.1:${port}`;
      await until('the ingestor to be ready', async () => (await fetch(`${ops}/readyz`)).ok, 60_000, () => sim.output() + ingestor.output());
      await until(
        'order books to arrive',
        async () => /^ingestor_books_held\{[^}]*\} [1-9]/m.test(await (await fetch(`${ops}/metrics`)).text()),
        30_000,
        ingestor.output,
      );
      const signalledAt = Date.now();
      ingestor.child.kill('SIGTERM');
      await expectCleanExit(ingestor, signalledAt);
      expect(ingestor.output()).toContain('"msg":"stopped"');
    } finally {
      if (ingestor.child.exitCode === null) ingestor.child.kill('SIGKILL');
      await stopIfRunning(sim);
    }
  });
});
