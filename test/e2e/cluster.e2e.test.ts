import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { EventSource } from 'eventsource';
import type { Redis } from 'ioredis';
import { settlementMessageSchema } from '@pm/shared/api';
import { createDb, sql, type Db } from '@pm/shared/db';
import { portOpen } from '@pm/shared/net';
import { queuePrefix } from '@pm/shared/queues';
import { createRedis, redisKeys } from '@pm/shared/redis';
import { DEFAULT_PARTITIONS, partitionOf } from '../../services/ingestor/src/sharing/work-share.js';
import { builtEntry } from '../../scripts/lib/build.js';
import { runLineChildren, startStack, type Stack } from '../support/stack.js';
import { until } from '@pm/shared/wait';

/**
 * The cluster mode of the run line (`npm start -- --cluster`, issue 14): a 3-master Redis Cluster,
 * two API replicas, two workers, two ingestors sharing the markets by leases, the simulator and the
 * crowd — one stack for the whole file. TRUST_PROXY=1, so each test counts its requests under an
 * X-Forwarded-For address of its own and none eats another's rate limit.
 */

const LEASE_S = 10;

let stack: Stack;
let redis: Redis;
let db: Db;
let apiB: string;
let ingestorPorts: number[];
const sources: EventSource[] = [];

/**
 * A random base port with `base + offset` free for every offset (the replicas sit 100 above, the cluster
 * bus 10000). Bases stay in 10000–22000 so that every port, bus ports included, lies below Linux's
 * ephemeral range (32768+): a port from that range can be taken by any outgoing connection between
 * this check and the server's bind.
 */
async function freeBase(offsets: number[]): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 10_000 + Math.floor(Math.random() * 12_000);
    const taken = await Promise.all(offsets.map((o) => portOpen('127.0.0.1', base + o, 200)));
    if (!taken.some(Boolean)) return base;
  }
  throw new Error('no free port range');
}

beforeAll(async () => {
  const [port, ingestorPort, workerPort, simPort, clusterPort] = [
    await freeBase([0, 100]),
    await freeBase([0, 100]),
    await freeBase([0, 100]),
    await freeBase([0]),
    await freeBase([0, 1, 2, 10_000, 10_001, 10_002]),
  ];
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
    },
    readyTimeoutMs: 100_000,
  });
  apiB = `http://127.0.0.1:${port + 100}`;
  redis = createRedis(`redis+cluster://127.0.0.1:${clusterPort},127.0.0.1:${clusterPort + 1}`, { maxRetriesPerRequest: null });
  db = createDb(stack.databaseUrl, { poolSize: 2 });
  await until('replica B to serve the market list', async () => (await fetch(`${apiB}/api/v1/markets`)).status === 200, { timeoutMs: 30_000, context: () => stack.logs() });
}, 150_000);

afterAll(async () => {
  for (const s of sources) s.close();
  redis?.disconnect();
  await db?.dispose();
  await stack?.stop();
});

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
