import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { EventSource } from 'eventsource';
import { Redis } from 'ioredis';
import { settlementMessageSchema } from '@pm/shared/api';
import { createDb, sql, type Db } from '@pm/shared/db';
import { portOpen } from '@pm/shared/net';
import { queuePrefix, settleJobId } from '@pm/shared/queues';
import { createRecords } from '@pm/shared/records';
import { createRedis, redisKeyBase, redisKeys } from '@pm/shared/redis';
import { callableMarkets, openMarketIds } from '../../scripts/lib/crowd/markets.js';
import { DEFAULT_PARTITIONS, partitionOf } from '../../services/ingestor/src/sharing/work-share.js';
import { builtEntry } from '../../scripts/lib/build.js';
import { runLineChildren, startStack, type Stack } from '../support/stack.js';
import { until } from '@pm/shared/wait';

/**
 * The cluster mode of the run line (`npm start -- --cluster`): a Redis Cluster of 3 masters with a
 * replica each, two API replicas, two workers, two ingestors sharing the markets by leases, the simulator and the
 * crowd — one stack for the whole file. TRUST_PROXY=1, so each test counts its requests under an
 * X-Forwarded-For address of its own and none eats another's rate limit.
 */

const LEASE_S = 10;
/**
 * The cluster's cluster-node-timeout: how long a silent master is waited for before its replica is
 * elected. The run line's value; 2 s passed too, but leaves a shared, loaded machine's pauses less room.
 */
const NODE_TIMEOUT_MS = 5_000;

let stack: Stack;
let redis: Redis;
let db: Db;
let apiB: string;
let ingestorPorts: number[];
let redisPorts: number[];
const sources: EventSource[] = [];

/**
 * A random base port with `base + offset` free for every offset (the replicas sit 100 above, the cluster
 * bus 10000). Bases stay in 10000–22000 so that every port, bus ports included, lies below Linux's
 * ephemeral range (32768+): a port from that range can be taken by any outgoing connection between
 * this check and the server's bind.
 */
const chosen = new Set<number>();
async function freeBase(offsets: number[]): Promise<number> {
  // CLUSTER_E2E_PORT_BASE: a range of 1000 ports for the services (a machine shared by several people);
  // it must lie below the ephemeral range as well (a 47000 range lost API ports to outgoing connections).
  // Never for the Redis nodes: their bus ports, 10000 higher, must stay below the ephemeral range too.
  const own = process.env.CLUSTER_E2E_PORT_BASE && !offsets.includes(10_000);
  const from = own ? Number(process.env.CLUSTER_E2E_PORT_BASE) : 10_000;
  const span = own ? 1_000 - Math.max(...offsets) : 12_000;
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = from + Math.floor(Math.random() * span);
    // Free now, and none of the ports chosen for the other servers of this stack.
    if (offsets.some((o) => chosen.has(base + o))) continue;
    const taken = await Promise.all(offsets.map((o) => portOpen('127.0.0.1', base + o, 200)));
    if (taken.some(Boolean)) continue;
    for (const o of offsets) chosen.add(base + o);
    return base;
  }
  throw new Error('no free port range');
}

beforeAll(async () => {
  const [port, ingestorPort, workerPort, simPort, clusterPort] = [
    await freeBase([0, 100]),
    await freeBase([0, 100]),
    await freeBase([0, 100]),
    await freeBase([0]),
    await freeBase([0, 1, 2, 3, 4, 5, 10_000, 10_001, 10_002, 10_003, 10_004, 10_005]),
  ];
  redisPorts = [0, 1, 2, 3, 4, 5].map((i) => clusterPort + i);
  ingestorPorts = [ingestorPort, ingestorPort + 100];
  stack = await startStack({
    args: ['--cluster'],
    env: {
      PORT: String(port),
      SIM_PORT: String(simPort),
      INGESTOR_PORT: String(ingestorPort),
      WORKER_PORT: String(workerPort),
      REDIS_CLUSTER_PORT: String(clusterPort),
      TRUST_PROXY: '1',
      INGESTOR_LEASE_SECONDS: String(LEASE_S),
      REDIS_CLUSTER_NODE_TIMEOUT_MS: String(NODE_TIMEOUT_MS),
    },
    readyTimeoutMs: 100_000,
  });
  apiB = `http://127.0.0.1:${port + 100}`;
  redis = createRedis(`redis+cluster://${redisPorts.map((p) => `127.0.0.1:${p}`).join(',')}`, { maxRetriesPerRequest: null });
  db = createDb(stack.databaseUrl, { poolSize: 2 });
  await until('replica B to serve the market list', async () => (await fetch(`${apiB}/api/v1/markets`)).status === 200, { timeoutMs: 30_000, context: () => stack.logs() });
}, 150_000);

afterAll(async () => {
  for (const s of sources) s.close();
  redis?.disconnect();
  await db?.dispose();
  await stack?.stop();
  // The run line stops its Redis nodes; one it could not (killed itself before it got to them) is
  // stopped here, with its folder: these ports were free when the test chose them.
  for (const port of redisPorts ?? []) {
    const left = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n').find((l) => l.includes(`redis-server 127.0.0.1:${port} `));
    const pid = Number(left?.trim().split(/\s+/)[0]);
    if (!pid) continue;
    const dir = readlinkSync(`/proc/${pid}/cwd`);
    process.kill(pid, 'SIGKILL');
    if (dir.includes('pm-redis-cluster-')) rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);

const get = (base: string, path: string, client: string) => fetch(`${base}${path}`, { headers: { 'x-forwarded-for': client } });

describe('npm start -- --cluster', () => {
  it('shares one rate limit over both API replicas: the 121st request of an address gets 429, whichever replica answers', async () => {
    const client = '203.0.113.7';
    const statuses: number[] = [];
    const remaining: number[] = [];
    for (let i = 0; i < 130; i++) {
      const res = await get(i % 2 === 0 ? stack.apiUrl : apiB, '/api/v1/markets', client);
      await res.arrayBuffer();
      statuses.push(res.status);
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
    expect(statuses.slice(0, 120).every((s) => s === 200), statuses.join(',')).toBe(true);
    expect(statuses.slice(120).every((s) => s === 429), statuses.join(',')).toBe(true);
    // One counter: each replica's answer continues the other's count.
    expect(remaining.slice(0, 120)).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));
  });

  it('two workers racing on the same resolutions settle every call exactly once', async () => {
    // Markets on which the crowd has made calls.
    const markets = await until(
      'three open markets with open calls',
      async () => {
        const rows = (await db.query(sql`
          select c.market_id from calls c join markets m on m.id = c.market_id
          where c.status = 'open' and not m.closed group by c.market_id order by count(*) desc limit 3
        `)) as Array<{ market_id: string }>;
        return rows.length === 3 ? rows.map((r) => r.market_id) : undefined;
      },
      { timeoutMs: 60_000, everyMs: 500, context: () => stack.logs() },
    );
    // 409: the demo crowd resolved that market a moment ago (it resolves some early) and the ingestor
    // has not marked it closed yet; it is resolved all the same, and its settlement races just as well.
    await Promise.all(markets.map(async (id) => expect([200, 409]).toContain((await stack.simControl('/_sim/resolve', { market_id: id, winning_outcome_index: 0 })).status)));
    await until('the resolutions recorded', async () => {
      const [row] = (await db.query(sql`select count(*)::int as n from market_resolutions where market_id = any(${markets}::text[])`)) as Array<{ n: number }>;
      return row!.n === markets.length;
    }, { timeoutMs: 45_000, everyMs: 250, context: () => stack.logs() });
    // Beside the relay's one job per market, more settle jobs for the same markets under other ids,
    // so that both workers settle the same markets at the same time.
    const settlement = new Queue('settlement', { connection: redis, prefix: queuePrefix(stack.prefix) });
    try {
      await settlement.addBulk(markets.flatMap((marketId) => ['a', 'b', 'c', 'd'].map((n) => ({ name: 'settle-market', data: { marketId }, opts: { jobId: `race-${n}-${marketId}` } }))));
    } finally {
      await settlement.close();
    }
    await until('every call of those markets settled', async () => {
      const [row] = (await db.query(sql`select count(*)::int as n from calls where market_id = any(${markets}::text[]) and status = 'open'`)) as Array<{ n: number }>;
      return row!.n === 0;
    }, { timeoutMs: 45_000, everyMs: 250, context: () => stack.logs() });
    await until('the racing jobs done', async () => {
      const q = new Queue('settlement', { connection: redis, prefix: queuePrefix(stack.prefix) });
      try {
        const counts = await q.getJobCounts('waiting', 'active', 'delayed');
        return (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0) === 0;
      } finally {
        await q.close();
      }
    }, { timeoutMs: 30_000, everyMs: 250 });

    // A settlement that changed anything writes one `market-settled` row with what it settled: a
    // second run that settled a call again would have written a second row.
    const settledRows = (await db.query(sql`
      select payload->>'marketId' as market_id, count(*)::int as n from outbox
      where topic = 'market-settled' group by 1
    `)) as Array<{ market_id: string; n: number }>;
    for (const m of markets) expect(settledRows.find((r) => r.market_id === m)?.n, m).toBe(1);
    expect(settledRows.filter((r) => r.n !== 1)).toEqual([]);
    const calls = (await db.query(sql`select status, count(*)::int as n from calls where market_id = any(${markets}::text[]) group by status`)) as Array<{ status: string; n: number }>;
    expect(calls.every((c) => c.status === 'won' || c.status === 'lost' || c.status === 'void')).toBe(true);
  });

  it('SIGKILL of an ingestor: its markets keep moving through the API, and no token is subscribed twice for longer than a lease', async () => {
    const members = (await redis.hgetall(redisKeys(stack.prefix).ingestors)) as Record<string, string>;
    const ids = ingestorPorts.map((p) => `${hostname()}:${p}`);
    await until('both ingestors sharing', async () => {
      const now = await redis.hgetall(redisKeys(stack.prefix).ingestors);
      return ids.every((id) => now[id] && (JSON.parse(now[id]) as { partitions: number[] }).partitions.length > 0);
    }, { timeoutMs: 30_000, everyMs: 250, context: () => JSON.stringify(members) });
    const state = Object.fromEntries(Object.entries(await redis.hgetall(redisKeys(stack.prefix).ingestors)).map(([id, v]) => [id, JSON.parse(v) as { partitions: number[]; leader: boolean }]));
    // The leader: its death also moves the catalog sync.
    const victimId = ids.find((id) => state[id]?.leader) ?? ids[0]!;
    const victimParts = new Set(state[victimId]!.partitions);
    const victimPid = ingestorPid(Number(victimId.split(':').at(-1)));

    const candidates = (await db.query(sql`
      select e.slug, m.id as market_id, o.token_id from events e
      join markets m on m.event_id = e.id join outcomes o on o.market_id = m.id and o.outcome_index = 0
      where not e.closed and not m.closed order by e.id, m.id
    `)) as Array<{ slug: string; market_id: string; token_id: string }>;
    const target = candidates.find((c) => victimParts.has(partitionOf(c.market_id, DEFAULT_PARTITIONS)));
    expect(target, 'an open market owned by the victim').toBeDefined();
    const { slug, market_id: marketId, token_id: tokenId } = target!;
    const shown = async () => {
      const res = await get(stack.apiUrl, `/api/v1/markets/${slug}`, '203.0.113.8');
      const body = (await res.json()) as { event?: { markets: Array<{ id: string; outcomes: Array<{ chance: number }> }> } };
      return body.event?.markets.find((m) => m.id === marketId)?.outcomes[0]?.chance;
    };
    const book = (bid: string, ask: string) => stack.simControl('/_sim/book', { token_id: tokenId, bids: [{ price: bid, size: '500' }], asks: [{ price: ask, size: '500' }] });

    await stack.simControl('/_sim/pause', {});
    const overlap = watchDoubleSubscriptions();
    try {
      await book('0.37', '0.38');
      await until('the victim to serve 0.375', async () => (await shown()) === 0.375, { timeoutMs: 20_000, everyMs: 200, context: () => stack.logs() });

      process.kill(victimPid, 'SIGKILL');
      const killedAt = Date.now();
      await book('0.61', '0.62');
      const movedAfter = await until('the market to move again through the API', async () => ((await shown()) === 0.615 ? Date.now() - killedAt : undefined), {
        timeoutMs: 45_000,
        everyMs: 200,
        context: () => stack.logs(),
      });
      // Both ingestors (the survivor, and the killed one restarted by the run line) share again.
      await until('all partitions served by live ingestors', async () => {
        const now = Object.values(await redis.hgetall(redisKeys(stack.prefix).ingestors)).map((v) => JSON.parse(v) as { at: number; partitions: number[] });
        const live = now.filter((m) => Date.now() - m.at < LEASE_S * 1000);
        return live.reduce((n, m) => n + m.partitions.length, 0) === DEFAULT_PARTITIONS && live.length === 2;
      }, { timeoutMs: 45_000, everyMs: 250, context: () => stack.logs() });
      const worst = await overlap.stop();
      console.log(`ingestor ${victimId} SIGKILLed: its market moved through the API after ${movedAfter} ms; longest double subscription of a token ${worst.ms} ms (${worst.token ?? 'none'})`);
      expect(movedAfter).toBeLessThan(45_000);
      expect(worst.ms).toBeLessThan(LEASE_S * 1000);
    } finally {
      await overlap.stop();
      await stack.simControl('/_sim/resume', {});
    }
  });

  it('a stream client that drops from replica B resumes on replica A with Last-Event-ID and gets exactly the settlements a client that stayed got', async () => {
    const url = (base: string) => `${base}/api/v1/stream?topics=settlement`;
    const client = '203.0.113.9';
    // Open markets nobody resolved yet, one per event (a market settles alone, whatever its event's others do).
    const markets = await until(
      'four open markets in the catalog',
      async () => {
        const rows = (await db.query(sql`
          select distinct on (m.event_id) m.id from markets m join events e on e.id = m.event_id
          where not m.closed and not e.closed and not exists (select 1 from market_resolutions r where r.market_id = m.id)
          order by m.event_id, m.id limit 4
        `)) as Array<{ id: string }>;
        return rows.length === 4 && rows.map((r) => r.id);
      },
      { timeoutMs: 30_000, everyMs: 250, context: () => stack.logs() },
    );
    const resolve = (ids: string[]) =>
      Promise.all(ids.map(async (id) => expect((await stack.simControl('/_sim/resolve', { market_id: id, winning_outcome_index: 0 })).status).toBe(200)));
    const settled = (got: Received[], id: string) => got.some((r) => settlementMessageSchema.parse(JSON.parse(r.data)).market_id === id);
    // 45 s: a resolution whose ws message no ingestor heard (its market changing hands just then) is
    // found by the catalog sync, every 30 s.
    const waitFor = (what: string, check: () => boolean) => until(what, async () => check(), { timeoutMs: 45_000, everyMs: 50, context: () => stack.logs() });

    // The client that stays, on B; the one that drops, on B too.
    const watcher = listen(url(apiB), client);
    const dropping = listen(url(apiB), client);
    await Promise.all([watcher.opened, dropping.opened]);
    await resolve([markets[0]!]);
    await waitFor('both clients on B to get the first settlement', () => settled(dropping.got, markets[0]!) && settled(watcher.got, markets[0]!));
    dropping.source.close();
    const lastId = dropping.got.at(-1)!.id;

    // Settled while it is away.
    await resolve([markets[1]!, markets[2]!]);
    await waitFor('the watcher to get the settlements missed', () => settled(watcher.got, markets[1]!) && settled(watcher.got, markets[2]!));

    // Back on A, from its last id; then one more settlement, live.
    const back = listen(url(stack.apiUrl), client, lastId);
    await back.opened;
    await resolve([markets[3]!]);
    await waitFor('both to get the live settlement', () => settled(watcher.got, markets[3]!) && settled(back.got, markets[3]!));

    // Up to the live settlement: a later one (a market resolving on its own) must not race the comparison.
    const upToLive = (got: Received[]) => got.slice(0, got.findIndex((r) => settled([r], markets[3]!)) + 1);
    const meanwhile = upToLive(watcher.got.slice(watcher.got.findIndex((r) => r.id === lastId) + 1));
    expect(meanwhile.length).toBeGreaterThanOrEqual(3);
    expect(upToLive(back.got).map((r) => r.id)).toEqual(meanwhile.map((r) => r.id));
    expect(upToLive(back.got).map((r) => r.data)).toEqual(meanwhile.map((r) => r.data));
    for (const id of markets.slice(1)) expect(settled(back.got, id), id).toBe(true);
    watcher.source.close();
    back.source.close();
  });

  it('SIGKILL of a Redis master while calls are made and markets resolve: its replica takes over, nothing is lost or doubled, the API keeps answering, and the old master rejoins as a replica', async () => {
    const records = createRecords({ db, redis, prefix: stack.prefix });
    const handle = `failover_${Date.now().toString(36)}`;
    await records.createUser({ handle, displayName: 'Failover' });
    // The masters of the stack's two hash tags: its keys (snapshots, prices, the stream) and its queues.
    // Each is killed in turn, so both the API's reads and the workers' queues live through a failover.
    const victims = [...new Set([await masterOf(redisKeyBase(stack.prefix)), await masterOf(queuePrefix(stack.prefix))])];
    const polls = { total: 0, non200: [] as string[] };
    // Polls from each kill until the old master is back, summed over the kills: what the failovers cost.
    const failover = { polls: 0, non200: [] as string[] };
    const watcher = listen(`${apiB}/api/v1/stream?topics=settlement`, '203.0.113.20');
    const settlements = watcher.got;
    await watcher.opened;
    const acked: string[] = [];
    const resolved: string[] = [];
    const report: string[] = [];

    for (const victim of victims) {
      // Markets with live prices, one per event, that the test calls on and then resolves.
      const markets = await until('four callable markets', async () => {
        // Markets that stay open through the test: the simulator's five-minute markets close on their
        // own, and a rotation left with only closed ones acknowledges no call.
        const lasting = (await db.query(sql`
          select m.id from markets m where m.id = any(${await openMarketIds(db)}::text[])
            and (m.closes_at is null or m.closes_at > now() + interval '15 minutes')
        `)) as Array<{ id: string }>;
        const found = await callableMarkets(db, redis, stack.prefix, Date.now(), { ids: lasting.map((r) => r.id) });
        const perEvent = [...new Map(found.map((m) => [m.eventId, m])).values()].slice(0, 4);
        return perEvent.length === 4 ? perEvent.map((m) => m.id) : undefined;
      }, { timeoutMs: 30_000, everyMs: 500, context: () => stack.logs() });

      // The crowd of this test: a call every 100 ms (a refused one is not acknowledged, so not counted),
      // and polls of both replicas every 25 ms, each from an address of its own (no rate limit in the way).
      let n = 0;
      let refusal = '';
      const calling = repeat(100, async () => {
        const marketId = markets[n++ % markets.length]!;
        try {
          acked.push((await records.recordCall({ handle, marketId, outcomeIndex: n % 2, thesis: `failover ${n}` })).id);
        } catch (err) {
          // refused (a market closed by its resolution, or no live price for a moment): the caller would see it
          refusal = err instanceof Error ? err.message : String(err);
        }
      });
      // Snapshot lists, a Postgres page (the person's), on both replicas; every pair answered once before
      // the kill, as a served page is (its snapshot held by the replica that serves it).
      const paths = ['/api/v1/markets', '/api/v1/calls', `/api/v1/users/${handle}`, '/api/v1/leaderboard', '/api/v1/combos'];
      let k = 0;
      const answered = new Set<number>();
      const inFlight = new Set<Promise<void>>();
      const polling = repeat(25, async () => {
        // Not waiting for the answer: a slow one must not thin out the polls that measure the failover.
        if (inFlight.size >= 40) return;
        const i = k++;
        const pair = i % (paths.length * 2);
        const path = paths[pair % paths.length]!;
        const poll = (async () => {
          const res = await get(pair < paths.length ? stack.apiUrl : apiB, path, `198.51.${(i >> 8) & 255}.${i & 255}`).catch(() => undefined);
          await res?.arrayBuffer().catch(() => {});
          polls.total++;
          if (res?.status === 200) answered.add(pair);
          else polls.non200.push(`${path} ${res?.status ?? 'no answer'}`);
        })();
        inFlight.add(poll);
        void poll.finally(() => inFlight.delete(poll));
      });
      await until('some calls acknowledged and every page answered before the kill', async () => acked.length >= 5 && answered.size === paths.length * 2, {
        timeoutMs: 90_000,
        everyMs: 100,
        context: () => `${stack.logs()}\n${polls.non200.join(', ')}`,
      });

      const before = { polls: polls.total, non200: polls.non200.length };
      const pid = redisNodePid(victim);
      process.kill(pid, 'SIGKILL');
      const killedAt = Date.now();
      // Two of the markets resolve while the master is away: their settlement jobs go through the failover.
      for (const id of markets.slice(0, 2)) {
        expect([200, 409]).toContain((await stack.simControl('/_sim/resolve', { market_id: id, winning_outcome_index: 0 })).status);
        resolved.push(id);
      }
      const okAfterMs = await until('the cluster to be ok again with the victim\'s slots on another master', async () => {
        const live = redisPorts.filter((p) => p !== victim);
        const states = await Promise.all(live.map((p) => askNode(p, 'CLUSTER', 'INFO')));
        if (!states.every((s) => s?.includes('cluster_state:ok'))) return undefined;
        return (await mastersNow()).includes(victim) ? undefined : Date.now() - killedAt;
      }, { timeoutMs: 30_000, everyMs: 100, context: () => stack.logs() });
      // A few seconds of traffic on the new master before the rest resolve.
      const ackedAtOk = acked.length;
      // (An ingestor whose lease lapsed while Redis was away serves its markets again, and their prices are live again, first.)
      await until('calls acknowledged on the new master', async () => acked.length >= ackedAtOk + 10, { timeoutMs: 90_000, everyMs: 100, context: () => `${stack.logs()}\nlast refusal: ${refusal}` });
      for (const id of markets.slice(2)) {
        expect([200, 409]).toContain((await stack.simControl('/_sim/resolve', { market_id: id, winning_outcome_index: 0 })).status);
        resolved.push(id);
      }
      await calling.stop();
      // The old master back (the run line starts it again) as a replica of the one that took its slots.
      const rejoinedMs = await until('the old master back as a replica', async () => {
        const info = await askNode(victim, 'INFO', 'replication');
        return info?.includes('role:slave') && info.includes('master_link_status:up') ? Date.now() - killedAt : undefined;
      }, { timeoutMs: 90_000, everyMs: 250, context: () => stack.logs() });
      await polling.stop();
      await Promise.all(inFlight);
      const during = { polls: polls.total - before.polls, non200: polls.non200.slice(before.non200) };
      failover.polls += during.polls;
      failover.non200.push(...during.non200);
      report.push(`master :${victim} SIGKILLed: cluster_state ok on a new master after ${okAfterMs} ms, old master a replica after ${rejoinedMs} ms; API polls ${during.polls}, non-200 ${during.non200.length}`);
      expect(okAfterMs).toBeLessThan(20_000);
    }

    // Every acknowledged call recorded once; every call of the resolved markets settled once.
    // A resolution no ingestor heard while its lease lapsed is found by the next catalog sync (30 s).
    let where = '';
    await until('every call on the resolved markets settled', async () => {
      const rows = (await db.query(sql`
        select m.id, m.closed, (select count(*)::int from market_resolutions r where r.market_id = m.id) as resolutions,
               m.settled_at is not null as settled, (select count(*)::int from calls c where c.market_id = m.id and c.status = 'open') as open
        from markets m where m.id = any(${resolved}::text[])
      `)) as Array<{ id: string; closed: boolean; resolutions: number; settled: boolean; open: number }>;
      const done = rows.every((r) => r.open === 0);
      if (!done) {
        // What the settlement queue holds for the markets still open: a job waiting that no worker takes
        // and a job missing are different faults.
        const q = new Queue('settlement', { connection: redis, prefix: queuePrefix(stack.prefix) });
        try {
          const jobs = await Promise.all(rows.filter((r) => r.open > 0).map(async (r) => {
            const job = await q.getJob(settleJobId(r.id));
            return `${r.id}:${job ? await job.getState() : 'missing'}`;
          }));
          where = `${JSON.stringify(rows)}\njobs ${jobs.join(' ')} counts ${JSON.stringify(await q.getJobCounts())} workers ${(await q.getWorkers()).length}`;
        } finally {
          await q.close();
        }
      }
      return done;
    }, { timeoutMs: 120_000, everyMs: 250, context: () => `${stack.logs()}\n${where}` });
    const mine = (await db.query(sql`select c.id, c.status, c.market_id from calls c join users u on u.id = c.user_id where u.handle = ${handle}`)) as Array<{ id: string; status: string; market_id: string }>;
    expect(new Set(mine.map((c) => c.id)).size).toBe(mine.length);
    expect(mine.map((c) => c.id).sort()).toEqual([...acked].sort());
    const settledOfMine = mine.filter((c) => c.status !== 'open').length;
    expect(settledOfMine).toBe(mine.filter((c) => resolved.includes(c.market_id)).length);
    // A second settlement of a market would have written a second `market-settled` row.
    const settledRows = (await db.query(sql`
      select payload->>'marketId' as market_id, count(*)::int as n from outbox
      where topic = 'market-settled' and payload->>'marketId' = any(${resolved}::text[]) group by 1
    `)) as Array<{ market_id: string; n: number }>;
    expect(settledRows.filter((r) => r.n !== 1)).toEqual([]);
    // The person's record counted each settled call once, and the API shows it.
    await until('the person page to show every settled call', async () => {
      const res = await get(stack.apiUrl, `/api/v1/users/${handle}`, '203.0.113.21');
      const body = (await res.json()) as { user?: { settled?: number; calls?: number } };
      return body.user?.settled === settledOfMine && body.user.calls === mine.length;
    }, { timeoutMs: 30_000, everyMs: 250, context: () => stack.logs() });
    // The stream client that stayed on B through both failovers got each settlement once (it reconnects
    // by itself with its last id when its connection drops).
    await until('the stream to show every resolved market', async () => resolved.every((id) => settlements.some((r) => settlementMessageSchema.parse(JSON.parse(r.data)).market_id === id)), {
      timeoutMs: 45_000,
      everyMs: 100,
      context: () => stack.logs(),
    });
    const streamed = settlements.map((r) => settlementMessageSchema.parse(JSON.parse(r.data)).market_id).filter((id) => resolved.includes(id));
    expect(streamed.length).toBe(new Set(streamed).size);
    expect(new Set(settlements.map((r) => r.id)).size).toBe(settlements.length);

    const share = failover.non200.length / failover.polls;
    console.log(`${report.join('; ')}. Calls acknowledged ${acked.length}, recorded ${mine.length}, settled ${settledOfMine}; API non-200 during the failovers ${failover.non200.length} of ${failover.polls} polls (${(share * 100).toFixed(2)} %): ${failover.non200.slice(0, 10).join(', ')}`);
    expect(failover.polls).toBeGreaterThan(100);
    expect(share).toBeLessThanOrEqual(0.01);
    watcher.source.close();
  }, 420_000);
});

interface Received {
  id: string;
  data: string;
}

/** An EventSource (the `eventsource` package) on the stream, as `client` (X-Forwarded-For), with `Last-Event-ID` when given. */
function listen(url: string, client: string, lastEventId?: string): { source: EventSource; got: Received[]; opened: Promise<void> } {
  const got: Received[] = [];
  const headers = { 'x-forwarded-for': client, ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }) };
  const source = new EventSource(url, { fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...headers } }) });
  sources.push(source);
  source.addEventListener('settlement', (e) => got.push({ id: e.lastEventId, data: e.data }));
  const opened = new Promise<void>((resolve) => source.addEventListener('open', () => resolve(), { once: true }));
  return { source, got, opened };
}

/** The pid of the ingestor the run line started with this ops port (its environment says which). */
function ingestorPid(opsPort: number): number {
  const children = runLineChildren(stack);
  for (const { pid, args } of children) {
    if (!args.includes(builtEntry('ingestor'))) continue;
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    if (environ.includes(`INGESTOR_PORT=${opsPort}`)) return pid;
  }
  throw new Error(`no ingestor with INGESTOR_PORT=${opsPort} among ${children.map((c) => `${c.pid} ${c.args}`).join(' | ')}`);
}

/** Samples the simulator's subscriptions every 200 ms: the longest a token stayed on more than one socket. */
function watchDoubleSubscriptions(): { stop(): Promise<{ ms: number; token?: string }> } {
  const since = new Map<string, number>();
  let worst: { ms: number; token?: string } = { ms: 0 };
  let stopped = false;
  // A sample every 200 ms until stopped (at most 10 minutes: no watched restart takes that long).
  const loop = until('the double-subscription watch to be stopped', async () => {
    const res = await stack.simControl('/_sim/state');
    const { subscriptions } = (await res.json()) as { subscriptions: { onSeveralSockets: string[] } };
    const now = Date.now();
    const doubled = new Set(subscriptions.onSeveralSockets);
    for (const token of since.keys()) if (!doubled.has(token)) since.delete(token);
    for (const token of doubled) {
      if (!since.has(token)) since.set(token, now);
      const ms = now - since.get(token)!;
      if (ms > worst.ms) worst = { ms, token };
    }
    return stopped;
  }, { timeoutMs: 600_000, everyMs: 200 });
  return {
    async stop() {
      stopped = true;
      await loop;
      return worst;
    },
  };
}

/** Runs `step` every `everyMs` (one at a time) until stopped; at most 10 minutes. */
function repeat(everyMs: number, step: () => Promise<void>): { stop(): Promise<void> } {
  let stopped = false;
  const loop = until('a repeated step to be stopped', async () => {
    if (!stopped) await step();
    return stopped;
  }, { timeoutMs: 600_000, everyMs });
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** One command to one cluster node on its own connection; undefined when it does not answer. */
async function askNode(port: number, ...args: string[]): Promise<string | undefined> {
  const node = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1_000 });
  node.on('error', () => {});
  try {
    await node.connect();
    return String(await node.call(args[0]!, ...args.slice(1)));
  } catch {
    return undefined;
  } finally {
    node.disconnect();
  }
}

/** The ports of the masters that serve slots now, as the first node that answers sees them. */
async function mastersNow(): Promise<number[]> {
  for (const port of redisPorts) {
    const nodes = await askNode(port, 'CLUSTER', 'NODES');
    if (nodes === undefined) continue;
    return nodes.split('\n').filter(Boolean).map((l) => l.split(' ')).filter((f) => f[2]!.includes('master') && !f[2]!.includes('fail') && f.length > 8).map((f) => Number(/:(\d+)@/.exec(f[1]!)![1]));
  }
  return [];
}

/** The port of the master serving the slot of `key` now. */
async function masterOf(key: string): Promise<number> {
  const slot = Number(await askNode(redisPorts[0]!, 'CLUSTER', 'KEYSLOT', key));
  for (const port of redisPorts) {
    const shards = await askNode(port, 'CLUSTER', 'NODES');
    if (shards === undefined) continue;
    for (const f of shards.split('\n').filter(Boolean).map((l) => l.split(' '))) {
      if (!f[2]!.includes('master')) continue;
      for (const range of f.slice(8)) {
        const [from, to] = range.split('-').map(Number);
        if (slot >= from! && slot <= (to ?? from)!) return Number(/:(\d+)@/.exec(f[1]!)![1]);
      }
    }
  }
  throw new Error(`no master serves slot ${slot}`);
}

/** The pid of the run line's redis-server on this port. */
function redisNodePid(port: number): number {
  const node = runLineChildren(stack).find(({ args }) => args.startsWith('redis-server') && args.includes(`:${port} `) || args.includes(`--port ${port} `));
  if (!node) throw new Error(`no redis-server on port ${port} among ${runLineChildren(stack).map((c) => c.args).join(' | ')}`);
  return node.pid;
}

