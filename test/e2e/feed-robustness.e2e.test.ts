import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { redisKeys } from '@pm/shared/redis';
import { startStack, type Stack } from '../support/stack.js';
import * as waiting from '@pm/shared/wait';

/**
 * The proofs, end to end on the whole stack against the simulator: cutting the market
 * sockets mid-run turns `live` false, the ingestor reconnects within 10 s with backoff and `live`
 * turns true again, and prices keep flowing; a socket that stays open but silent is recycled by
 * the watchdog (MARKET_WATCHDOG_SECONDS, small here).
 */
let stack: Stack;
let redis: Redis;
let feedKey: string;

const WATCHDOG_SECONDS = 2;

interface MarketsBody {
  live: boolean;
}
interface EventBody {
  live: boolean;
  event: { markets: Array<{ id: string; outcomes: Array<{ name: string; chance: number }> }> };
}

async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(`${stack.apiUrl}${path}`);
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  return (await res.json()) as T;
}

const waitFor = <T>(label: string, check: () => Promise<T | undefined | null | false>, timeoutMs: number, everyMs = 50) =>
  waiting.until(label, check, { timeoutMs, everyMs, context: () => stack.logs() });

const apiLive = async () => (await getJson<MarketsBody>('/api/v1/markets')).live;
const post = (path: `/_sim/${string}`, body: unknown = {}) => stack.simControl(path, body);

beforeAll(async () => {
  // The test polls the API every 20 ms: far past the public limit, which is not what it tests.
  stack = await startStack({ env: { MARKET_WATCHDOG_SECONDS: String(WATCHDOG_SECONDS), LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000' }, readyTimeoutMs: 90_000 });
  redis = new Redis(stack.redisUrl);
  feedKey = redisKeys(stack.prefix).feed;
  await waitFor('live true at start', apiLive, 30_000, 200);
});

afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
});

describe('feed robustness on the whole stack', () => {
  it('cutting the market sockets: live turns false, reconnect with backoff within 10 s, live true again, prices continue', async () => {
    const dropped = await post('/_sim/drop-market-sockets');
    expect(((await dropped.json()) as { dropped: number }).dropped).toBeGreaterThan(0);
    const droppedAt = Date.now();

    // Watch the API (and the feed hash it reads) while the socket is down.
    const seen = await waitFor(
      'live false in the API',
      async () => ((await apiLive()) === false ? true : undefined),
      5_000,
      20,
    );
    expect(seen).toBe(true);
    const relive = await waitFor('live true again', async () => ((await apiLive()) ? Date.now() : undefined), 10_000, 50);
    expect(relive - droppedAt).toBeLessThan(10_000);
    expect(await redis.hget(feedKey, 'market_connected')).toBe('1');
    // Reconnected through the backoff (a delay in the warning), not an instant retry loop.
    expect(stack.logs()).toMatch(/market socket closed; reconnecting/);
    expect(stack.logs()).toMatch(/"delayMs":\d+/);

    // Prices continue: with the walk paused, a book set now shows in the API as its midpoint.
    expect((await post('/_sim/pause')).status).toBe(200);
    const events = (await (await fetch(`${stack.simUrl}/events?active=true&closed=false&limit=50&offset=0`)).json()) as Array<{
      slug: string;
      markets: Array<{ id: string; closed?: boolean; clobTokenIds: string }>;
    }>;
    const event = events.find((e) => e.markets.some((m) => !m.closed));
    const market = event?.markets.find((m) => !m.closed);
    expect(market).toBeDefined();
    const [yes] = JSON.parse(market!.clobTokenIds) as string[];
    const current = await getJson<EventBody>(`/api/v1/markets/${event!.slug}`);
    const before = current.event.markets.find((m) => m.id === market!.id)?.outcomes[0]?.chance;
    // A midpoint the walk is unlikely to sit on already: 0.37 or 0.63, whichever is further away.
    const target = before !== undefined && Math.abs(before - 0.37) < 0.1 ? 0.63 : 0.37;
    const set = await post('/_sim/book', {
      token_id: yes,
      bids: [{ price: Number((target - 0.01).toFixed(2)), size: 500 }],
      asks: [{ price: Number((target + 0.01).toFixed(2)), size: 500 }],
    });
    expect(set.status).toBe(200);
    await waitFor(
      `chance ${target} in the API`,
      async () => (await getJson<EventBody>(`/api/v1/markets/${event!.slug}`)).event.markets.find((m) => m.id === market!.id)?.outcomes[0]?.chance === target,
      10_000,
      100,
    );
    expect((await post('/_sim/resume')).status).toBe(200);
  });

  it('a socket that stays open but silent is recycled by the watchdog, and the feed recovers', async () => {
    const recyclesBefore = (stack.logs().match(/market socket silent; recycling/g) ?? []).length;
    const silenceMs = WATCHDOG_SECONDS * 1000 * 2 + 1000;
    const silenced = await post('/_sim/silence', { ms: silenceMs });
    expect(silenced.status).toBe(200);
    const { silencedUntil } = (await silenced.json()) as { silencedUntil: number };
    await waitFor(
      'the watchdog recycling the silent socket',
      async () => (stack.logs().match(/market socket silent; recycling/g) ?? []).length > recyclesBefore,
      silenceMs + 3_000,
      100,
    );
    // Once the exchange talks again, every shard's socket is open and data flows: the feed's last
    // data time moves past the end of the silence, and the API says live. (Shards recycle on their
    // own clocks, so one may still be reconnecting when the first data arrives: wait for both.)
    await waitFor(
      'connected with data after the silence',
      async () => (await redis.hget(feedKey, 'market_connected')) === '1' && Number(await redis.hget(feedKey, 'market_last_at')) > silencedUntil,
      silenceMs + 10_000,
      100,
    );
    await waitFor('live true after the silence', apiLive, 5_000, 100);
  });
});
