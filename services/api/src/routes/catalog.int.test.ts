import { redisKeys } from '@pm/shared/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { TestRedis } from '@pm/shared/testing';
import { marketBookResponseSchema, marketEventResponseSchema, marketsByIdResponseSchema } from '@pm/shared/api';
import type { BookSnapshot } from '@pm/shared/snapshots';
import { event, listSnapshot, searchSnapshot, startSeededApps, writeFeed, writeSnapshot, type RunningApp } from '../testing/fixtures.js';
import { body, expectError } from '../testing/responses.js';

/**
 * The catalog endpoints over seeded snapshots in the worker's format (a real Redis): many markets by
 * id at once, and a market's order book. Every body is checked against the endpoint table's response schema.
 */

let testRedis: TestRedis;
let api: RunningApp;
const now = Date.now();

const arsenal = event('epl-ars-che', 'Arsenal vs Chelsea', 'Football', ['Will Arsenal win?', 'Will Chelsea win?', 'Draw?', 'Hat-trick?']);
const btc = event('btc-100k', 'Bitcoin above 100k?', 'Crypto', ['Bitcoin above 100k on Friday?']);
const events = [arsenal, btc];

const levels = (from: number, step: number, n: number) => Array.from({ length: n }, (_, i) => ({ price: Math.round((from + step * i) * 1000) / 1000, size: 100 + i }));
/** The ingestor's book of arsenal's first market: 30 levels a side, both outcomes. */
const book: BookSnapshot = {
  market_id: arsenal.markets[0]!.id,
  as_of: '2026-11-28T07:00:00.000Z',
  outcomes: [
    { index: 0, bids: levels(0.24, -0.001, 30), asks: levels(0.26, 0.001, 30) },
    { index: 1, bids: levels(0.74, -0.001, 30), asks: levels(0.76, 0.001, 30) },
  ],
};

const get = (path: string, init?: RequestInit) => fetch(`${api.base}${path}`, init);

const teardown = new AsyncDisposableStack();
afterAll(() => teardown.disposeAsync());

beforeAll(async () => {
  const seed = async (r: Redis, p: string) => {
    await writeSnapshot(r, p, 'markets:trending', listSnapshot(events), '"trending-1"');
    await writeSnapshot(r, p, 'markets:search', searchSnapshot(events.map((e) => ({ event: e, league: null }))), '"search-1"');
    for (const e of events) {
      await writeSnapshot(r, p, `event:${e.slug}`, { event: e }, `"ev-${e.slug}"`);
      for (const m of e.markets) await r.hset(redisKeys(p).marketEvents, m.id, e.slug);
    }
    await writeSnapshot(r, p, `book:${arsenal.markets[0]!.id}`, book, '"book-1"');
    await writeFeed(r, p, true, now);
  };
  ({ testRedis, api } = await startSeededApps(teardown, 'api_catalog', seed, { clock: () => now }));
});

describe('GET /api/v1/markets/by-id?ids=', () => {
  it('answers every market with its event slug, in the order asked, each as its event page shows it', async () => {
    const ids = [btc.markets[0]!.id, arsenal.markets[2]!.id, arsenal.markets[0]!.id];
    const res = await get(`/api/v1/markets/by-id?ids=${ids.join(',')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=15');
    const data = await body(res, marketsByIdResponseSchema);
    expect(data.count).toBe(3);
    expect(data.missing).toEqual([]);
    expect(data.markets.map((m) => [m.event, m.market.id])).toEqual([
      [btc.slug, ids[0]],
      [arsenal.slug, ids[1]],
      [arsenal.slug, ids[2]],
    ]);
    const page = await body(await get(`/api/v1/markets/${arsenal.slug}`), marketEventResponseSchema);
    expect(data.markets[1]!.market).toEqual(page.event.markets[2]);
  });

  it('lists unknown ids in missing instead of failing the batch, and keeps order around them', async () => {
    const data = await body(await get(`/api/v1/markets/by-id?ids=nope-1,${arsenal.markets[1]!.id},nope-2`), marketsByIdResponseSchema);
    expect(data.markets.map((m) => m.market.id)).toEqual([arsenal.markets[1]!.id]);
    expect(data.missing).toEqual(['nope-1', 'nope-2']);
  });

  it('answers 100 ids in one request, with one ETag that a repeat matches (304)', async () => {
    const known = events.flatMap((e) => e.markets.map((m) => m.id));
    const ids = Array.from({ length: 100 }, (_, i) => known[i % known.length]!);
    const first = await get(`/api/v1/markets/by-id?ids=${ids.join(',')}`);
    const data = await body(first, marketsByIdResponseSchema);
    expect(data.count).toBe(100);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"/);
    const again = await get(`/api/v1/markets/by-id?ids=${ids.join(',')}`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
  });

  it('does not keep answering "missing" once the market appears', async () => {
    const late = event('late-event', 'Late', 'Politics', ['Late?']);
    const id = late.markets[0]!.id;
    expect((await body(await get(`/api/v1/markets/by-id?ids=${id}`), marketsByIdResponseSchema)).missing).toEqual([id]);
    await writeSnapshot(testRedis.redis, testRedis.prefix, `event:${late.slug}`, { event: late }, '"ev-late"');
    await testRedis.redis.hset(redisKeys(testRedis.prefix).marketEvents, id, late.slug);
    await writeSnapshot(testRedis.redis, testRedis.prefix, 'markets:search', searchSnapshot([...events, late].map((e) => ({ event: e, league: null }))), '"search-2"');
    await api.api.snapshots.sync();
    const data = await body(await get(`/api/v1/markets/by-id?ids=${id}`), marketsByIdResponseSchema);
    expect(data.markets.map((m) => m.event)).toEqual([late.slug]);
  });

  it.each([
    ['', /^ids is required/],
    ['ids=', /^ids is required/],
    ['ids=a,,b', /^ids must be a comma-separated list of 1 to 100 market ids.*an empty item/],
    ['ids=a.b', /^ids must be .*"a\.b" is not a market id/],
    [`ids=${Array.from({ length: 101 }, (_, i) => `m${i}`).join(',')}`, /^ids must be .*101 were given/],
  ])('is a 400 naming the rule for %s', async (query, message) => {
    expect(await expectError(await get(`/api/v1/markets/by-id?${query}`), 400, 'bad_request')).toMatch(message);
  });
});

describe('GET /api/v1/markets/{eventSlug}/book', () => {
  it('answers each outcome\'s bids high to low and asks low to high, 10 levels by default', async () => {
    const res = await get(`/api/v1/markets/${arsenal.slug}/book?market=${arsenal.markets[0]!.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=15');
    const data = await body(res, marketBookResponseSchema);
    expect(data.market_id).toBe(arsenal.markets[0]!.id);
    expect(data.as_of).toBe(book.as_of);
    expect(data.outcomes.map((o) => o.name)).toEqual(['Yes', 'No']);
    expect(data.outcomes[0]!.bids).toEqual(book.outcomes[0]!.bids.slice(0, 10));
    expect(data.outcomes[0]!.asks[0]).toEqual({ price: 0.26, size: 100 });
    expect(data.outcomes[1]!.asks).toHaveLength(10);
  });

  it('cuts to depth, defaults to the first market, and says as_of null with empty sides where no book is held', async () => {
    const deep = await body(await get(`/api/v1/markets/${arsenal.slug}/book?depth=50`), marketBookResponseSchema);
    expect(deep.outcomes[0]!.bids).toHaveLength(30);
    const one = await body(await get(`/api/v1/markets/${arsenal.slug}/book?depth=1`), marketBookResponseSchema);
    expect(one.outcomes.map((o) => [o.bids.length, o.asks.length])).toEqual([
      [1, 1],
      [1, 1],
    ]);
    const none = await body(await get(`/api/v1/markets/${arsenal.slug}/book?market=${arsenal.markets[1]!.id}`), marketBookResponseSchema);
    expect(none.as_of).toBeNull();
    expect(none.outcomes).toEqual([
      { name: 'Yes', bids: [], asks: [] },
      { name: 'No', bids: [], asks: [] },
    ]);
  });

  it('is a 404 for an unknown event or a market of another event, a 400 for a bad depth', async () => {
    await expectError(await get('/api/v1/markets/no-such-event/book'), 404, 'not_found');
    expect(await expectError(await get(`/api/v1/markets/${arsenal.slug}/book?market=${btc.markets[0]!.id}`), 404, 'not_found')).toMatch(/^no market/);
    for (const depth of ['0', '51', 'ten', '1.5']) {
      expect(await expectError(await get(`/api/v1/markets/${arsenal.slug}/book?depth=${depth}`), 400, 'bad_request')).toBe('depth must be an integer from 1 to 50');
    }
  });

  it('is not taken for an event called by-id, and by-id is not taken for a slug', async () => {
    expect(await expectError(await get('/api/v1/markets/by-id'), 400, 'bad_request')).toMatch(/^ids is required/);
  });
});
