import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createDb, sql, type Db } from '@pm/shared/db';
import { createRecords, RecordRefused, RecordsUnavailable, retryInDoubt, type Records } from '@pm/shared/records';
import { createRedis } from '@pm/shared/redis';
import { freePort } from '@pm/shared/testing';
import { sleep, until } from '@pm/shared/wait';
import { callableMarkets, openMarketIds } from '../../scripts/lib/crowd/markets.js';
import { missingHaTools, startPostgresHa, HA_APT_PACKAGES, type PostgresHa } from '../../scripts/lib/pg-ha.js';
import { startStack, type Stack } from '../support/stack.js';

/**
 * Postgres losing its primary under the whole stack: three Patroni members of the packaged Postgres,
 * etcd and HAProxy (scripts/lib/pg-ha.ts), the services and the API reaching Postgres through
 * HAProxy's stable addresses. Writers make calls without pause, each with an idempotency key and its
 * key as its thesis (so a call written twice would show as two rows); the Patroni leader and its
 * postmaster are killed together (SIGKILL), five times, the killed member rejoining (pg_rewind) before
 * the next. Counted after: every acknowledged call exactly once on the new primary, every call in
 * doubt at most once (exactly once after its keyed retry), the outbox relayed, the markets settled,
 * the API's answers. Then the negative control on the same members: synchronous replication off, the
 * standbys' WAL receivers stopped, a lagging standby allowed to be promoted — and the same count finds
 * acknowledged calls lost, so the check can fail.
 */

const WRITERS = 3;
const ROUNDS = 5;

let ha: PostgresHa;
let stack: Stack;
let db: Db;
let redis: Redis;
let records: Records;
let handle: string;
let markets: string[];

beforeAll(async () => {
  const missing = missingHaTools();
  if (missing.length > 0) throw new Error(`${missing.join(', ')} not installed: \`apt-get install ${HA_APT_PACKAGES}\` (.ci/run does)`);
  const ports = await Promise.all(Array.from({ length: 10 }, () => freePort()));
  ha = await startPostgresHa({
    pgPorts: [ports[0]!, ports[1]!, ports[2]!],
    apiPorts: [ports[3]!, ports[4]!, ports[5]!],
    etcdClientPort: ports[6]!,
    etcdPeerPort: ports[7]!,
    haproxyPort: ports[8]!,
    haproxyReplicaPort: ports[9]!,
  });
  const dbUrl = new URL(ha.primaryUrl);
  dbUrl.pathname = '/pm_failover';
  const readUrl = new URL(ha.replicaUrl);
  readUrl.pathname = '/pm_failover';
  stack = await startStack({
    env: { DATABASE_URL: dbUrl.toString(), DATABASE_READ_URL: readUrl.toString(), CROWD: '0', TRUST_PROXY: '1' },
    readyTimeoutMs: 150_000,
  });
  db = createDb(dbUrl.toString(), { poolSize: WRITERS + 2 });
  redis = createRedis(stack.redisUrl, { maxRetriesPerRequest: 3 });
  records = createRecords({ db, redis, prefix: stack.prefix });
  handle = `ha_${Date.now().toString(36)}`;
  await records.createUser({ handle, displayName: 'Failover' });
}, 300_000);

/** Four callable markets, one per event, that stay open through a test (each test calls on its own: the first resolves its markets at its end). */
function pickMarkets(): Promise<string[]> {
  return until('four callable markets that stay open', async () => {
    const lasting = (await db.query(sql`
      select m.id from markets m where m.id = any(${await openMarketIds(db)}::text[])
        and (m.closes_at is null or m.closes_at > now() + interval '20 minutes')
    `)) as Array<{ id: string }>;
    const found = await callableMarkets(db, redis, stack.prefix, Date.now(), { ids: lasting.map((r) => r.id) });
    const perEvent = [...new Map(found.map((m) => [m.eventId, m])).values()].slice(0, 4);
    return perEvent.length === 4 ? perEvent.map((m) => m.id) : undefined;
  }, { timeoutMs: 90_000, everyMs: 500, context: () => stack.logs() });
}

afterAll(async () => {
  redis?.disconnect();
  await db?.dispose();
  await stack?.stop();
  await ha?.stop();
}, 120_000);

interface Written {
  key: string;
  startedAt: number;
  /** Acknowledged: the id and when the answer came. */
  acked?: { id: string; at: number };
  /** The first answer was lost (RecordsUnavailable); `retried` is the keyed retry's answer, if it came. */
  inDoubt?: { retried?: { id: string; repeated: boolean } };
  refused?: string;
  failed?: string;
}

/** Writers that make calls back to back (each keyed, its key its thesis) until stopped; a call in doubt is sent again with its key. */
function writers(prefix: string, opts: { retry: boolean }) {
  const written: Written[] = [];
  let stopped = false;
  const loops = Array.from({ length: WRITERS }, async (_, w) => {
    for (let n = 0; !stopped; n++) {
      const key = `${prefix}-${w}-${n}`;
      const input = { handle, marketId: markets[n % markets.length]!, outcomeIndex: n % 2, thesis: key, key };
      const entry: Written = { key, startedAt: Date.now() };
      written.push(entry);
      try {
        const made = await records.recordCall(input);
        entry.acked = { id: made.id, at: Date.now() };
      } catch (err) {
        if (err instanceof RecordsUnavailable) {
          entry.inDoubt = {};
          if (!opts.retry) continue;
          try {
            const made = await retryInDoubt(() => records.recordCall(input), { timeoutMs: 120_000 });
            entry.inDoubt.retried = { id: made.id, repeated: made.repeated };
          } catch (again) {
            entry.failed = again instanceof Error ? again.message : String(again);
          }
        } else if (err instanceof RecordRefused) {
          entry.refused = err.message;
          await sleep(50); // a writer's pace after a refusal, not a wait for a result
        } else {
          entry.failed = err instanceof Error ? err.message : String(err);
          await sleep(50); // a writer's pace while no primary answers, not a wait for a result
        }
      }
    }
  });
  return {
    written,
    acked: () => written.filter((w) => w.acked).length,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** The calls on the primary with these keys as their thesis: key → its call ids. */
async function onPrimary(prefix: string): Promise<Map<string, string[]>> {
  const check = createDb(new URL('/pm_failover', ha.primaryUrl).toString(), { poolSize: 1 });
  try {
    const rows = await until('the primary to answer', async () => (await check.query(sql`select thesis, id from calls where thesis like ${`${prefix}-%`}`)) as Array<{ thesis: string; id: string }>, {
      timeoutMs: 60_000,
      everyMs: 250,
    });
    const byKey = new Map<string, string[]>();
    for (const r of rows) byKey.set(r.thesis, [...(byKey.get(r.thesis) ?? []), r.id]);
    return byKey;
  } finally {
    await check.dispose();
  }
}

/** The acknowledged calls missing from the primary, and any key written more than once. */
function audit(written: Written[], found: Map<string, string[]>) {
  const lost = written.filter((w) => w.acked && !(found.get(w.key) ?? []).includes(w.acked.id)).map((w) => w.key);
  const doubled = [...found].filter(([, ids]) => ids.length > 1).map(([key]) => key);
  const doubtNotOnce = written.filter((w) => w.inDoubt?.retried && (found.get(w.key) ?? []).join() !== w.inDoubt.retried.id).map((w) => w.key);
  return { lost, doubled, doubtNotOnce };
}

/** The API polled every 50 ms (snapshot lists and a page read from Postgres), each poll from an address of its own. */
function pollApi() {
  const statuses = { total: 0, ok: 0, other: [] as string[], answered: new Set<string>() };
  let stopped = false;
  let i = 0;
  const paths = ['/api/v1/markets', '/api/v1/calls', `/api/v1/users/${handle}`, '/api/v1/leaderboard', `/api/v1/users/${handle}/calls`];
  const loop = (async () => {
    while (!stopped) {
      const n = i++;
      const path = paths[n % paths.length]!;
      void fetch(`${stack.apiUrl}${path}`, { headers: { 'x-forwarded-for': `198.51.${(n >> 8) & 255}.${n & 255}` }, signal: AbortSignal.timeout(5_000) })
        .then(async (res) => {
          await res.arrayBuffer();
          statuses.total++;
          if (res.status === 200) {
            statuses.ok++;
            statuses.answered.add(path);
          }
          else statuses.other.push(`${path} ${res.status}`);
        })
        .catch((err: unknown) => {
          statuses.total++;
          statuses.other.push(`${path} ${err instanceof Error ? err.message : String(err)}`);
        });
      await sleep(50); // the reader's pace: one read of the API every 50 ms, not a wait for a result
    }
  })();
  return {
    statuses,
    paths,
    /** Counting from now (every path answered once: its snapshot exists). */
    reset() {
      statuses.total = 0;
      statuses.ok = 0;
      statuses.other = [];
    },
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

describe('Postgres under Patroni: SIGKILL of the primary', () => {
  // Not retried (the e2e tier retries once): a second run of five failovers would double its time, and a loss is never flaky.
  it(`${ROUNDS} failovers while calls are written: every acknowledged call once on the new primary, every call in doubt at most once (once after its keyed retry), the outbox relayed, the markets settled, the API answering`, { retry: 0, timeout: 900_000 }, async () => {
    const started = Date.now();
    markets = await pickMarkets();
    const api = pollApi();
    const w = writers('ha', { retry: true });
    const rounds: string[] = [];
    try {
      // Counted once every page has been served: a person's page exists only after their first call.
      await until('every polled page answered', async () => api.statuses.answered.size === api.paths.length, { timeoutMs: 90_000, everyMs: 100, context: () => stack.logs() });
      api.reset();
      for (let round = 1; round <= ROUNDS; round++) {
        await ha.healthy();
        const before = w.acked();
        await until('calls acknowledged before the kill', async () => w.acked() >= before + 20, { timeoutMs: 60_000, everyMs: 50, context: () => stack.logs() });
        const leader = await until('a leader', () => ha.leader(), { timeoutMs: 30_000, everyMs: 100 });
        const killedAt = Date.now();
        ha.kill(leader);
        const promoted = await until('another member promoted', async () => {
          const now = await ha.leader();
          return now && now.name !== leader.name ? { member: now, ms: Date.now() - killedAt } : undefined;
        }, { timeoutMs: 60_000, everyMs: 100 });
        // Started again once another member leads: earlier, it could take its own unexpired key back.
        const rejoining = ha.restart(leader);
        const firstAck = await until('the first call acknowledged after the kill', async () => {
          const after = w.written.filter((x) => x.startedAt >= killedAt && x.acked).map((x) => x.acked!.at - killedAt);
          return after.length > 0 ? Math.min(...after) : undefined;
        }, { timeoutMs: 60_000, everyMs: 50, context: () => stack.logs() });
        await rejoining;
        await ha.healthy();
        const rejoinedMs = Date.now() - killedAt;
        rounds.push(`round ${round}: killed ${leader.name}, ${promoted.member.name} promoted after ${(promoted.ms / 1000).toFixed(1)} s, first acknowledged call ${(firstAck / 1000).toFixed(1)} s after the kill, ${leader.name} back as a standby after ${(rejoinedMs / 1000).toFixed(1)} s`);
        expect(firstAck).toBeLessThan(45_000);
      }
    } finally {
      await w.stop();
      await api.stop();
    }
    const found = await onPrimary('ha');
    const { lost, doubled, doubtNotOnce } = audit(w.written, found);
    const inDoubt = w.written.filter((x) => x.inDoubt);
    const failures = [...api.statuses.other.reduce((m, o) => m.set(o, (m.get(o) ?? 0) + 1), new Map<string, number>())].map(([o, n]) => `${o} ×${n}`).join(', ');
    const doubtWritten = inDoubt.filter((x) => x.inDoubt!.retried?.repeated).length;
    console.log(
      `[ha] ${rounds.join('\n[ha] ')}\n[ha] calls acknowledged ${w.acked()}, in doubt ${inDoubt.length} (of which the retry found ${doubtWritten} already written), refused ${w.written.filter((x) => x.refused).length}, failed ${w.written.filter((x) => x.failed).length}; ` +
        `lost ${lost.length}, doubled ${doubled.length}; API ${api.statuses.ok}/${api.statuses.total} answered 200 (${((100 * api.statuses.ok) / api.statuses.total).toFixed(2)} %; others: ${failures || 'none'}); wall ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    // Why the API's page reads left the standbys, as its read pool logged it (the first 80 characters of each reason).
    const readReasons = [...stack.logs().split('\n').filter((l) => l.includes('reads on the primary')).reduce((m, l) => {
      const reason = (/"reason":"([^"]{0,80})/.exec(l)?.[1] ?? '?').replace(/\d+/g, 'N');
      return m.set(reason, (m.get(reason) ?? 0) + 1);
    }, new Map<string, number>())].map(([r, n]) => `${r} ×${n}`);
    console.log(`[ha] the API's reads moved to the primary: ${readReasons.join('; ') || 'never'}`);
    expect({ lost, doubled, doubtNotOnce }).toEqual({ lost: [], doubled: [], doubtNotOnce: [] });
    expect(w.written.filter((x) => x.failed).map((x) => x.failed)).toEqual([]);
    expect(inDoubt.every((x) => x.inDoubt!.retried !== undefined)).toBe(true);
    expect(api.statuses.ok / api.statuses.total, failures).toBeGreaterThanOrEqual(0.99);

    // The outbox relays every row (none left unsent), and the markets called on settle every call once.
    await until('the outbox relayed', async () => {
      const [row] = (await db.query(sql`select count(*)::int as n from outbox where sent_at is null`)) as Array<{ n: number }>;
      return row!.n === 0;
    }, { timeoutMs: 90_000, everyMs: 500, context: () => stack.logs() });
    for (const id of markets) expect([200, 409]).toContain((await stack.simControl('/_sim/resolve', { market_id: id, winning_outcome_index: 0 })).status);
    const settled = await until('every call of the test settled', async () => {
      const [row] = (await db.query(sql`
        select count(*)::int as calls, count(*) filter (where status <> 'open')::int as settled from calls where thesis like 'ha-%'
      `)) as Array<{ calls: number; settled: number }>;
      return row!.calls === row!.settled ? row : undefined;
    }, { timeoutMs: 120_000, everyMs: 500, context: () => stack.logs() });
    const [record] = (await db.query(sql`select r.calls, r.settled from user_records r join users u on u.id = r.user_id where u.handle = ${handle}`)) as Array<{ calls: number; settled: number }>;
    console.log(`[ha] settled ${settled!.settled} of ${settled!.calls} calls; the person's record counts ${record?.settled} settled of ${record?.calls}`);
    expect(record).toEqual({ calls: settled!.calls, settled: settled!.settled });
  });

  it('the negative control: synchronous replication off, the standbys\' WAL receivers stopped, a lagging standby allowed to be promoted — the same count finds acknowledged calls lost', async () => {
    await ha.healthy();
    markets = await pickMarkets();
    // Patroni's dynamic configuration, as an operator would change it (PATCH /config).
    const patch = await fetch(`http://127.0.0.1:${ha.members[0]!.apiPort}/config`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ synchronous_mode: false, synchronous_mode_strict: false, maximum_lag_on_failover: 1024 ** 4 }),
    });
    expect(patch.status).toBe(200);
    await until('no synchronous standby any more', async () => {
      const c = await ha.cluster();
      return c.members.length === 3 && !c.members.some((m) => m.role === 'sync_standby');
    }, { timeoutMs: 30_000, everyMs: 200 });
    const w = writers('lossy', { retry: false });
    try {
      await until('calls acknowledged', async () => w.acked() >= 10, { timeoutMs: 60_000, everyMs: 50 });
      ha.pauseWalReceivers(true);
      const pausedAt = w.acked();
      await until('calls acknowledged that no standby received', async () => w.acked() >= pausedAt + 50, { timeoutMs: 60_000, everyMs: 50 });
      const leader = (await ha.leader())!;
      ha.kill(leader);
      // The WAL still in the stopped receivers' sockets is discarded with them, as a cut network would.
      ha.killWalReceivers();
      await until('another member promoted', async () => {
        const now = await ha.leader();
        return now && now.name !== leader.name;
      }, { timeoutMs: 90_000, everyMs: 100 });
    } finally {
      await w.stop();
    }
    const { lost } = audit(w.written, await onPrimary('lossy'));
    console.log(`[ha] negative control: ${w.acked()} calls acknowledged, ${lost.length} of them missing on the promoted standby`);
    expect(lost.length).toBeGreaterThan(0);
  }, 300_000);
});
