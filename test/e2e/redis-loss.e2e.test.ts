import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createDb, sql, type Db } from '@pm/shared/db';
import { createRecords, RecordRefused, type Records } from '@pm/shared/records';
import { freePort, startStack, type Stack } from '../support/stack.js';
import { startOwnRedis, type OwnRedis } from '../support/own-servers.js';
import * as waiting from '@pm/shared/wait';

/**
 * on the README's stack (the run line, with REDIS_URL pointing at a
 * redis-server of this file's own): stop the worker (SIGSTOP), resolve three markets that have open
 * calls through the simulator, wait until the work is recorded, lose Redis (FLUSHALL; then, as a
 * second case, a restart without persistence), resume the worker (SIGCONT): within 120 s every one
 * of those calls is settled exactly once and every endpoint answers 200 with the data it had before.
 * Nothing is done by hand in between. The two cases share one stack.
 */
let own: OwnRedis;
let stack: Stack;
let workerPort: number;
let db: Db;
let redis: Redis;
let records: Records;
const RECOVER_MS = 120_000;
const PEOPLE = ['ivy', 'jon', 'kim'];

beforeAll(async () => {
  [own, workerPort] = await Promise.all([startOwnRedis(), freePort()]);
  // No demo crowd: the records here are this test's, so "the data it had before" is known exactly.
  stack = await startStack({ env: { REDIS_URL: own.url, WORKER_PORT: String(workerPort), CROWD: '0', RATE_LIMIT_PER_MINUTE: '100000' } });
  db = createDb(stack.databaseUrl, { poolSize: 2 });
  redis = new Redis(own.url, { maxRetriesPerRequest: null });
  redis.on('error', () => {}); // the restart case drops it on purpose
  records = createRecords({ db, redis, prefix: stack.prefix });
  for (const handle of PEOPLE) await records.createUser({ handle, displayName: handle.toUpperCase() });
});

afterAll(async () => {
  await records?.close();
  redis?.disconnect();
  await db?.dispose();
  await stack?.stop();
  await own?.stop();
});

const until = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000) =>
  waiting.until(what, fn, { timeoutMs, everyMs: 500, context: () => stack.logs() });

async function workerPid(): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${workerPort}/healthz`);
  return ((await res.json()) as { pid: number }).pid;
}

/** Three open markets with live chances, each given two calls by the test's people. */
async function callThreeMarkets(taken: Set<string>): Promise<{ markets: string[]; calls: string[] }> {
  const markets: string[] = [];
  const calls: string[] = [];
  await until('three open markets with live chances', async () => {
    // Input: none. Output: open, unresolved markets of open events, busiest first.
    const rows: Array<{ id: string }> = await db.query(sql`
      select m.id from markets m join events e on e.id = m.event_id
      where not m.closed and m.resolved_at is null and not e.closed
      order by m.volume desc, m.id limit 60
    `);
    for (const { id } of rows) {
      if (markets.length === 3) break;
      if (taken.has(id)) continue;
      try {
        const made = [];
        for (const [i, handle] of PEOPLE.slice(0, 2).entries()) made.push((await records.recordCall({ handle, marketId: id, outcomeIndex: i, thesis: `redis loss ${id}` })).id);
        calls.push(...made);
        markets.push(id);
        taken.add(id);
      } catch (err) {
        if (!(err instanceof RecordRefused)) throw err; // no live price yet, or closed meanwhile: try another
      }
    }
    return markets.length === 3;
  });
  return { markets, calls };
}

/** Every endpoint, and what of its answer must survive the loss of Redis (settling changes statuses, not this). */
function endpoints(calls: readonly string[], eventSlug: string): Array<{ path: string; keep: (body: unknown) => unknown }> {
  type Body = Record<string, unknown>;
  const ids = (list: unknown) => (Array.isArray(list) ? list.map((x) => (x as Body)['id'] ?? (x as Body)['slug'] ?? (x as Body)['handle']).sort() : list);
  return [
    { path: '/api/v1/markets', keep: (b) => ((b as Body)['events'] as unknown[]).length > 0 },
    { path: `/api/v1/markets/${eventSlug}`, keep: (b) => ((b as Body)['event'] as Body)['slug'] },
    { path: `/api/v1/markets/${eventSlug}/history?range=1d`, keep: (b) => Object.keys(b as Body).sort() },
    { path: '/api/v1/live', keep: () => true },
    { path: '/api/v1/calls', keep: (b) => ids((b as Body)['calls']) },
    { path: '/api/v1/leaderboard', keep: () => true },
    { path: '/api/v1/combos', keep: (b) => ids((b as Body)['combos']) },
    { path: '/api/v1/odds?chance=0.25', keep: (b) => b },
    ...PEOPLE.flatMap((h) => [
      { path: `/api/v1/users/${h}`, keep: (b: unknown) => { const u = (b as Body)['user'] as Body; return { handle: u['handle'], calls: u['calls'] }; } },
      { path: `/api/v1/users/${h}/calls?limit=100`, keep: (b: unknown) => ids((b as Body)['calls']) },
    ]),
    ...calls.map((id) => ({
      path: `/api/v1/calls/${id}`,
      keep: (b: unknown) => { const c = (b as Body)['call'] as Body; return { id: c['id'], chance: c['chance_at_call'], thesis: c['thesis'] }; },
    })),
  ];
}

async function answers(list: ReturnType<typeof endpoints>): Promise<Map<string, { status: number; kept: unknown }>> {
  const out = new Map<string, { status: number; kept: unknown }>();
  for (const e of list) {
    const res = await fetch(`${stack.apiUrl}${e.path}`);
    const body: unknown = await res.json().catch(() => null);
    out.set(e.path, { status: res.status, kept: res.status === 200 ? e.keep(body) : null });
  }
  return out;
}

async function settledOnce(markets: readonly string[]): Promise<{ calls: number; settled: number; twice: number }> {
  // Input: market ids. Output: their calls, how many are settled, and markets settled at more than one time.
  const rows: Array<{ calls: number; settled: number; twice: number }> = await db.query(sql`
    with m as (
      select market_id, count(*)::int as n, count(*) filter (where status <> 'open')::int as settled, count(distinct settled_at)::int as times
      from calls where market_id = any(${[...markets]}::text[]) group by market_id
    )
    select coalesce(sum(n), 0)::int as calls, coalesce(sum(settled), 0)::int as settled, count(*) filter (where times > 1)::int as twice from m
  `);
  return rows[0]!;
}

const taken = new Set<string>();

async function survives(label: string, loseRedis: () => Promise<void>): Promise<void> {
  const { markets, calls } = await callThreeMarkets(taken);
  // An event none of the three markets belongs to, so it stays open whatever they resolve to.
  // Input: the three market ids. Output: the busiest other open event's slug.
  const [other]: Array<{ slug: string }> = await db.query(sql`
    select e.slug from events e
    where not e.closed and not exists (select 1 from markets m where m.event_id = e.id and m.id = any(${markets}::text[]))
    order by e.volume_24h desc, e.id limit 1
  `);
  const list = endpoints(calls, other!.slug);
  // The data before: every endpoint answering, the new calls in the latest calls and in each
  // person's record (the write path's outbox has been relayed and the snapshots built).
  const before = await until('every endpoint answering with the new calls', async () => {
    const seen = await answers(list);
    if (![...seen.values()].every((a) => a.status === 200)) return undefined;
    // The open list answers 200 with no event until the first catalog's snapshots are built: taken
    // as the state before, a list that came back full would read as changed by the loss.
    if (seen.get('/api/v1/markets')?.kept !== true) return undefined;
    const latest = seen.get('/api/v1/calls')?.kept as string[];
    if (!calls.every((id) => latest.includes(id))) return undefined;
    // Input: the people's handles. Output: how many calls each has in Postgres.
    const counts: Array<{ handle: string; n: number }> = await db.query(sql`
      select u.handle, count(c.id)::int as n from users u left join calls c on c.user_id = u.id
      where u.handle = any(${PEOPLE}::text[]) group by u.handle
    `);
    return counts.every((c) => (seen.get(`/api/v1/users/${c.handle}`)?.kept as { calls: number }).calls === c.n) ? seen : undefined;
  });
  const pid = await workerPid();
  process.kill(pid, 'SIGSTOP');
  let stopped = true;
  try {
    for (const market_id of markets) {
      const res = await stack.simControl('/_sim/resolve', { market_id, winning_outcome_index: 0 });
      expect(res.status).toBe(200);
    }
    // The work is recorded: the resolutions and the settlements they owe are in Postgres.
    await until('the three resolutions recorded with their outbox rows', async () => {
      const rows: Array<{ n: number }> = await db.query(sql`
        select count(*)::int as n from outbox where topic = 'market-resolved' and payload ->> 'marketId' = any(${markets}::text[])
      `);
      return rows[0]!.n === 3;
    });
    await loseRedis();
    process.kill(pid, 'SIGCONT');
    stopped = false;
    const resumed = Date.now();
    const after = await until(
      `${label}: every call settled once and every endpoint back within ${RECOVER_MS / 1000} s`,
      async () => {
        // Each unmet condition throws, so a timeout reports the last one seen.
        const s = await settledOnce(markets);
        if (s.settled !== s.calls) throw new Error(`calls settled ${s.settled} of ${s.calls}`);
        const seen = await answers(list);
        for (const [path, a] of seen) {
          if (a.status !== 200) throw new Error(`${path} answers ${a.status}`);
          if (JSON.stringify(a.kept) !== JSON.stringify(before.get(path)?.kept)) {
            throw new Error(`${path} shows ${JSON.stringify(a.kept)}, before ${JSON.stringify(before.get(path)?.kept)}`);
          }
        }
        // The settled calls show it on their own pages.
        for (const id of calls) {
          const page = (await (await fetch(`${stack.apiUrl}/api/v1/calls/${id}`)).json()) as { call: { status: string } };
          if (page.call.status === 'open') throw new Error(`call ${id} still shows open`);
        }
        return { s, seen };
      },
      RECOVER_MS,
    ).catch((err: unknown) => {
      // Printed as well as thrown (with the stack's last log lines): a passing retry would hide why a first attempt stalled.
      console.log(`[fault e2e] ${label} did not recover: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    });
    const seconds = (Date.now() - resumed) / 1000;
    console.log(
      `[fault e2e] ${label} with the worker stopped: calls settled ${after.s.settled} of ${after.s.calls} (markets settled twice: ${after.s.twice}); ` +
        `${[...after.seen.values()].filter((a) => a.status === 200).length} of ${list.length} endpoints answer 200 with their data; ${seconds.toFixed(1)} s after the worker resumed`,
    );
    expect(after.s).toEqual({ calls: 6, settled: 6, twice: 0 });
  } finally {
    if (stopped) process.kill(pid, 'SIGCONT');
  }
}

describe('Redis lost while the worker is stopped and three markets resolve', () => {
  it('FLUSHALL: every call settled once, every endpoint back with its data', async () => {
    await survives('Redis FLUSHALL', () => own.flushAll());
  }, 300_000);

  it('a Redis restart without persistence: the same', async () => {
    await survives('Redis restart', () => own.restart());
  }, 300_000);
});
