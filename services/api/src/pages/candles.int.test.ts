import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { candlesResponseSchema } from '@pm/shared/api';
import { sql } from '@pm/shared/db';
import { insertRawPoints, runRollup, seriesIds, storeBackfill, type RawPoint } from '@pm/shared/history';
import { PRICE_UNITS, recordTrades } from '@pm/shared/trades';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { apiRedis, event, startApp, writeSnapshot, type RunningApp } from '../testing/fixtures.js';
import { body, expectError } from '../testing/responses.js';

/**
 * GET /api/v1/markets/{eventSlug}/candles over HTTP against a real Postgres (the history tiers) and
 * Redis (the event snapshot): candles equal to the points, gaps carried forward, nothing before the
 * first point, the complement for outcome 1, a resolved market's end, the 400s, and an immutable
 * window's caching with its 304 and its being held in memory; and the volume from the tape and the
 * bid and ask from the recorded book tops, each equal to a plain recomputation, by `fields`.
 */

const DAY = 86_400;
// A Wednesday 00:00 UTC; the clock stands 10 days and 30 minutes later.
const T0 = 20_000 * DAY;
const NOW = T0 + 10 * DAY + 1_800;

let tdb: TestDatabase;
let tr: TestRedis;
let redis: Redis;
let api: RunningApp;
const ev = event('candle-event', 'Candles', 'Crypto', ['A?', 'B?', 'C?']);
const [m0, m1, m2] = ev.markets.map((m) => m.id) as [string, string, string];
const token = (i: number, o: number) => `${i}${o}`.padEnd(72, '3');
const series = new Map<string, number>();

beforeAll(async () => {
  [tdb, tr] = await Promise.all([createTestDatabase('api_candles'), createTestRedis('api_candles')]);
  redis = await apiRedis(tr.url);
  await tdb.db.query(sql`insert into events (id, slug, title, category) values ('e1', ${ev.slug}, 'Candles', 'Crypto')`);
  for (const [i, id] of [m0, m1, m2].entries()) {
    await tdb.db.query(sql`insert into markets (id, event_id, condition_id, position, question) values (${id}, 'e1', ${'c' + i}, ${i}, ${'Q' + i})`);
    await tdb.db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id, catalog_price) values (${id}, 0, 'Yes', ${token(i, 0)}, 0.5), (${id}, 1, 'No', ${token(i, 1)}, 0.5)`);
  }
  for (const [t, id] of await seriesIds(tdb.db, [token(0, 0), token(1, 0), token(2, 0)])) series.set(t, id);
  const s0 = series.get(token(0, 0)) as number;
  const s1 = series.get(token(1, 0)) as number;
  // m0: hourly backfill for 10 days (1h tier), then live points for the last 2 hours: 0.40 at
  // minute 0 of each, 0.60 at minute 10, 0.30 at minute 20, 0.50 at minute 30.
  await storeBackfill(tdb.db, s0, 3600, Array.from({ length: 10 * 24 - 2 }, (_, i) => ({ t: T0 + i * 3600, chance: 0.45 })));
  const live: Array<{ series: number; t: number; chance: number }> = [];
  for (let h = NOW - 1_800 - 2 * 3600; h < NOW - 1_800; h += 3600) {
    for (const [m, c] of [[0, 0.4], [10, 0.6], [20, 0.3], [30, 0.5]] as const) if (h + m * 60 < NOW) live.push({ series: s0, t: h + m * 60, chance: c });
  }
  // m1: one point, 5 days ago, then silence: candles from there on, carried forward.
  live.push({ series: s1, t: T0 + 5 * DAY + 7, chance: 0.2 });
  await insertRawPoints(tdb.db, live);
  await seedVolumeEvent();
  await runRollup(tdb.db, { now: NOW - 3600 });
  // m2 has no point at all.
  await writeSnapshot(tr.redis, tr.prefix, `event:${ev.slug}`, { event: ev }, '"e1"');
  await writeSnapshot(tr.redis, tr.prefix, `event:${traded.slug}`, { event: traded }, '"e2"');
  api = await startApp({ redis, env: { REDIS_PREFIX: tr.prefix, DATABASE_URL: tdb.url, RATE_LIMIT_PER_MINUTE: '100000' }, clock: () => NOW * 1000 });
});

// A second event, traded: market m3's Yes token records its chance and book top every 30 s over the
// two hours before this one (the first rolled up, the second still raw), both tokens print trades
// from minute 10 of the first hour on, and the bid side is empty from minute 20 to 25 of each hour.
const traded = event('traded-event', 'Traded', 'Crypto', ['D?']);
const m3 = traded.markets[0]!.id;
const tok = (o: number) => `9${o}`.padEnd(72, '7');
const H = NOW - 1_800 - 3600;
const tops: RawPoint[] = [];
const prints: Array<{ outcome: number; atMs: number; price: number; size: number }> = [];

async function seedVolumeEvent(): Promise<void> {
  await tdb.db.query(sql`insert into events (id, slug, title, category) values ('e2', ${traded.slug}, 'Traded', 'Crypto')`);
  await tdb.db.query(sql`insert into markets (id, event_id, condition_id, position, question) values (${m3}, 'e2', 'c3', 0, 'D?')`);
  await tdb.db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id, catalog_price) values (${m3}, 0, 'Yes', ${tok(0)}, 0.5), (${m3}, 1, 'No', ${tok(1)}, 0.5)`);
  const ids = await seriesIds(tdb.db, [tok(0), tok(1)]);
  for (let t = H - 3600; t < H + 3600; t += 30) {
    const chance = 0.3 + ((t / 30) % 40) / 100;
    const minute = Math.floor((t % 3600) / 60);
    tops.push({ series: ids.get(tok(0))!, t, chance, bid: minute >= 20 && minute < 25 ? null : chance - 0.01, ask: (t / 30) % 13 === 0 ? null : chance + 0.02 });
  }
  await insertRawPoints(tdb.db, tops);
  let i = 0;
  for (let ms = (H - 3600 + 600) * 1000; ms < (H + 3600) * 1000; ms += 47_000, i++) prints.push({ outcome: 0, atMs: ms, price: 0.3 + (i % 50) / 1000, size: 1 + (i % 9) * 0.125 });
  for (let ms = (H - 3600 + 900) * 1000; ms < (H + 3600) * 1000; ms += 61_000, i++) prints.push({ outcome: 1, atMs: ms, price: 0.6 + (i % 30) / 1000, size: 2.5 });
  await recordTrades(
    tdb.db,
    prints.map((p, k) => ({ series: ids.get(tok(p.outcome))!, atMs: p.atMs, px: Math.round(p.price * PRICE_UNITS), sz: k % 2 === 0 ? p.size : -p.size, key: String(k + 1) })),
  );
}

type Side = { open: number; high: number; low: number; close: number } | null;

/** The plain recomputation of one outcome's 5m candles of m3 over [from, to) from the points and prints seeded. */
function recomputeTraded(outcome: number, from: number, to: number) {
  const u = (x: number) => Math.round(x * 10_000);
  const side = (prices: Array<number | null | undefined>): Side => {
    const q = prices.filter((p): p is number => typeof p === 'number').map(u);
    return q.length === 0 ? null : { open: q[0]! / 10_000, high: Math.max(...q) / 10_000, low: Math.min(...q) / 10_000, close: q.at(-1)! / 10_000 };
  };
  const flip = (s: Side): Side => (s === null ? null : { open: (10_000 - u(s.open)) / 10_000, high: (10_000 - u(s.low)) / 10_000, low: (10_000 - u(s.high)) / 10_000, close: (10_000 - u(s.close)) / 10_000 });
  const mine = prints.filter((p) => p.outcome === outcome);
  const begins = Math.min(...mine.map((p) => p.atMs)) / 1000;
  const out = [];
  for (let b = from; b < to; b += 300) {
    const here = tops.filter((p) => p.t >= b && p.t < b + 300);
    const chances = here.map((p) => u(p.chance));
    const ohlc = { open: chances[0]!, high: Math.max(...chances), low: Math.min(...chances), close: chances.at(-1)! };
    const bid = side(here.map((p) => p.bid));
    const ask = side(here.map((p) => p.ask));
    const trades = mine.filter((p) => p.atMs >= b * 1000 && p.atMs < (b + 300) * 1000);
    const volume = trades.reduce((n, p) => n + p.size, 0);
    const notional = trades.reduce((n, p) => n + p.price * p.size, 0);
    out.push({
      t: b,
      ...(outcome === 0
        ? { open: ohlc.open / 10_000, high: ohlc.high / 10_000, low: ohlc.low / 10_000, close: ohlc.close / 10_000 }
        : { open: (10_000 - ohlc.open) / 10_000, high: (10_000 - ohlc.low) / 10_000, low: (10_000 - ohlc.high) / 10_000, close: (10_000 - ohlc.close) / 10_000 }),
      ...(b + 300 <= begins
        ? { volume: null, notional: null, trades: null, vwap: null }
        : { volume, notional, trades: trades.length, vwap: trades.length === 0 ? null : notional / volume }),
      bid: outcome === 0 ? bid : flip(ask),
      ask: outcome === 0 ? ask : flip(bid),
    });
  }
  return out;
}

afterAll(async () => {
  await api?.close();
  redis?.disconnect();
  await tr?.cleanup();
  await tdb?.drop();
});

const getTraded = (query: string) => fetch(`${api.base}/api/v1/markets/${traded.slug}/candles${query}`);

const NO_TRADE_DATA = { volume: null, notional: null, trades: null, vwap: null };

const get = (query: string, headers: Record<string, string> = {}) => fetch(`${api.base}/api/v1/markets/${ev.slug}/candles${query}`, { headers });

describe('candles', () => {
  it('by default: every market of the event, 1h, the last 500 hours; the rolled-up hours and the raw ones beyond the mark alike', async () => {
    const res = await get('');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=15');
    const b = await body(res, candlesResponseSchema);
    expect(b.interval).toBe('1h');
    expect(b.end).toBe(NOW - 1_800 + 3600);
    expect(b.start).toBe(b.end - 501 * 3600);
    expect(b.markets.map((m) => m.market_id)).toEqual([m0, m1, m2]);
    const [a, one, none] = b.markets;
    // m0: none before its first point (the backfill's first hour), then one candle an hour up to now.
    expect(a!.candles[0]!.t).toBe(T0);
    expect(a!.candles.length).toBe(10 * 24 + 1);
    // The default fields are ohlc and volume: these tokens have no trade data, so volume is null, not 0.
    expect(a!.candles.at(-4)).toEqual({ t: NOW - 1_800 - 3 * 3600, open: 0.45, high: 0.45, low: 0.45, close: 0.45, ...NO_TRADE_DATA });
    // The two hours before this one: live points, the first rolled up, the second still raw; this
    // hour has none yet: the last close carried forward.
    for (const c of a!.candles.slice(-3, -1)) expect(c).toEqual({ t: c.t, open: 0.4, high: 0.6, low: 0.3, close: 0.5, ...NO_TRADE_DATA });
    expect(a!.candles.at(-1)).toEqual({ t: NOW - 1_800, open: 0.5, high: 0.5, low: 0.5, close: 0.5, ...NO_TRADE_DATA });
    // m1: from its one point on, flat.
    expect(one!.candles[0]).toEqual({ t: T0 + 5 * DAY, open: 0.2, high: 0.2, low: 0.2, close: 0.2, ...NO_TRADE_DATA });
    expect(one!.candles.every((c) => c.close === 0.2)).toBe(true);
    expect(one!.candles.length).toBe(5 * 24 + 1);
    expect(none!.candles).toEqual([]);
  });

  it('1m and 5m: each bucket its first, highest, lowest and last point; gaps carried forward', async () => {
    const hour = NOW - 1_800 - 3600;
    const b = await body(await get(`?market=${m0}&interval=1m&start=${hour}&end=${hour + 3600}&fields=ohlc`), candlesResponseSchema);
    const c = b.markets[0]!.candles;
    expect(c).toHaveLength(60);
    expect(c[0]).toEqual({ t: hour, open: 0.4, high: 0.4, low: 0.4, close: 0.4 });
    expect(c[5]).toEqual({ t: hour + 300, open: 0.4, high: 0.4, low: 0.4, close: 0.4 });
    expect(c[10]).toEqual({ t: hour + 600, open: 0.6, high: 0.6, low: 0.6, close: 0.6 });
    const five = await body(await get(`?market=${m0}&interval=5m&start=${hour}&end=${hour + 3600}`), candlesResponseSchema);
    expect(five.markets[0]!.candles.map((k) => k.close)).toEqual([0.4, 0.4, 0.6, 0.6, 0.3, 0.3, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
  });

  it('outcome 1 of a binary market is the complement of outcome 0', async () => {
    const hour = NOW - 1_800 - 3600;
    const b = await body(await get(`?market=${m0}&outcome=1&start=${hour}&end=${hour + 3600}&fields=ohlc`), candlesResponseSchema);
    expect(b.markets[0]).toMatchObject({ outcome: 'No', candles: [{ t: hour, open: 0.6, high: 0.7, low: 0.4, close: 0.5 }] });
  });

  it('a closed window is immutable: a day of max-age, a strong ETag, 304 on If-None-Match', async () => {
    const query = `?market=${m0},${m1}&interval=1d&start=${T0}&end=${T0 + 5 * DAY}`;
    const res = await get(query);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400, immutable');
    const etag = res.headers.get('etag') as string;
    expect(etag).toMatch(/^"/);
    const b = await body(res, candlesResponseSchema);
    expect(b.markets[0]!.candles).toHaveLength(5);
    expect(b.markets[1]!.candles).toEqual([]);
    const again = await get(query, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
  });

  it('a closed window is held in memory: asked again it is the same body, even after Postgres and its event changed under it; a live window is read again', async () => {
    const s2 = series.get(token(2, 0)) as number;
    const closed = `?market=${m2}&interval=1h&start=${T0 + DAY}&end=${T0 + 2 * DAY}`;
    const live = `?market=${m2}&interval=1h&start=${NOW - DAY}`;
    const candlesOf = async (query: string) => (await body(await get(query), candlesResponseSchema)).markets[0]!.candles;
    expect(await candlesOf(closed)).toEqual([]);
    expect(await candlesOf(live)).toEqual([]);
    // Points appear where none were (a backfill of history that never changes, in real life).
    await storeBackfill(tdb.db, s2, 3600, [{ t: T0 + DAY + 3600, chance: 0.7 }, { t: NOW - 1_800 - 3 * 3600, chance: 0.7 }]);
    try {
      expect(await candlesOf(closed)).toEqual([]);
      // A new version of the event (a price move renews it many times a minute) leaves it held too.
      await writeSnapshot(tr.redis, tr.prefix, `event:${ev.slug}`, { event: ev }, '"e1-moved"');
      expect(await candlesOf(closed)).toEqual([]);
      // The same window spelled otherwise is another target: read from Postgres.
      expect(await candlesOf(`?interval=1h&market=${m2}&start=${T0 + DAY}&end=${T0 + 2 * DAY}`)).toHaveLength(23);
      expect((await candlesOf(live)).at(-1)?.close).toBe(0.7);
    } finally {
      await tdb.db.query(sql`delete from candles where series = ${s2}`);
    }
  });

  it('a resolved market\'s last candle closes at its final price at resolved_at', async () => {
    const resolvedAt = NOW - 1_800 - 3600 + 25 * 60;
    await tdb.db.query(sql`update markets set closed = true, resolved_outcome_index = 1, resolved_at = to_timestamp(${resolvedAt}) where id = ${m0}`);
    try {
      const b = await body(await get(`?market=${m0}&interval=5m&start=${NOW - 1_800 - 3600}&end=${NOW}&fields=ohlc`), candlesResponseSchema);
      const c = b.markets[0]!.candles;
      expect(c.at(-1)).toEqual({ t: resolvedAt, open: 0.3, high: 0.3, low: 0, close: 0 });
      expect(c).toHaveLength(6);
    } finally {
      await tdb.db.query(sql`update markets set closed = false, resolved_outcome_index = null, resolved_at = null where id = ${m0}`);
    }
  });

  it('volume from the tape and bid/ask from the book tops: both outcomes, across the rollup mark, equal to a plain recomputation', async () => {
    for (const outcome of [0, 1]) {
      const b = await body(await getTraded(`?market=${m3}&outcome=${outcome}&interval=5m&start=${H - 3600}&end=${H + 3600}&fields=ohlc,volume,quotes`), candlesResponseSchema);
      const got = b.markets[0]!.candles;
      const want = recomputeTraded(outcome, H - 3600, H + 3600);
      expect(got.map((c) => c.t)).toEqual(want.map((c) => c.t));
      // The first two buckets are before the token's first trade: no figure, not 0.
      expect(got[0]!.volume).toBeNull();
      expect(got.filter((c) => c.trades === 0).length + got.filter((c) => (c.trades ?? 0) > 0).length).toBe(got.length - (outcome === 0 ? 2 : 3));
      got.forEach((c, i) => {
        const { notional, vwap, ...exact } = want[i]!;
        expect({ ...c, notional: undefined, vwap: undefined }, `outcome ${outcome} at ${c.t}`).toEqual({ ...exact, notional: undefined, vwap: undefined });
        for (const [g, w] of [[c.notional, notional], [c.vwap, vwap]] as const) {
          if (w === null) expect(g).toBeNull();
          else expect(g).toBeCloseTo(w, 5);
        }
      });
      // The bid side is empty from minute 20 to 25 of each hour: null for outcome 0's bid, outcome 1's ask.
      const empty = got.find((c) => c.t === H + 20 * 60)!;
      expect(outcome === 0 ? empty.bid : empty.ask).toBeNull();
    }
  });

  it('fields: each candle carries what was asked and nothing else; the default is ohlc and volume', async () => {
    const window = `?market=${m3}&interval=1h&start=${H}&end=${H + 3600}`;
    const keys = async (fields: string) => Object.keys((await body(await getTraded(`${window}${fields}`), candlesResponseSchema)).markets[0]!.candles[0]!);
    expect(await keys('')).toEqual(['t', 'open', 'high', 'low', 'close', 'volume', 'notional', 'trades', 'vwap']);
    expect(await keys('&fields=quotes')).toEqual(['t', 'bid', 'ask']);
    expect(await keys('&fields=VOLUME,ohlc')).toEqual(['t', 'open', 'high', 'low', 'close', 'volume', 'notional', 'trades', 'vwap']);
    expect(await keys('&fields=quotes,volume,ohlc')).toEqual(['t', 'open', 'high', 'low', 'close', 'volume', 'notional', 'trades', 'vwap', 'bid', 'ask']);
  });

  it('400s name the rule: window order, 2,000 candles, retention (and the interval that covers it), 20 markets, outcome, values', async () => {
    expect(await expectError(await get(`?start=${NOW}&end=${NOW - 60}`), 400, 'bad_request')).toBe('start must be before end');
    expect(await expectError(await get(`?interval=1m&start=${NOW - 2 * DAY}&end=${NOW}`), 400, 'bad_request')).toMatch(/at most 2000 candles per market/);
    expect(await expectError(await get(`?interval=1m&start=${NOW - 8 * DAY}&end=${NOW - 8 * DAY + 3600}`), 400, 'bad_request')).toMatch(/interval 1m keeps 7 days.*use interval 5m/);
    expect(await expectError(await get(`?interval=5m&start=${NOW - 61 * DAY}&end=${NOW - 61 * DAY + 3600}`), 400, 'bad_request')).toMatch(/interval 5m keeps 60 days.*use interval 1h, which is kept for good/);
    const many = Array.from({ length: 21 }, (_, i) => `x${i}`).join(',');
    expect(await expectError(await get(`?market=${many}`), 400, 'bad_request')).toMatch(/at most 20 market ids/);
    expect(await expectError(await get(`?outcome=2`), 400, 'bad_request')).toMatch(/^outcome must be an outcome index/);
    expect(await expectError(await get(`?interval=2h`), 400, 'bad_request')).toBe('interval must be one of 1m, 5m, 1h, 1d');
    expect(await expectError(await get(`?start=yesterday`), 400, 'bad_request')).toMatch(/^start must be a Unix time/);
    for (const fields of ['ohlc,depth', 'volumes', ',,x']) {
      expect(await expectError(await get(`?fields=${fields}`), 400, 'bad_request')).toBe('fields must be a comma-separated list of ohlc, volume, quotes');
    }
    await expectError(await get(`?market=nope`), 404, 'not_found');
    await expectError(await fetch(`${api.base}/api/v1/markets/no-such-event/candles`), 404, 'not_found');
  });
});
