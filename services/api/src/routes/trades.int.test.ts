import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tradesResponseSchema } from '@pm/shared/api';
import { sql } from '@pm/shared/db';
import { seriesIds } from '@pm/shared/history';
import { createTestDatabase, createTestRedis } from '@pm/shared/testing';
import { recordTrades, storedTrade, type SeriesTrade } from '@pm/shared/trades';
import { apiRedis, event, startApp, writeFeed, writeSnapshot, type RunningApp } from '../testing/fixtures.js';
import { body, expectError } from '../testing/responses.js';

/**
 * GET /api/v1/markets/{eventSlug}/trades against a real Postgres holding a tape (written by the tape's
 * own writer) and a Redis holding the event's snapshot: newest first, filters, a cursor walk while
 * trades arrive, and 400s that name their rule. Every body is validated against the endpoint's schema.
 */

const NOW = Date.UTC(2027, 0, 10, 12);
const ev = event('tape-event', 'A tape', 'Crypto', ['Above 100k?', 'Above 110k?', 'Above 120k?']);
type EventMarket = (typeof ev.markets)[number];
const [m0, m1, m2] = ev.markets as [EventMarket, EventMarket, EventMarket];
const TOKENS: Record<string, string> = {};
for (const [i, m] of ev.markets.entries()) for (const o of [0, 1]) TOKENS[`${m.id}:${o}`] = `t-${i}${o}`;

let api: RunningApp;
let db: Awaited<ReturnType<typeof createTestDatabase>>['db'];
const series = new Map<string, number>();
let hashes = 0;

const teardown = new AsyncDisposableStack();
afterAll(() => teardown.disposeAsync());

/** `n` prints on a token, one every `gap` ms from `at` (a SELL every third), each its own hash. */
async function trade(token: string, at: number, n: number, gap = 1_000): Promise<void> {
  const rows: SeriesTrade[] = Array.from({ length: n }, (_, i) => ({
    ...storedTrade({ price: '0.25', size: String(2 + i), side: i % 3 === 0 ? 'SELL' : 'BUY', timestamp: at + i * gap, transactionHash: `0x${++hashes}`, feeRateBps: null }, 0),
    series: series.get(token) as number,
  }));
  await recordTrades(db, rows);
}

beforeAll(async () => {
  const redis = teardown.use(await createTestRedis('api_trades'));
  await writeSnapshot(redis.redis, redis.prefix, `event:${ev.slug}`, { event: ev }, '"ev-1"');
  await writeFeed(redis.redis, redis.prefix, true, NOW);
  const database = teardown.use(await createTestDatabase('api_trades'));
  db = database.db;
  await db.query(sql`insert into events (id, slug, title, category) values ('e1', ${ev.slug}, ${ev.title}, 'Crypto')`);
  for (const [i, m] of ev.markets.entries()) {
    await db.query(sql`insert into markets (id, event_id, condition_id, position, question) values (${m.id}, 'e1', ${`0x${i}`}, ${i}, ${m.question})`);
    for (const o of [0, 1]) await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values (${m.id}, ${o}, ${o === 0 ? 'Yes' : 'No'}, ${TOKENS[`${m.id}:${o}`]})`);
  }
  for (const [t, id] of await seriesIds(db, Object.values(TOKENS))) series.set(t, id);
  const connection = teardown.adopt(await apiRedis(redis.url), (r) => r.disconnect());
  api = teardown.adopt(
    await startApp({ redis: connection, env: { RATE_LIMIT_PER_MINUTE: '100000', DATABASE_URL: database.url, REDIS_PREFIX: redis.prefix }, clock: () => NOW }),
    (a) => a.close(),
  );
  await trade('t-00', NOW - 3_600_000, 30);
  await trade('t-01', NOW - 3_600_000, 30);
  await trade('t-10', NOW - 2 * 86_400_000, 10);
  // The walk's own market.
  await trade('t-20', NOW - 7_200_000, 40);
});

const get = (query = '') => fetch(`${api.base}/api/v1/markets/${ev.slug}/trades${query}`);

describe('GET /api/v1/markets/{eventSlug}/trades', () => {
  it('lists the event\'s trades newest first, each with its market, outcome and notional', async () => {
    const res = await get(`?market=${m0.id},${m1.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=15');
    const data = await body(res, tradesResponseSchema);
    expect(data.event).toBe(ev.slug);
    expect(data.trades).toHaveLength(70);
    expect(data.next_cursor).toBeNull();
    const times = data.trades.map((t) => Date.parse(t.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const newest = data.trades[0]!;
    expect(newest).toMatchObject({ outcome: expect.stringMatching(/^(Yes|No)$/), price: 0.25, size: 31, notional: 7.75, side: 'BUY', at: new Date(NOW - 3_600_000 + 29_000).toISOString() });
    expect(data.trades.filter((t) => t.market_id === m1.id)).toHaveLength(10);
    expect(data.trades.filter((t) => t.side === 'SELL').length).toBe(10 + 10 + 4);
    // Without `market`: every market of the event.
    const all = await body(await get('?limit=1000'), tradesResponseSchema);
    expect(new Set(all.trades.map((t) => t.market_id))).toEqual(new Set([m0.id, m1.id, m2.id]));
  });

  it('filters by market and outcome, and by a window of Unix seconds (start inclusive, end exclusive)', async () => {
    const one = await body(await get(`?market=${m0.id}&outcome=1`), tradesResponseSchema);
    expect(one.trades).toHaveLength(30);
    expect(new Set(one.trades.map((t) => `${t.market_id}/${t.outcome_index}/${t.outcome}`))).toEqual(new Set([`${m0.id}/1/No`]));
    const start = (NOW - 3_600_000) / 1000 + 10;
    const windowed = await body(await get(`?market=${m0.id}&outcome=0&start=${start}&end=${start + 5}`), tradesResponseSchema);
    expect(windowed.trades.map((t) => Date.parse(t.at) / 1000)).toEqual([start + 4, start + 3, start + 2, start + 1, start]);
  });

  it('walks with cursors while trades arrive, neither repeating nor skipping one', async () => {
    const walk = `?market=${m2.id}&limit=7`;
    const first = await body(await get(walk), tradesResponseSchema);
    const present = new Set((await body(await get(`?market=${m2.id}&limit=1000`), tradesResponseSchema)).trades.map((t) => t.id));
    const seen = first.trades.map((t) => t.id);
    let cursor = first.next_cursor;
    let arrivals = 0;
    while (cursor !== null) {
      // New trades arrive during the walk: newer ones, and one stamped inside the walked span.
      await trade('t-21', NOW - 60_000 + arrivals * 10, 2);
      await trade('t-20', NOW - 7_200_000 + 500 + arrivals, 1);
      arrivals++;
      const page = await body(await get(`${walk}&cursor=${encodeURIComponent(cursor)}`), tradesResponseSchema);
      seen.push(...page.trades.map((t) => t.id));
      cursor = page.next_cursor;
    }
    expect(arrivals).toBeGreaterThan(5);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => present.has(id)).length).toBe(present.size);
  });

  it('answers 400s that name the rule, and 404 for a market of another event', async () => {
    expect(await expectError(await get('?limit=0'), 400, 'bad_request')).toMatch(/limit must be an integer from 1 to 1000/);
    expect(await expectError(await get('?limit=1001'), 400, 'bad_request')).toMatch(/limit/);
    expect(await expectError(await get(`?market=${m0.id}&outcome=2`), 400, 'bad_request')).toMatch(/outcome must be an outcome index .* has 2 outcomes/);
    expect(await expectError(await get('?outcome=x'), 400, 'bad_request')).toMatch(/outcome must be an outcome index/);
    const tooOld = Math.floor((NOW - 31 * 86_400_000) / 1000);
    expect(await expectError(await get(`?start=${tooOld}`), 400, 'bad_request')).toMatch(/trades are kept for 30 days/);
    expect(await expectError(await get(`?start=${NOW / 1000}&end=${NOW / 1000}`), 400, 'bad_request')).toMatch(/start must be before end/);
    const many = Array.from({ length: 21 }, (_, i) => `x${i}`).join(',');
    expect(await expectError(await get(`?market=${many}`), 400, 'bad_request')).toMatch(/at most 20 market ids/);
    expect(await expectError(await get('?market=nope'), 404, 'not_found')).toMatch(/no market nope/);
    const page = await body(await get('?limit=5'), tradesResponseSchema);
    // A cursor of the same list with other parameters, or altered: refused.
    expect(await expectError(await get(`?limit=5&outcome=0&cursor=${encodeURIComponent(page.next_cursor!)}`), 400, 'bad_request')).toMatch(/another list/);
    expect(await expectError(await get(`?limit=5&cursor=${encodeURIComponent(`x${page.next_cursor!}`)}`), 400, 'bad_request')).toMatch(/cursor is not valid/);
  });
});
