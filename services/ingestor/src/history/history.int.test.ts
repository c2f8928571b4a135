import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { redisKeys } from '@pm/shared/redis';
import { sql, tables } from '@pm/shared/db';
import { parseGammaEvents } from '@pm/shared/exchange';
import { createTestDatabase, createTestRedisPrefixes, resetDatabase, type TestDatabase, type TestRedisPrefix, type TestRedisPrefixes } from '@pm/shared/testing';
import { createHistoryClient } from './history-client.js';
import { createHistoryRecorder, type HistoryRecorder } from './history-recorder.js';
import { catalogGameRows, writeCatalogGames } from '../catalog/catalog-games.js';

/**
 * Price history recording against a real Postgres and Redis, with a tiny /prices-history server:
 * backfill on first sight (coarser on an empty answer, retried after a failure), live points on a
 * move or once a minute, and the catalog's game state filling `games`.
 */

const logger = pino({ level: 'silent' });
const TOKEN = (n: number) => `5132104567925221259462638553270691275033272857194253228963137931245558399${String(n).padStart(4, '0')}`;
const NOW_S = 1_800_000_000;

let database: TestDatabase;
let redis: TestRedisPrefix;
let redisPrefixes: TestRedisPrefixes;
let server: http.Server;
let clobUrl: string;
const requests: Array<{ market: string; interval: string; fidelity: string }> = [];
/** Per token: how the fake answers. */
const behaviour = new Map<string, 'month' | 'coarse-only' | 'fail-once' | 'none'>();
const failed = new Set<string>();

function month(step: number): Array<{ t: number; p: number }> {
  const out: Array<{ t: number; p: number }> = [];
  for (let t = NOW_S - 35 * 86_400; t <= NOW_S; t += step * 60) out.push({ t, p: 0.3 + ((t / 60) % 7) / 100 });
  return out;
}

let now: number;
const clock = { now: () => now };
const recorders: HistoryRecorder[] = [];

function recorder(markets: Map<string, string>): HistoryRecorder {
  const r = createHistoryRecorder({
    db: database.db,
    redis: redis.redis,
    keys: redisKeys(redis.prefix),
    fetchHistory: createHistoryClient({ clobUrl }),
    clock,
    logger,
    firstOutcomeMarket: (tokenId) => markets.get(tokenId),
    flushMs: 60_000, // tests flush by hand
    backfill: { concurrency: 2, paceMs: 0, retryMs: 20, retryMaxMs: 50, maxAttempts: 3 },
  });
  recorders.push(r);
  return r;
}

/** A recorder that first sees `token` (of `market`) at `chance`, after its flush and backfill. */
async function seenOnce(token: string, market: string, chance: number): Promise<HistoryRecorder> {
  const r = recorder(new Map([[token, market]]));
  r.offer(token, chance);
  await r.flush();
  await r.backfillIdle();
  return r;
}

/** A token's raw (live) points. */
async function points(tokenId: string): Promise<Array<{ t: number; chance: number }>> {
  return (
    await database.db.query(sql`select r.t, r.chance::float8 as chance from raw_points r join series s on s.id = r.series where s.token_id = ${tokenId} order by r.t`)
  ).map((r: { t: number; chance: number }) => ({ t: r.t, chance: Math.round(r.chance * 10_000) / 10_000 }));
}

/** A token's candles of one tier (step seconds): bucket start and close, ascending. */
async function candles(tokenId: string, step: number): Promise<Array<{ t: number; close: number }>> {
  const rows: Array<{ t: number; c: number }> = await database.db.query(sql`
    select k.p + (i - 1) * k.step as t, k.c[i] as c
    from candles k join series s on s.id = k.series cross join lateral generate_subscripts(k.c, 1) i
    where s.token_id = ${tokenId} and k.step = ${step} and k.c[i] is not null order by 1
  `);
  return rows.map((r) => ({ t: r.t, close: r.c / 10_000 }));
}

beforeAll(async () => {
  [database, redisPrefixes] = await Promise.all([createTestDatabase('ingestor_history'), createTestRedisPrefixes('ingestor_history')]);
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const q = { market: url.searchParams.get('market') ?? '', interval: url.searchParams.get('interval') ?? '', fidelity: url.searchParams.get('fidelity') ?? '' };
    requests.push(q);
    const kind = behaviour.get(q.market) ?? 'none';
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname !== '/prices-history') return send(404, { error: 'not found' });
    if (kind === 'fail-once' && !failed.has(q.market)) {
      failed.add(q.market);
      return send(500, { error: 'boom' });
    }
    if (kind === 'none') return send(200, { history: [] });
    // A resolved market: nothing at fine fidelity, a daily series when asked coarser.
    if (kind === 'coarse-only' && Number(q.fidelity) < 1440) return send(200, { history: [] });
    const fidelity = Number(q.fidelity);
    const series = month(fidelity).filter((p) => (q.interval === '1w' ? p.t >= NOW_S - 7 * 86_400 : true));
    return send(200, { history: series });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  clobUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await redisPrefixes?.cleanup();
  await database?.drop();
});

// Each test: an empty database and Redis prefix, the clock at NOW_S, and a fake that has been asked nothing.
beforeEach(async () => {
  now = NOW_S * 1000;
  await resetDatabase(database.db);
  redis = redisPrefixes.next();
  requests.length = 0;
  behaviour.clear();
  failed.clear();
});

afterEach(async () => {
  for (const r of recorders.splice(0)) await r.close();
});

describe('backfill on first sight', () => {
  it('fetches a month hourly and the last week at 5 minutes into the 1h and 5m tiers, and marks the market dirty', async () => {
    const token = TOKEN(1);
    behaviour.set(token, 'month');
    await seenOnce(token, 'm1', 0.31);
    const asked = requests.filter((q) => q.market === token);
    expect(asked.map((q) => `${q.interval}/${q.fidelity}`)).toEqual(['max/60', '1w/5']);
    // Each fetch in the tier of its fidelity: 35 days hourly (841) in 1h, and the 1d candles from
    // them; the last week at 5 minutes in 5m. Raw holds only the live point: the past is not invented as moves.
    const hours = await candles(token, 3600);
    expect(hours.map((c) => c.t)).toEqual(month(60).map((p) => p.t));
    expect(hours.map((c) => c.close)).toEqual(month(60).map((p) => Math.round(p.p * 10_000) / 10_000));
    const fine = month(5).filter((p) => p.t >= NOW_S - 7 * 86_400);
    expect((await candles(token, 300)).map((c) => c.close)).toEqual(fine.map((p) => Math.round(p.p * 10_000) / 10_000));
    const days = await candles(token, 86_400);
    expect(days).toHaveLength(36);
    expect(days[0]?.t).toBe(NOW_S - 35 * 86_400 - ((NOW_S - 35 * 86_400) % 86_400));
    expect(await points(token)).toEqual([{ t: NOW_S, chance: 0.31 }]);
    // Its past is marked for an immediate rebuild; its live point as an ordinary change.
    expect(await redis.redis.smembers(redisKeys(redis.prefix).backfilledHistory)).toEqual(['m1']);
    expect(await redis.redis.smembers(redisKeys(redis.prefix).dirtyHistory)).toEqual(['m1']);

    // A second recorder (a restart) sees the past and does not ask again.
    await seenOnce(token, 'm1', 0.32);
    expect(requests.filter((q) => q.market === token)).toHaveLength(2);
  });

  it('asks coarser when a resolved market answers nothing at a fine fidelity', async () => {
    const token = TOKEN(2);
    behaviour.set(token, 'coarse-only');
    await seenOnce(token, 'm2', 0.5);
    expect(requests.filter((q) => q.market === token).map((q) => q.fidelity)).toEqual(['60', '360', '1440', '5']);
    // Daily points: the 1d tier.
    expect((await candles(token, 86_400)).length).toBeGreaterThanOrEqual(35);
    expect(await candles(token, 3600)).toEqual([]);
  });

  it('retries a failed request later, and the feed was never waiting for it', async () => {
    const token = TOKEN(3);
    behaviour.set(token, 'fail-once');
    const r = recorder(new Map([[token, 'm3']]));
    r.offer(token, 0.4);
    await r.flush(); // returns while the backfill is still failing and retrying
    expect((await points(token)).map((p) => p.chance)).toEqual([0.4]);
    await r.backfillIdle();
    expect(r.stats().backfill.retries).toBe(1);
    expect((await candles(token, 3600)).length).toBeGreaterThan(800);
  });
});

describe('live points', () => {
  it('a point on every move, at most one per flush window, and once a minute when the chance holds', async () => {
    const token = TOKEN(10);
    behaviour.set(token, 'none');
    const r = recorder(new Map([[token, 'm10']]));
    now = (NOW_S + 10_000) * 1000;
    r.offer(token, 0.5);
    await r.flush();
    now += 1_000;
    r.offer(token, 0.52);
    r.offer(token, 0.53); // same window: the latest wins
    await r.flush();
    now += 30_000;
    await r.flush(); // no move, under a minute: nothing
    now += 30_000;
    await r.flush(); // a minute since the last point: the same chance again
    now += 5_000;
    r.offer(token, 0.53); // offered but not moved since the last point
    await r.flush();
    const stored = await points(token);
    expect(stored.map((p) => p.chance)).toEqual([0.5, 0.53, 0.53]);
    expect(stored.map((p) => p.t - (NOW_S + 10_000))).toEqual([0, 1, 61]);
  });

  it('records the book top with each point: a move of a side alone is a point, an empty side a null', async () => {
    const token = TOKEN(12);
    behaviour.set(token, 'none');
    const r = recorder(new Map([[token, 'm12']]));
    now = (NOW_S + 20_000) * 1000;
    r.offer(token, 0.5, { bid: 0.49, ask: 0.51 });
    await r.flush();
    now += 5_000;
    r.offer(token, 0.5, { bid: 0.48, ask: 0.51 }); // the chance held, the bid moved
    await r.flush();
    now += 5_000;
    r.offer(token, 0.5, { bid: null, ask: 0.51 }); // the bid side emptied
    await r.flush();
    now += 5_000;
    r.offer(token, 0.5, { bid: null, ask: 0.51 }); // nothing moved
    await r.flush();
    const rows: Array<{ t: number; chance: number; bid: number | null; ask: number | null }> = await database.db.query(
      sql`select r.t, r.chance::float8 as chance, r.bid, r.ask from raw_points r join series s on s.id = r.series where s.token_id = ${token} order by r.t`,
    );
    expect(rows.map((p) => [p.t - (NOW_S + 20_000), p.bid, p.ask])).toEqual([
      [0, 4_900, 5_100],
      [5, 4_800, 5_100],
      [10, null, 5_100],
    ]);
  });

  it('ignores tokens that are not an open market\'s first outcome', async () => {
    const r = recorder(new Map());
    r.offer(TOKEN(11), 0.5);
    await r.flush();
    expect(await points(TOKEN(11))).toEqual([]);
  });
});

describe('catalog game state', () => {
  it('creates a game at start and takes the catalog\'s final score when the final frame was missed', async () => {
    await database.db.query(sql`insert into events (id, slug, title, category, league, game_id) values ('ev-g', 'ev-g', 'A vs B', 'Football', 'epl', '777')`);
    const page = parseGammaEvents([
      {
        id: 'ev-g',
        slug: 'ev-g',
        title: 'A vs B',
        gameId: 777,
        teams: [
          { name: 'A', abbreviation: 'a', ordering: 'home' },
          { name: 'B', abbreviation: 'b', ordering: 'away' },
        ],
        score: '1-0',
        period: '1H',
        elapsed: '30',
        live: true,
        ended: false,
        markets: [],
      },
    ]);
    const rows = catalogGameRows(page.events, () => 'epl');
    expect(await writeCatalogGames(database.db, rows)).toEqual(['ev-g']);
    const game = () => tables.games(database.db).findOne({ game_id: '777' });
    expect(await game()).toMatchObject({ score: '1-0', period: '1H', clock: '30', live: true, ended: false, home_team: 'A', away_team: 'B' });

    // The sports channel moves on; a lagging catalog (still 1-0) does not take it back.
    await tables.games(database.db).update({ game_id: '777' }, { score: '2-0', clock: '70', period: '2H' });
    expect(await writeCatalogGames(database.db, rows)).toEqual([]);
    expect(await game()).toMatchObject({ score: '2-0', period: '2H' });

    // The final frame never came: the catalog's ended state and final score win.
    const final = catalogGameRows(
      parseGammaEvents([{ id: 'ev-g', slug: 'ev-g', title: 'A vs B', gameId: 777, markets: [], score: '2-1', period: 'FT', elapsed: '90', live: false, ended: true }]).events,
      () => 'epl',
    );
    expect(await writeCatalogGames(database.db, final)).toEqual(['ev-g']);
    expect(await game()).toMatchObject({ score: '2-1', period: 'FT', live: false, ended: true });
  });
});
