import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { errorBodySchema, type StreamMessage } from '@pm/shared/api';
import { appendStreamMessage } from '@pm/shared/stream';
import { apiRedis, startApp, type RunningApp } from '../testing/fixtures.js';
import { openSse, type SseConnection } from '../testing/sse-client.js';

/**
 * `GET /api/v1/stream` against real Redis: messages appended by the shared writer reach clients
 * through each API server's one reader, filtered; a resume is exact, also on another server; an id
 * the stream no longer holds gets `reset`; bad input is a 400 that opens nothing; the per-IP cap,
 * the heartbeat, the cut of a client that does not read, and shutdown ending every stream.
 */

let testRedis: TestRedis;
let redis: Redis;
let a: RunningApp;
let b: RunningApp;
const open: SseConnection[] = [];
let env: Record<string, string>;

beforeAll(async () => {
  testRedis = await createTestRedis('api_stream');
  redis = await apiRedis(testRedis.url);
  env = { REDIS_PREFIX: testRedis.prefix, STREAM_HEARTBEAT_MS: '100', STREAM_MAX_PER_IP: '4', STREAM_CLIENT_BUFFER_BYTES: '65536' };
  // Two API servers on one Redis: each has its own reader, as two processes or replicas would.
  [a, b] = await Promise.all([startApp({ redis, env }), startApp({ redis, env })]);
});

afterAll(async () => {
  for (const c of open) c.close();
  await a?.close();
  await b?.close();
  redis?.disconnect();
  await testRedis?.cleanup();
});

const wait = <T>(what: string, check: () => T | undefined | false) => until(what, async () => check(), { timeoutMs: 5_000, everyMs: 10 });

async function sse(app: RunningApp, query = '', headers: Record<string, string> = {}): Promise<SseConnection> {
  const conn = await openSse(`${app.base}/api/v1/stream${query}`, headers);
  open.push(conn);
  if (conn.status === 200) await wait('the stream to open', () => conn.comments.includes('stream open'));
  return conn;
}

let seq = 0;
function call(event: string): StreamMessage {
  seq++;
  return {
    topic: 'call',
    data: { id: `c${seq}`, handle: 'alice', event, market_id: 'm1', outcome_index: 0, outcome: 'Yes', chance: 0.5, at: new Date().toISOString() },
  };
}
function price(event: string, chance: number): StreamMessage {
  return {
    topic: 'price',
    data: { event, market_id: 'm1', outcome_index: 0, outcome: 'Yes', chance, best_bid: null, best_ask: null, spread: null, last_trade_price: null, at: new Date().toISOString() },
  };
}
const append = (m: StreamMessage) => appendStreamMessage(redis, testRedis.prefix, m);
const ids = (c: SseConnection) => c.messages.map((m) => m.id);

describe('GET /api/v1/stream', () => {
  it('sends each message as event/id/data, only the topics and events asked for, with CORS and no caching', async () => {
    const all = await sse(a);
    const calls = await sse(a, '?topics=call&events=ev-a,ev-c');
    expect(all.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(all.headers['access-control-allow-origin']).toBe('*');
    expect(all.headers['cache-control']).toBe('no-store');
    expect(all.headers['x-ratelimit-limit']).toBe('120');

    await append(call('ev-a'));
    await append(call('ev-b'));
    await append(price('ev-a', 0.41));
    await append(call('ev-c'));
    await wait('four messages', () => all.messages.length === 4);
    await wait('two calls', () => calls.messages.length === 2);
    expect(all.messages.map((m) => m.event)).toEqual(['call', 'call', 'price', 'call']);
    expect(calls.messages.map((m) => JSON.parse(m.data).event)).toEqual(['ev-a', 'ev-c']);
    expect(JSON.parse(all.messages[2]!.data)).toMatchObject({ event: 'ev-a', market_id: 'm1', chance: 0.41 });
    for (const m of all.messages) expect(m.id).toMatch(/^\d+-\d+$/);
    all.close();
    calls.close();
  });

  it('sends trade messages, and with markets= those of the markets asked for or (given events=) of either list', async () => {
    const trade = (event: string, market: string): StreamMessage => ({
      topic: 'trade',
      data: { id: `t${++seq}`, event, market_id: market, outcome_index: 1, outcome: 'No', price: 0.4, size: 5, notional: 2, side: 'SELL', at: new Date().toISOString() },
    });
    const score: StreamMessage = {
      topic: 'score',
      data: { event: 'ev-a', game_id: 'g1', league: 'epl', home_team: 'A', away_team: 'B', score: '1-0', period: '2H', clock: '60', live: true, ended: false, at: new Date().toISOString() },
    };
    const byMarket = await sse(a, '?topics=trade,score&markets=m7,m9');
    const either = await sse(a, '?markets=m7&events=ev-a');
    await append(trade('ev-x', 'm7'));
    await append(trade('ev-x', 'm8'));
    await append(score);
    await append(trade('ev-a', 'm8'));
    await append(trade('ev-y', 'm9'));
    await wait('two trades by market', () => byMarket.messages.length === 2);
    await wait('three by either', () => either.messages.length === 3);
    expect(byMarket.messages.map((m) => [m.event, JSON.parse(m.data).market_id])).toEqual([
      ['trade', 'm7'],
      ['trade', 'm9'],
    ]);
    // m7 by its market, the score and the m8 trade by their event; a score never matches a market.
    expect(either.messages.map((m) => `${m.event}:${JSON.parse(m.data).event}`)).toEqual(['trade:ev-x', 'score:ev-a', 'trade:ev-a']);
    const tooMany = await sse(a, `?markets=${Array.from({ length: 101 }, (_, i) => `m${i}`).join(',')}`);
    expect(tooMany.status).toBe(400);
    byMarket.close();
    either.close();
  });

  it('resumes from a last id with exactly what a connected client received meanwhile, on either server', async () => {
    const watcher = await sse(a, '?topics=call,price');
    const first = await append(call('ev-r')).then(() => wait('the first', () => watcher.messages[0]));
    const dropped = await sse(a, `?last_event_id=${first.id!}`);
    await wait('nothing yet', () => dropped.comments.includes('stream open'));
    dropped.close();
    // Missed while away: a burst, two topics.
    for (let i = 0; i < 30; i++) await append(i % 3 === 0 ? price('ev-r', i / 100) : call('ev-r'));
    await wait('the burst', () => watcher.messages.length === 31);

    // Back on the other server, with the id in the header (as EventSource sends it): the burst, then live.
    const back = await sse(b, '?topics=call,price', { 'last-event-id': first.id! });
    await append(call('ev-r'));
    await wait('the live one', () => watcher.messages.length === 32 && back.messages.length === 31);
    expect(ids(back)).toEqual(ids(watcher).slice(1));
    expect(back.messages.map((m) => m.data)).toEqual(watcher.messages.slice(1).map((m) => m.data));
    // The header wins over the URL's first id (what EventSource does on reconnect).
    const viaHeader = await sse(a, `?last_event_id=${first.id!}`, { 'last-event-id': watcher.messages[30]!.id! });
    await wait('one', () => viaHeader.messages.length === 1);
    expect(ids(viaHeader)).toEqual([watcher.messages[31]!.id]);
    for (const c of [watcher, back, viaHeader]) c.close();
  });

  it('answers an id it no longer holds with event: reset, then live messages', async () => {
    const client = await sse(b, '', { 'last-event-id': '1-0' });
    await append(call('ev-z'));
    await wait('reset and the live one', () => client.messages.length === 2);
    expect(client.messages[0]!.event).toBe('reset');
    expect(JSON.parse(client.messages[0]!.data)).toMatchObject({ reason: 'unknown_id', retention_seconds: 900 });
    expect(client.messages[1]).toMatchObject({ event: 'call' });
    client.close();
  });

  it('refuses bad input with a 400 naming it, and opens nothing', async () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['?topics=price,bogus', {}, /topics: unknown topic "bogus"/],
      ['?last_event_id=abc', {}, /last_event_id must be an id/],
      ['', { 'last-event-id': '12-x' }, /Last-Event-ID must be an id/],
      ['?topics=price&topics=call', {}, /topics must be given at most once/],
    ];
    for (const [query, headers, message] of cases) {
      const res = await sse(a, query, headers);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      const body = errorBodySchema.parse(JSON.parse(res.body));
      expect(body.error.code).toBe('bad_request');
      expect(body.error.message).toMatch(message);
    }
    expect(a.api.streams.size()).toBe(0);
  });

  it('caps open streams per client IP over every server, with a 429 in the standard body', async () => {
    // Two here, two on the other server: the cap (4) counts them together.
    const held = await Promise.all([sse(a), sse(a), sse(b), sse(b)]);
    for (const app of [a, b]) {
      const refused = await sse(app);
      expect(refused.status).toBe(429);
      expect(errorBodySchema.parse(JSON.parse(refused.body)).error).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(/at most 4/) });
    }
    held[2]!.close();
    await wait('the slot freed', () => b.api.streams.size() === 1);
    const again = await until('a stream admitted again', async () => {
      const c = await sse(a);
      return c.status === 200 ? c : undefined;
    }, { timeoutMs: 5_000, everyMs: 50 });
    for (const c of [...held, again]) c.close();
    // Their slots are freed when the servers see the closes: the next test opens streams at once.
    await wait('every stream closed', () => a.api.streams.size() === 0 && b.api.streams.size() === 0);
  });

  it('sends heartbeats, and cuts a client that stops reading once its buffer passes the bound', async () => {
    const reader = await sse(b);
    await wait('two heartbeats', () => reader.comments.filter((c) => c === 'heartbeat').length >= 2);
    const stalled = await sse(b);
    expect(b.api.streams.size()).toBe(2);
    stalled.pause();
    const big = 'x'.repeat(60_000);
    // Far more than the kernel's socket buffers hold: the rest waits in the server's, past the bound.
    // (A paused client cannot notice the cut itself: it no longer reads its socket.)
    let sent = 0;
    for (; sent < 600 && b.api.streams.size() === 2; sent++) await append(price(big, 0.5));
    await wait('the stalled client cut', () => b.api.streams.size() === 1);
    await wait('the reader served every message', () => reader.messages.length >= sent);
    expect(reader.ended()).toBe(false);
    reader.close();
  });

  it('ends every stream on shutdown', async () => {
    // A server of its own: the others keep serving the tests that run after this one.
    const stopping = await startApp({ redis, env });
    try {
      const client = await sse(stopping);
      await stopping.api.closeStreams();
      await wait('the stream ended', () => client.ended());
    } finally {
      await stopping.close();
    }
  });
});
