import http from 'node:http';
import zlib from 'node:zlib';
import { redisKeys } from '@pm/shared/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import {
  errorBodySchema,
  marketEventResponseSchema,
  marketListResponseSchema,
  oddsResponseSchema,
} from '@pm/shared/api';
import {
  event,
  listSnapshot,
  memoryLogger,
  searchSnapshot,
  startSeededApps,
  writeFeed,
  writeSnapshot,
  type RunningApp,
} from '../testing/fixtures.js';
import { body, expectError, rawExchange } from '../testing/responses.js';

/**
 * The read API against a real Redis: snapshots are seeded in the worker's documented format and every
 * body is checked against the endpoint table's response schema (or the Error schema).
 */

let testRedis: TestRedis;
let api: RunningApp;
/** Over a prefix the worker has never written to. */
let emptyApi: RunningApp;
const now = Date.now();
const logs = memoryLogger();

const arsenal = event('epl-ars-che', 'Arsenal vs Chelsea', 'Football', [
  'Will Arsenal win?',
  'Will Chelsea win?',
  'Will it be a draw?',
  'Will Haaland score a hat-trick?',
]);
const events = [
  arsenal,
  event('btc-100k', 'Bitcoin above 100k?', 'Crypto', ['Bitcoin above 100k on Friday?']),
  event('us-election', 'US election', 'Politics', ['Will the incumbent win?']),
  event('fed-cut', 'Fed rate cut', 'Economy', ['Will the Fed cut in March?']),
  event('ai-model', 'New AI model', 'Tech', ['Release before June?']),
];

async function get(path: string, init?: RequestInit): Promise<Response> {
  return fetch(`${api.base}${path}`, init);
}

/** Everything this file starts, stopped newest first after it. */
const teardown = new AsyncDisposableStack();
afterAll(() => teardown.disposeAsync());

beforeAll(async () => {
  const seed = async (r: Redis, p: string) => {
    await writeSnapshot(r, p, 'markets:trending', listSnapshot(events), '"trending-1"');
    await writeSnapshot(r, p, 'markets:category:Crypto', listSnapshot([events[1]!]), '"crypto-1"');
    await writeSnapshot(r, p, 'markets:league:epl', listSnapshot([arsenal]), '"epl-1"');
    const leagueOf = (e: (typeof events)[number]) => (e === arsenal ? 'epl' : e.category === 'Crypto' ? 'btc' : null);
    await writeSnapshot(r, p, 'markets:search', searchSnapshot(events.map((e) => ({ event: e, league: leagueOf(e) }))), '"search-1"');
    await writeSnapshot(r, p, `event:${arsenal.slug}`, { event: arsenal }, '"ev-1"');
    await writeSnapshot(r, p, 'event:broken', { event: { slug: 1 } }, '"broken-1"');
    await writeFeed(r, p, true, now);
  };
  ({ testRedis, api, emptyApi } = await startSeededApps(teardown, 'api', seed, { logger: logs.logger, clock: () => now }));
});


describe('GET /api/v1/markets', () => {
  it('lists trending events with the default limit, categories and leagues', async () => {
    const res = await get('/api/v1/markets');
    expect(res.status).toBe(200);
    const data = await body(res, marketListResponseSchema);
    expect(data.ok).toBe(true);
    expect(data.count).toBe(5);
    expect(data.events.map((e) => e.slug)).toEqual(events.map((e) => e.slug));
    expect(data.categories).toEqual(['Sport', 'Football', 'Crypto', 'Politics', 'Economy', 'Tech', 'Culture']);
    expect(data.leagues.map((l) => l.league)).toEqual(['epl', 'btc']);
    expect(data.events[0]!.markets).toHaveLength(3);
  });

  it('slices to limit, keeping the order', async () => {
    const data = await body(await get('/api/v1/markets?limit=2'), marketListResponseSchema);
    expect(data.count).toBe(2);
    expect(data.events.map((e) => e.slug)).toEqual(['epl-ars-che', 'btc-100k']);
  });

  it('reads the category list, matching the category case-insensitively', async () => {
    const data = await body(await get('/api/v1/markets?category=crypto'), marketListResponseSchema);
    expect(data.events.map((e) => e.slug)).toEqual(['btc-100k']);
  });

  it('lets league override category', async () => {
    const data = await body(await get('/api/v1/markets?league=EPL&category=Crypto'), marketListResponseSchema);
    expect(data.events.map((e) => e.slug)).toEqual(['epl-ars-che']);
  });

  it('answers an unknown league with an empty list, not an error', async () => {
    const res = await get('/api/v1/markets?league=no-such-league');
    expect(res.status).toBe(200);
    const data = await body(res, marketListResponseSchema);
    expect(data.count).toBe(0);
    expect(data.events).toEqual([]);
    expect(data.leagues).toHaveLength(2);
  });

  it('finds an event by a market question that is not among the three shown', async () => {
    const data = await body(await get('/api/v1/markets?q=HAT-TRICK'), marketListResponseSchema);
    expect(data.count).toBe(1);
    expect(data.events[0]!.slug).toBe('epl-ars-che');
    expect(data.events[0]!.markets.map((m) => m.question)).not.toContain('Will Haaland score a hat-trick?');
  });

  it('combines q with category and with limit', async () => {
    const all = await body(await get('/api/v1/markets?q=will'), marketListResponseSchema);
    expect(all.events.map((e) => e.slug)).toEqual(['epl-ars-che', 'us-election', 'fed-cut']);
    const politics = await body(await get('/api/v1/markets?q=will&category=Politics'), marketListResponseSchema);
    expect(politics.events.map((e) => e.slug)).toEqual(['us-election']);
    const limited = await body(await get('/api/v1/markets?q=will&limit=1'), marketListResponseSchema);
    expect(limited.events.map((e) => e.slug)).toEqual(['epl-ars-che']);
    const none = await body(await get('/api/v1/markets?q=zzzz'), marketListResponseSchema);
    expect(none.count).toBe(0);
  });

  it('treats an empty q as no search and ignores unknown parameters', async () => {
    const data = await body(await get('/api/v1/markets?q=&foo=bar&foo=baz'), marketListResponseSchema);
    expect(data.count).toBe(5);
  });

  it.each([
    ['limit=0', 'limit must be an integer from 1 to 60'],
    ['limit=61', 'limit must be an integer from 1 to 60'],
    ['limit=1.5', 'limit must be an integer from 1 to 60'],
    ['limit=abc', 'limit must be an integer from 1 to 60'],
    ['limit=1&limit=2', 'limit must be given at most once'],
    ['category=Foo', 'category must be one of Football, Sport, Crypto, Politics, Economy, Tech, Culture'],
    [`q=${'x'.repeat(81)}`, 'q must be a string of at most 80 characters'],
  ])('answers %s with 400 bad_request naming the parameter', async (query, message) => {
    expect(await expectError(await get(`/api/v1/markets?${query}`), 400, 'bad_request')).toBe(message);
  });

  it('accepts a q of exactly 80 characters', async () => {
    expect((await get(`/api/v1/markets?q=${'x'.repeat(80)}`)).status).toBe(200);
  });

  it('sets live from the feed hash', async () => {
    const p = testRedis.prefix;
    expect((await body(await get('/api/v1/markets'), marketListResponseSchema)).live).toBe(true);
    await writeFeed(testRedis.redis, p, true, now - 31_000);
    expect((await body(await get('/api/v1/markets'), marketListResponseSchema)).live).toBe(false);
    await writeFeed(testRedis.redis, p, false, now);
    expect((await body(await get('/api/v1/markets'), marketListResponseSchema)).live).toBe(false);
    await writeFeed(testRedis.redis, p, true, now - 29_000);
    expect((await body(await get('/api/v1/markets'), marketListResponseSchema)).live).toBe(true);
    await writeFeed(testRedis.redis, p, true, now);
  });

  it('answers 503 unavailable while the worker has not built the lists', async () => {
    const res = await fetch(`${emptyApi.base}/api/v1/markets`);
    expect(await expectError(res, 503, 'unavailable')).toMatch(/not ready/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    await expectError(await fetch(`${emptyApi.base}/api/v1/markets?q=x`), 503, 'unavailable');
  });
});

describe('GET /api/v1/markets/{eventSlug}', () => {
  it('returns the event with all its markets', async () => {
    const res = await get(`/api/v1/markets/${arsenal.slug}`);
    expect(res.status).toBe(200);
    const data = await body(res, marketEventResponseSchema);
    expect(data.live).toBe(true);
    expect(data.event.slug).toBe(arsenal.slug);
    expect(data.event.markets).toHaveLength(4);
  });

  it('answers an unknown slug with 404 not_found', async () => {
    expect(await expectError(await get('/api/v1/markets/no-such-event'), 404, 'not_found')).toMatch(/no-such-event/);
  });

  it('answers a malformed path with 400, not 500', async () => {
    await expectError(await get('/api/v1/markets/%E0%A4%A'), 400, 'bad_request');
  });

  it('answers a snapshot that breaks its schema with a generic 500 and logs it with the request id', async () => {
    const res = await get('/api/v1/markets/broken', { headers: { 'x-request-id': 'req-broken-1' } });
    const message = await expectError(res, 500, 'internal');
    expect(message).not.toMatch(/snapshot|schema|at /);
    const line = logs.lines.find((l) => l['req_id'] === 'req-broken-1' && l['msg'] === 'request failed');
    expect(line).toBeDefined();
  });
});

describe('GET /api/v1/markets/by-id/{marketId}', () => {
  it('answers the event holding the market, the same body as its slug gives', async () => {
    const marketId = arsenal.markets[3]!.id;
    await testRedis.redis.hset(redisKeys(testRedis.prefix).marketEvents, marketId, arsenal.slug, 'gone-market', arsenal.slug);
    const res = await get(`/api/v1/markets/by-id/${marketId}`);
    expect(res.status).toBe(200);
    const data = await body(res, marketEventResponseSchema);
    expect(data.event.markets.map((m) => m.id)).toContain(marketId);
    expect(data).toEqual(await body(await get(`/api/v1/markets/${arsenal.slug}`), marketEventResponseSchema));
  });

  it('is a 404 for a market nobody knows, or one its event no longer lists', async () => {
    expect(await expectError(await get('/api/v1/markets/by-id/999999'), 404, 'not_found')).toBe('no market with id 999999');
    await expectError(await get('/api/v1/markets/by-id/gone-market'), 404, 'not_found');
  });

  it.each(['a.b', 'with%20space', 'x'.repeat(101), '%F0%9F%98%80'])('is a 400 for the malformed id %s', async (id) => {
    expect(await expectError(await get(`/api/v1/markets/by-id/${id}`), 400, 'bad_request')).toMatch(/^marketId must be a market id/);
  });
});

describe('GET /api/v1/odds', () => {
  it('converts 0.25', async () => {
    const res = await get('/api/v1/odds?chance=0.25');
    expect(res.status).toBe(200);
    const data = await body(res, oddsResponseSchema);
    expect(data).toEqual({
      ok: true,
      chance: 0.25,
      wins_on_10: 40,
      profit_on_10: 30,
      xp_if_right: 78,
      odds: { percent: '25%', decimal: '4.00', fractional: '3/1', american: '+300', price: '25¢' },
    });
  });

  // docs/design.md "Odds at the extremes": finite and honest at the exchange's extreme ticks.
  it.each([
    ['0.001', { wins_on_10: 10000, profit_on_10: 9990, odds: { percent: '0.1%', decimal: '1000.00', fractional: '999/1', american: '+99900', price: '0¢' } }],
    ['0.005', { wins_on_10: 2000, profit_on_10: 1990, odds: { percent: '1%', decimal: '200.00', fractional: '199/1', american: '+19900', price: '1¢' } }],
    ['0.995', { wins_on_10: 10.05, profit_on_10: 0.05, odds: { percent: '99.5%', decimal: '1.01', fractional: '1/199', american: '-19900', price: '100¢' } }],
    ['0.999', { wins_on_10: 10.01, profit_on_10: 0.01, odds: { percent: '99.9%', decimal: '1.00', fractional: '1/999', american: '-99900', price: '100¢' } }],
  ])('converts the extreme %s', async (chance, expected) => {
    const data = await body(await get(`/api/v1/odds?chance=${chance}`), oddsResponseSchema);
    expect(data).toMatchObject({ chance: Number(chance), ...expected });
  });

  // A certainty keeps the formats that have a value, and invents none (the odds a resolved outcome shows).
  it.each([
    ['1', { wins_on_10: 10, profit_on_10: 0, xp_if_right: 10, odds: { percent: '100%', decimal: '1.00', fractional: null, american: null, price: '100¢' } }],
    ['1.0', { wins_on_10: 10, profit_on_10: 0, xp_if_right: 10, odds: { percent: '100%', decimal: '1.00', fractional: null, american: null, price: '100¢' } }],
    ['0', { wins_on_10: null, profit_on_10: null, xp_if_right: 100, odds: { percent: '0%', decimal: null, fractional: null, american: null, price: '0¢' } }],
  ])('converts the certainty %s', async (chance, expected) => {
    const data = await body(await get(`/api/v1/odds?chance=${chance}`), oddsResponseSchema);
    expect(data).toEqual({ ok: true, chance: Number(chance), ...expected });
  });

  // Past the exchange's extreme ticks no format is faithful (0.9999: fractional 0/1, a win paying 0.00): refused.
  it.each(['chance=0.0005', 'chance=0.9995', 'chance=0.9999', 'chance=0.000000000000000001', 'chance=0.9999999999999999999', 'chance=1.5', 'chance=abc', 'chance=', '', 'chance=NaN', 'chance=Infinity', 'chance=0x1', 'chance=1e-400', 'chance=-0.5'])(
    'answers %s with 400 naming chance',
    async (query) => {
      expect(await expectError(await get(`/api/v1/odds?${query}`), 400, 'bad_request')).toMatch(/^chance (must be|is required)/);
    },
  );

  it('is cached for an hour', async () => {
    expect((await get('/api/v1/odds?chance=0.5')).headers.get('cache-control')).toBe('public, max-age=3600');
  });
});

describe('caching', () => {
  it('sets Cache-Control per route', async () => {
    expect((await get('/api/v1/markets')).headers.get('cache-control')).toBe('public, max-age=15');
    expect((await get(`/api/v1/markets/${arsenal.slug}`)).headers.get('cache-control')).toBe('public, max-age=15');
    expect((await get('/api/v1/odds?chance=0.3')).headers.get('cache-control')).toBe('public, max-age=3600');
    expect((await get('/api/v1/markets?limit=0')).headers.get('cache-control')).toBe('no-store');
  });

  it('answers a matching If-None-Match with 304 and no body', async () => {
    for (const path of ['/api/v1/markets?limit=3', `/api/v1/markets/${arsenal.slug}`, '/api/v1/odds?chance=0.25', '/api/v1/openapi.json']) {
      const first = await get(path);
      const etag = first.headers.get('etag');
      expect(etag, path).toMatch(/^"[^"]+"$/);
      const again = await get(path, { headers: { 'if-none-match': etag! } });
      expect(again.status, path).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      const other = await get(path, { headers: { 'if-none-match': '"something-else"' } });
      expect(other.status, path).toBe(200);
    }
  });

  it('changes the ETag with the snapshot and with request-time parts', async () => {
    const etagOf = async (path: string) => (await get(path)).headers.get('etag');
    const base = await etagOf('/api/v1/markets');
    expect(await etagOf('/api/v1/markets')).toBe(base);
    expect(await etagOf('/api/v1/markets?limit=3')).not.toBe(base);
    expect(await etagOf('/api/v1/markets?q=will')).not.toBe(await etagOf('/api/v1/markets?q=bitcoin'));

    await writeFeed(testRedis.redis, testRedis.prefix, false, now);
    const offline = await etagOf('/api/v1/markets');
    await writeFeed(testRedis.redis, testRedis.prefix, true, now);
    expect(offline).not.toBe(base);

    const rebuilt = [...events].reverse();
    await writeSnapshot(testRedis.redis, testRedis.prefix, 'markets:trending', listSnapshot(rebuilt), '"trending-2"');
    const res = await get('/api/v1/markets', { headers: { 'if-none-match': base! } });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).not.toBe(base);
    const data = await body(res, marketListResponseSchema);
    expect(data.events[0]!.slug).toBe('ai-model');
    await writeSnapshot(testRedis.redis, testRedis.prefix, 'markets:trending', listSnapshot(events), '"trending-1"');
    expect(await etagOf('/api/v1/markets')).toBe(base);
  });

  it('re-reads a snapshot body only when its etag changes', async () => {
    const p = testRedis.prefix;
    const slug = 'cache-probe';
    await writeSnapshot(testRedis.redis, p, `event:${slug}`, { event: event(slug, 'First title', 'Tech', ['Q?']) }, '"probe-1"');
    const first = await body(await get(`/api/v1/markets/${slug}`), marketEventResponseSchema);
    expect(first.event.title).toBe('First title');
    // Same etag, different body: the parsed copy held in process is served (the etag is the version).
    await writeSnapshot(testRedis.redis, p, `event:${slug}`, { event: event(slug, 'Second title', 'Tech', ['Q?']) }, '"probe-1"');
    expect((await body(await get(`/api/v1/markets/${slug}`), marketEventResponseSchema)).event.title).toBe('First title');
    await writeSnapshot(testRedis.redis, p, `event:${slug}`, { event: event(slug, 'Second title', 'Tech', ['Q?']) }, '"probe-2"');
    expect((await body(await get(`/api/v1/markets/${slug}`), marketEventResponseSchema)).event.title).toBe('Second title');
  });

  it('answers HEAD with the GET headers and no body', async () => {
    // Uncompressed, so that the length can be compared with the body as read.
    const identity = { 'accept-encoding': 'identity' };
    const getRes = await get('/api/v1/markets?limit=2', { headers: identity });
    const getBody = await getRes.text();
    const head = await get('/api/v1/markets?limit=2', { method: 'HEAD', headers: identity });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    for (const h of ['etag', 'cache-control', 'content-type', 'content-length', 'x-ratelimit-limit']) {
      expect(head.headers.get(h), h).toBe(getRes.headers.get(h));
    }
    expect(Number(head.headers.get('content-length'))).toBe(Buffer.byteLength(getBody));
  });
});

describe('errors and cross-cutting behaviour', () => {
  it.each(['/', '/api/v1/nope', '/api/v1/markets/x/y/z', '/api/v2/markets'])('answers unknown path %s with 404 not_found', async (path) => {
    await expectError(await get(path), 404, 'not_found');
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('answers %s with 405 and Allow', async (method) => {
    const res = await get('/api/v1/markets', { method });
    await expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('allows any origin and exposes the rate-limit headers and ETag', async () => {
    const res = await get('/api/v1/odds?chance=0.5', { headers: { origin: 'https://example.org' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(['etag', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']));
    const notFound = await get('/nope', { headers: { origin: 'https://example.org' } });
    expect(notFound.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('answers a CORS preflight with 204, the methods and If-None-Match', async () => {
    const res = await get('/api/v1/markets', {
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,HEAD,OPTIONS');
    expect((res.headers.get('access-control-allow-headers') ?? '').toLowerCase()).toContain('if-none-match');
  });

  it('echoes a sane x-request-id and replaces anything else', async () => {
    expect((await get('/api/v1/odds?chance=0.5', { headers: { 'x-request-id': 'abc-123' } })).headers.get('x-request-id')).toBe('abc-123');
    const replaced = (await get('/api/v1/odds?chance=0.5', { headers: { 'x-request-id': 'x'.repeat(200) } })).headers.get('x-request-id');
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs one line per request with the route template, status and duration', async () => {
    await get(`/api/v1/markets/${arsenal.slug}`, { headers: { 'x-request-id': 'log-line-1' } });
    // The line is written when the response finishes, which may be just after the client has it.
    const line = await until('the request log line', async () => logs.lines.find((l) => l['req_id'] === 'log-line-1' && l['msg'] === 'request'), { timeoutMs: 2_000, everyMs: 5 });
    expect(line).toMatchObject({ method: 'GET', route: '/api/v1/markets/{eventSlug}', status: 200 });
    expect(typeof line?.['ms']).toBe('number');
  });
});

describe('GET /api/v1/openapi.json', () => {
  it('describes the API in OpenAPI 3.1 with resolvable references', async () => {
    const res = await get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100000');
    const doc = (await res.json()) as Record<string, unknown> & {
      openapi: string;
      info: { version: string };
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/calls',
      '/api/v1/calls/{id}',
      '/api/v1/combos',
      '/api/v1/exports',
      '/api/v1/exports/{date}/{file}',
      '/api/v1/leaderboard',
      '/api/v1/live',
      '/api/v1/markets',
      '/api/v1/markets/by-id',
      '/api/v1/markets/by-id/{marketId}',
      '/api/v1/markets/{eventSlug}',
      '/api/v1/markets/{eventSlug}/book',
      '/api/v1/markets/{eventSlug}/candles',
      '/api/v1/markets/{eventSlug}/history',
      '/api/v1/markets/{eventSlug}/trades',
      '/api/v1/odds',
      '/api/v1/stream',
      '/api/v1/users/{handle}',
      '/api/v1/users/{handle}/calls',
    ]);

    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref' && typeof v === 'string') refs.push(v);
          else walk(v);
        }
      }
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      expect(ref.startsWith('#/'), ref).toBe(true);
      let target: unknown = doc;
      for (const part of ref.slice(2).split('/')) target = (target as Record<string, unknown> | undefined)?.[part];
      expect(target, ref).toBeTypeOf('object');
    }
    const ok = doc.paths['/api/v1/odds']!.get.responses['200'] as { content: Record<string, { schema: { $ref: string } }> };
    expect(ok.content['application/json']!.schema.$ref).toBe('#/components/schemas/OddsResponse');
    for (const status of ['304', '400', '429', '500']) expect(doc.paths['/api/v1/odds']!.get.responses[status], status).toBeDefined();
    expect(doc.paths['/api/v1/markets/{eventSlug}']!.get.responses['404']).toBeDefined();
    // The stream: an event-stream whose message schemas, one per `event:`, are components.
    const stream = doc.paths['/api/v1/stream']!.get.responses['200'] as { content: Record<string, { 'x-sse-messages': Record<string, { $ref: string }> }> };
    expect(Object.keys(stream.content['text/event-stream']!['x-sse-messages'])).toEqual(['price', 'score', 'settlement', 'call', 'trade', 'reset']);
    expect(stream.content['text/event-stream']!['x-sse-messages']['price']!.$ref).toBe('#/components/schemas/StreamPrice');
  });
});

/** Sends raw bytes and returns the raw answer, its head lower-cased. */
async function raw(request: string): Promise<{ status: number; headers: string; body: string }> {
  const { status, head, body } = await rawExchange(api.base, request);
  return { status, headers: head.toLowerCase(), body };
}

describe('edges', () => {
  it.each([
    ['an oversized header', `GET /api/v1/markets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ['an unknown method', 'BREW /api/v1/markets HTTP/1.1\r\nHost: x\r\n\r\n', 405, 'method_not_allowed'],
    ['a bad request line', 'GET /api/v1/markets HTTP/9\r\n\r\n', 400, 'bad_request'],
    ['a header that is not a header', 'GET /api/v1/markets HTTP/1.1\r\nHost x\r\n\r\n', 400, 'bad_request'],
  ])('answers %s with the JSON error body and a matching status', async (_what, request, status, code) => {
    const res = await raw(request);
    expect(res.status).toBe(status);
    expect(res.headers).toContain('content-type: application/json');
    expect(res.headers).toContain('x-content-type-options: nosniff');
    expect(errorBodySchema.parse(JSON.parse(res.body)).error.code).toBe(code);
  });

  it.each(['/api/v1/markets?q=%E0%A4%A', '/api/v1/markets/%E0%A4%A', '/api/v1/markets?q=100%'])('answers bad percent-encoding %s with 400', async (path) => {
    await expectError(await get(path), 400, 'bad_request');
  });

  it('sends X-Content-Type-Options: nosniff on every kind of response', async () => {
    for (const path of ['/api/v1/markets', '/api/v1/markets?limit=0', '/api/v1/nope', '/api/v1/docs', '/healthz', '/metrics', '/api/v1/openapi.json']) {
      expect((await get(path)).headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    const etag = (await get('/api/v1/markets')).headers.get('etag')!;
    expect((await get('/api/v1/markets', { headers: { 'if-none-match': etag } })).headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('writes a held ready response with the very header lines Express wrote when it made it', async () => {
    // The first request of a target goes through Express and makes the ready response; the second is
    // answered in front of Express from its header block (ready-response.ts writeBlock).
    const lines = (headers: string) =>
      headers
        .split('\r\n')
        .slice(1)
        .map((line) => line.replace(/^(x-request-id|date|x-ratelimit-remaining): .*/, '$1: …'));
    for (const [method, coding] of [
      ['GET', 'identity'],
      ['GET', 'gzip'],
      ['GET', 'br'],
      ['HEAD', 'identity'],
      ['HEAD', 'br'],
    ] as const) {
      const request = `${method} /api/v1/markets?limit=4&both-paths=${method}-${coding} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${coding}\r\nConnection: close\r\n\r\n`;
      const made = await raw(request);
      const held = await raw(request);
      expect(made.status, `${method} ${coding}`).toBe(200);
      expect(lines(held.headers), `${method} ${coding}`).toEqual(lines(made.headers));
      expect(held.body, `${method} ${coding}`).toBe(made.body);
      if (method === 'GET') expect(held.headers).toContain(`content-length: ${Buffer.byteLength(held.body, 'latin1')}`);
      else expect(held.body).toBe('');
      if (coding !== 'identity' && method === 'GET') expect(held.headers).toContain(`content-encoding: ${coding}`);
    }
  });

  it('compresses when asked (br, else gzip), with Vary, to the same content', async () => {
    const plain = await get('/api/v1/markets', { headers: { 'accept-encoding': 'identity' } });
    const text = await plain.text();
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plain.headers.get('vary')).toBe('Accept-Encoding');
    for (const [accept, coding, decode] of [
      ['gzip, deflate, br', 'br', zlib.brotliDecompressSync],
      ['gzip', 'gzip', zlib.gunzipSync],
    ] as const) {
      const { port } = new URL(api.base);
      const res = await new Promise<http.IncomingMessage>((resolve) =>
        http.get({ host: '127.0.0.1', port, path: '/api/v1/markets', headers: { 'accept-encoding': accept } }, resolve),
      );
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      expect(res.headers['content-encoding']).toBe(coding);
      expect(res.headers['vary']).toBe('Accept-Encoding');
      expect(Number(res.headers['content-length'])).toBe(body.length);
      expect(body.length).toBeLessThan(Buffer.byteLength(text));
      expect(decode(body).toString()).toBe(text);
      expect(res.headers['etag']).not.toBe(plain.headers.get('etag'));
      // Any coding's ETag of the current version revalidates.
      expect((await get('/api/v1/markets', { headers: { 'if-none-match': res.headers['etag']!, 'accept-encoding': 'identity' } })).status).toBe(304);
    }
  });
});
