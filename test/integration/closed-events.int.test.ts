import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import { pino } from 'pino';
import {
  callListResponseSchema,
  candlesResponseSchema,
  errorBodySchema,
  marketBookResponseSchema,
  marketEventResponseSchema,
  marketHistoryResponseSchema,
  marketListResponseSchema,
} from '@pm/shared/api';
import { parseConfig } from '@pm/shared/config';
import { sql } from '@pm/shared/db';
import { insertRawPoints, seriesIds } from '@pm/shared/history';
import { redisKeys, type SnapshotName } from '@pm/shared/redis';
import { HISTORY_RANGES } from '@pm/shared/snapshots';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { apiRedis, memoryLogger, startApp, type RunningApp } from '../../services/api/src/testing/fixtures.js';
import { createWorker, type WorkerService } from '../../services/worker/src/worker.js';
import { createRetirement } from '../../services/worker/src/retire/retire.js';
import { REBUILT_KEEP_MS } from '../../services/worker/src/retire/closed-expiry.js';

/**
 * A closed event whose Redis snapshots were retired (docs/redis-keys.md "Closed events") is still on
 * the closed list, so its pages must still answer: the API, finding no snapshot for an event that
 * Postgres knows, asks the worker to build it and serves it once built; the rebuilt keys carry an
 * expiry, so Redis stays bounded. An unknown slug or id is a plain 404 and asks for nothing.
 *
 * Real Postgres, Redis and BullMQ: the worker service runs in-process (its sweep, builders and
 * retirement as in production), the API is a server of its own; the retirement is the worker's own code.
 */

const WEB = 'https://predict.example';
const HOUR = 3_600_000;
const logger = pino({ level: 'silent' });
let tdb: TestDatabase;
let tr: TestRedis;
let apiConn: Redis;
let app: RunningApp;
let worker: WorkerService | undefined;
/** What the API logged. */
const apiLog = memoryLogger();

/** Three events that closed 30 hours ago (past the 24-hour retention), each reached first by another route, and one open event. */
const CLOSED = ['a', 'b', 'c'].map((x) => ({
  id: `e-${x}`,
  slug: `final-${x}`,
  title: `Final ${x.toUpperCase()}`,
  markets: [`m${x}1`, `m${x}2`],
}));
const OPEN = { id: 'e-open', slug: 'open-match', title: 'Open match', markets: ['mo1'] };
const token = (market: string, i: number) => `tok-${market}-${i}`;
const keys = () => redisKeys(tr.prefix);

const startWorker = async () => {
  worker = createWorker({
    config: parseConfig({ REDIS_PREFIX: tr.prefix, PUBLIC_WEB_URL: WEB, SNAPSHOT_INTERVAL_MS: '250' }),
    db: tdb.db,
    redis: tr.redis,
    logger,
    databaseUrl: tdb.url,
  });
  await worker.start();
};
const stopWorker = async () => {
  await worker?.stop();
  worker = undefined;
};

async function get(path: string): Promise<{ status: number; body: unknown; ms: number; headers: Headers }> {
  const t0 = performance.now();
  const res = await fetch(`${app.base}${path}`);
  const body: unknown = await res.json();
  return { status: res.status, body, ms: Math.round(performance.now() - t0), headers: res.headers };
}

async function ok<S extends z.ZodType>(path: string, schema: S): Promise<{ data: z.output<S>; ms: number }> {
  const { status, body, ms } = await get(path);
  expect(status, `${path}: ${JSON.stringify(body)}`).toBe(200);
  return { data: schema.parse(body), ms };
}

const stored = (name: SnapshotName) => tr.redis.exists(keys().snapshot(name));
const ttlOf = (name: SnapshotName) => tr.redis.pttl(keys().snapshot(name));
const snapshotNames = (e: (typeof CLOSED)[number]): SnapshotName[] => [
  `event:${e.slug}`,
  ...e.markets.flatMap((m) => HISTORY_RANGES.map((r) => `history:${m}:${r}` as const)),
  `calls:market:${e.markets[0]}`,
];

async function insertEvent(e: { id: string; slug: string; title: string; markets: string[] }): Promise<void> {
  await tdb.db.query(sql`insert into events (id, slug, title, category, volume_24h) values (${e.id}, ${e.slug}, ${e.title}, 'Football', 10)`);
  for (const [position, m] of e.markets.entries()) {
    await tdb.db.query(sql`
      insert into markets (id, event_id, condition_id, position, question, closes_at)
      values (${m}, ${e.id}, ${`0x${m}`}, ${position}, ${`Question ${m}?`}, now() - interval '31 hours')
    `);
    for (const i of [0, 1]) {
      await tdb.db.query(sql`
        insert into outcomes (market_id, outcome_index, name, token_id, catalog_price) values (${m}, ${i}, ${i ? 'No' : 'Yes'}, ${token(m, i)}, 0.5)
      `);
    }
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase('closed_events');
  tr = await createTestRedis('closed_events');
  for (const e of [...CLOSED, OPEN]) await insertEvent(e);
  // Each market's first outcome drifted from 0.30 to 0.70 over the nine hours before it closed.
  const now = Math.floor(Date.now() / 1000);
  const series = await seriesIds(tdb.db, [...CLOSED, OPEN].flatMap((e) => e.markets.map((m) => token(m, 0))));
  await insertRawPoints(
    tdb.db,
    [...series.values()].flatMap((s) => Array.from({ length: 55 }, (_, i) => ({ series: s, t: now - 40 * 3600 + i * 600, chance: 0.3 + (0.4 * i) / 54 }))),
  );
  // Three calls on each closed event's first market (settled: they won).
  const users: Array<{ id: number }> = await tdb.db.query(sql`
    insert into users (handle, display_name) select 'p' || n, 'P' || n from generate_series(1, 3) as n returning id`);
  for (const e of CLOSED) {
    for (const [i, u] of users.entries()) {
      await tdb.db.query(sql`
        insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, made_at, settled_at)
        values (${`c-${e.id}-${i}`}, ${u.id}, ${e.markets[0]!}, 0, 0.4, 'won', 15, now() - interval '35 hours' + ${i} * interval '1 minute', now() - interval '30 hours')
      `);
    }
  }

  // While they were open, the worker built every page, history and call list.
  await startWorker();
  await until('every page, history and call list built', async () => {
    for (const e of CLOSED) for (const name of snapshotNames(e)) if (!(await stored(name))) return false;
    return true;
  }, { timeoutMs: 30_000, everyMs: 100 });
  await stopWorker();

  // Then they closed (the winner outcome 0), 30 hours ago, and the retirement took their keys.
  for (const e of CLOSED) {
    await tdb.db.query(sql`
      update markets set closed = true, resolved_outcome_index = 0, resolved_at = now() - interval '30 hours',
                         settled_at = now() - interval '30 hours', updated_at = now() - interval '30 hours'
      where event_id = ${e.id}`);
    await tdb.db.query(sql`update events set closed = true, updated_at = now() - interval '30 hours' where id = ${e.id}`);
  }
  const retire = createRetirement({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, logger, retentionMs: 24 * HOUR });
  expect(await retire.pass()).toMatchObject({ retired: CLOSED.length });
  for (const e of CLOSED) for (const name of snapshotNames(e)) expect(await stored(name), name).toBe(0);
  // What the stopped worker left marked is not this test's: the requests below start from empty sets.
  await clearRequests();

  apiConn = await apiRedis(tr.url);
  app = await startApp({ redis: apiConn, logger: apiLog.logger, env: { REDIS_PREFIX: tr.prefix, DATABASE_URL: tdb.url, PUBLIC_WEB_URL: WEB, RATE_LIMIT_PER_MINUTE: '100000' } });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await stopWorker();
  apiConn?.disconnect();
  await tr?.cleanup();
  await tdb?.drop();
});

const clearRequests = () => tr.redis.del(keys().dirtyEvents, keys().backfilledHistory, keys().dirtyRecords);
const requests = async () => ({
  events: await tr.redis.smembers(keys().dirtyEvents),
  history: await tr.redis.smembers(keys().backfilledHistory),
  records: await tr.redis.smembers(keys().dirtyRecords),
});

describe('a retired closed event, with no worker running', () => {
  it('an unknown slug or market id is a quick 404 that asks the worker for nothing', async () => {
    for (const path of ['/api/v1/markets/no-such-event', '/api/v1/markets/no-such-event/history', '/api/v1/markets/by-id/no-such-market', '/api/v1/calls?market=no-such-market']) {
      const { status, body, ms } = await get(path);
      if (path.startsWith('/api/v1/calls')) {
        // A market nobody has called, known or not, has an empty call list (docs/api.md); this prefix has no calls:latest yet.
        expect([200, 503], path).toContain(status);
      } else {
        expect(status, path).toBe(404);
        expect(errorBodySchema.parse(body).error.code).toBe('not_found');
      }
      console.log(`closed-events: unknown ${path} -> ${status} in ${ms} ms`);
      expect(ms, path).toBeLessThan(500);
    }
    expect(await requests()).toEqual({ events: [], history: [], records: [] });
  });

  it('a known one asks the worker for its snapshots once, and says when to try again when none comes', async () => {
    const e = CLOSED[0]!;
    const answers = await Promise.all(Array.from({ length: 5 }, () => get(`/api/v1/markets/${e.slug}`)));
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(errorBodySchema.parse(a.body).error.code).toBe('unavailable');
      expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(a.headers.get('cache-control')).toBe('no-store');
    }
    console.log(`closed-events: known, no worker -> 503 in ${Math.max(...answers.map((a) => a.ms))} ms`);
    // Five requests at once, one request to the worker.
    expect(apiLog.lines.filter((l) => l['event'] === e.slug && String(l['msg']).includes('requested from the worker'))).toHaveLength(1);
    expect(await requests()).toEqual({
      events: [e.id],
      history: expect.arrayContaining(e.markets) as unknown as string[],
      records: [`market:${e.markets[0]}`],
    });
    // The worker started next must not find these: it is to show that it builds nothing retired unasked.
    await clearRequests();
  });
});

describe('a retired closed event, with the worker running', () => {
  beforeAll(async () => {
    await startWorker();
    // The start's builds are done (the open event's history and the latest calls are written) ...
    await until('the start builds', async () => (await stored(`history:${OPEN.markets[0]}:1w`)) && (await stored('calls:latest')), { timeoutMs: 30_000, everyMs: 100 });
    // ... and brought back nothing of the retired events: they are built on request only.
    for (const e of CLOSED) for (const name of snapshotNames(e)) expect(await stored(name), name).toBe(0);
  }, 60_000);

  it('is still on the closed list', async () => {
    const { data } = await ok('/api/v1/markets?status=closed&limit=60', marketListResponseSchema);
    expect(data.events.map((c) => c.slug).sort()).toEqual(CLOSED.map((e) => e.slug).sort());
  });

  it('its page answers 200, as built from Postgres, within the wait', async () => {
    const e = CLOSED[0]!;
    const { data, ms } = await ok(`/api/v1/markets/${e.slug}`, marketEventResponseSchema);
    console.log(`closed-events: event page rebuilt on request in ${ms} ms`);
    expect(data.event.title).toBe(e.title);
    expect(data.event.markets.map((m) => m.id)).toEqual(e.markets);
    for (const m of data.event.markets) {
      expect(m.closed).toBe(true);
      expect(m.resolved_outcome).toBe(0);
      expect(m.outcomes.map((o) => o.chance)).toEqual([1, 0]);
    }
    // Again, from what the API holds.
    const again = await ok(`/api/v1/markets/${e.slug}`, marketEventResponseSchema);
    expect(again.data).toEqual(data);
  });

  it('its per-market routes answer 200 from cold: history, book, candles, the market by id', async () => {
    const e = CLOSED[1]!;
    const [m1, m2] = e.markets as [string, string];
    const history = await ok(`/api/v1/markets/${e.slug}/history?market=${m2}&range=1w`, marketHistoryResponseSchema);
    console.log(`closed-events: history rebuilt on request in ${history.ms} ms`);
    expect(history.data.market_id).toBe(m2);
    expect(history.data.points.length).toBeGreaterThan(5);
    expect(history.data.points.at(-1)?.chance).toBe(1);
    const book = await ok(`/api/v1/markets/${e.slug}/book?market=${m1}`, marketBookResponseSchema);
    expect(book.data).toMatchObject({ market_id: m1, as_of: null });
    expect(book.data.outcomes.map((o) => o.bids.length + o.asks.length)).toEqual([0, 0]);
    const candles = await ok(`/api/v1/markets/${e.slug}/candles?market=${m1}&interval=1h`, candlesResponseSchema);
    expect(candles.data.markets[0]?.candles.length).toBeGreaterThan(5);
    const byId = await ok(`/api/v1/markets/by-id/${m2}`, marketEventResponseSchema);
    expect(byId.data.event.slug).toBe(e.slug);
  });

  it('its call list answers with its calls from cold, and its market by id', async () => {
    const e = CLOSED[2]!;
    const { data, ms } = await ok(`/api/v1/calls?market=${e.markets[0]}`, callListResponseSchema);
    console.log(`closed-events: call list rebuilt on request in ${ms} ms`);
    expect(data.calls.map((c) => c.id).sort()).toEqual([0, 1, 2].map((i) => `c-${e.id}-${i}`));
    const byId = await ok(`/api/v1/markets/by-id/${e.markets[1]}`, marketEventResponseSchema);
    expect(byId.data.event.slug).toBe(e.slug);
  });

  it('the rebuilt keys carry an expiry that the retirement pass does not cut short, and no hash field comes back', async () => {
    for (const e of CLOSED) {
      // Whatever a route asked for first, the event's page, histories and call list were all requested.
      const missing = async () => {
        const out: string[] = [];
        for (const name of snapshotNames(e)) if (!(await stored(name))) out.push(name);
        return out;
      };
      let last: string[] = [];
      await until(() => `${e.slug}'s snapshots rebuilt (missing: ${last.join(', ')})`, async () => (last = await missing()).length === 0, { timeoutMs: 10_000, everyMs: 100 });
    }
    const retire = createRetirement({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, logger, retentionMs: 24 * HOUR });
    await retire.pass();
    for (const e of CLOSED) {
      for (const name of snapshotNames(e)) {
        const ttl = await ttlOf(name);
        expect(ttl, name).toBeGreaterThan(0);
        expect(ttl, name).toBeLessThanOrEqual(REBUILT_KEEP_MS);
      }
      for (const m of e.markets) expect(await tr.redis.hexists(keys().marketEvents, m), m).toBe(0);
    }
    // The open event's keys keep no expiry.
    expect(await ttlOf(`event:${OPEN.slug}`)).toBe(-1);
  });
});
