import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { CATEGORIES, eventCardSchema, eventSchema, type EventCard, type Event } from '@pm/shared/api';
import { redisKeys } from '@pm/shared/redis';
import { startStack, type Stack } from '../support/stack.js';
import * as waiting from '@pm/shared/wait';

/**
 * The spine, end to end: simulator → ingestor → worker → API, started through the README's run
 * line. Moves a book in the simulator and sees the new chance and its five odds strings in the API.
 */
let stack: Stack;
let redis: Redis;

async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
}

interface ListBody {
  ok: boolean;
  live: boolean;
  count: number;
  categories: string[];
  events: EventCard[];
}

interface GammaMarket {
  id: string;
  clobTokenIds: string;
}

const waitFor = <T>(what: string | (() => string), fn: () => Promise<T | undefined>, timeoutMs: number) =>
  waiting.until(what, fn, { timeoutMs, context: () => stack.logs() });

beforeAll(async () => {
  stack = await startStack();
  redis = new Redis(stack.redisUrl);
});

afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
});

describe('the market-data spine', () => {
  it('serves 24 busiest events with up to three priced markets each, and every category', async () => {
    const list = await waitFor(
      '24 events in /api/v1/markets',
      async () => {
        const { body } = await getJson<ListBody>(`${stack.apiUrl}/api/v1/markets`);
        return body.count === 24 ? body : undefined;
      },
      30_000,
    );
    expect(list.ok).toBe(true);
    expect(list.events).toHaveLength(24);
    for (const event of list.events) {
      expect(eventCardSchema.parse(event)).toBeTruthy();
      expect(event.markets.length).toBeGreaterThan(0);
      expect(event.markets.length).toBeLessThanOrEqual(3);
      for (const m of event.markets) {
        for (const o of m.outcomes) {
          expect(Object.keys(o.odds).sort()).toEqual(['american', 'decimal', 'fractional', 'percent', 'price']);
          // Whole percent, with decimals at the extremes (docs/design.md: 0.003 → 0.3%, 0.999 → 99.9%).
          expect(o.odds.percent).toMatch(/^\d{1,3}(\.\d+)?%$/);
          // A certainty (chance 0 or 1) has no fraction; anything else has one with d ≤ 1000.
          if (o.chance > 0 && o.chance < 1) expect(o.odds.fractional).toMatch(/^\d+\/([1-9]\d{0,2}|1000)$/);
          else expect(o.odds.fractional).toBeNull();
        }
      }
    }
    for (const category of CATEGORIES) {
      const { status, body } = await getJson<ListBody>(`${stack.apiUrl}/api/v1/markets?category=${category}`);
      expect(status, category).toBe(200);
      expect(body.count, `events in ${category}`).toBeGreaterThan(0);
      expect(body.events.every((e) => e.category === category)).toBe(true);
    }
  });

  it('moves a chance when the simulator moves a book, with all five odds strings', async () => {
    const { body: list } = await getJson<ListBody>(`${stack.apiUrl}/api/v1/markets?category=Politics`);
    const slug = list.events[0]!.slug;
    const { body: before } = await getJson<{ event: Event }>(`${stack.apiUrl}/api/v1/markets/${slug}`);
    const market = before.event.markets[0]!;
    const current = market.outcomes[0]!.chance;

    // Find the Yes token of that market in the simulator's catalog, stop its random walk, set a book.
    const gamma = (await (await fetch(`${stack.simUrl}/events?slug=${encodeURIComponent(slug)}`)).json()) as Array<{
      markets: GammaMarket[];
    }>;
    const gm = gamma[0]!.markets.find((m) => m.id === market.id)!;
    const yesToken = (JSON.parse(gm.clobTokenIds) as string[])[0]!;
    await stack.simControl('/_sim/pause', {});
    try {
    const [bid, ask, expected] =
      Math.abs(current - 0.25) > 0.001
        ? ['0.24', '0.26', { chance: 0.25, odds: { percent: '25%', decimal: '4.00', fractional: '3/1', american: '+300', price: '25¢' } }]
        : ['0.19', '0.21', { chance: 0.2, odds: { percent: '20%', decimal: '5.00', fractional: '4/1', american: '+400', price: '20¢' } }];
    const res = await stack.simControl('/_sim/book', { token_id: yesToken, bids: [{ price: bid, size: '500' }], asks: [{ price: ask, size: '500' }] });
    expect(res.status).toBe(200);

    let lastSeen: number | undefined;
    let redisChance: string | null | undefined;
    const moved = await waitFor(
      () =>
        `chance ${expected.chance} at /api/v1/markets/${slug} market ${market.id} token ${yesToken} ` +
        `(was ${current}, API last showed ${String(lastSeen)}, Redis holds ${String(redisChance)})`,
      async () => {
        const { body } = await getJson<{ event: Event }>(`${stack.apiUrl}/api/v1/markets/${slug}`);
        const o = body.event.markets.find((m) => m.id === market.id)!.outcomes[0]!;
        lastSeen = o.chance;
        redisChance = await redis.hget(redisKeys(stack.prefix).chances, yesToken);
        return o.chance === expected.chance ? body : undefined;
      },
      20_000,
    );
    const event = eventSchema.parse(moved.event);
    const outcome = event.markets.find((m) => m.id === market.id)!.outcomes[0]!;
    // The quotes are the book the simulator was given; the last trade is whatever traded before.
    expect(outcome).toEqual({
      name: outcome.name,
      chance: expected.chance,
      odds: expected.odds,
      best_bid: Number(bid),
      best_ask: Number(ask),
      spread: 0.02,
      last_trade_price: outcome.last_trade_price,
      closing_chance: null,
    });
    } finally {
      // The next test needs the random walk running again, whatever happened here.
      await stack.simControl('/_sim/resume', {});
    }
  });

  it('keeps prices moving: some chances differ soon (a quiet spell of the simulator lasts up to 60 s)', async () => {
    const snapshot = async () => {
      const { body } = await getJson<ListBody>(`${stack.apiUrl}/api/v1/markets?limit=60`);
      return new Map(body.events.flatMap((e) => e.markets.map((m) => [m.id, m.outcomes[0]!.chance] as const)));
    };
    const first = await snapshot();
    const moved = await waitFor(
      'a chance in the list to move',
      async () => {
        const second = await snapshot();
        const changed = [...first].filter(([id, c]) => second.has(id) && second.get(id) !== c);
        return changed.length > 0 ? changed : undefined;
      },
      90_000,
    );
    expect(moved.length).toBeGreaterThan(0);
  });

  it('answers /odds and the error contract on the running stack', async () => {
    const odds = await getJson<Record<string, unknown>>(`${stack.apiUrl}/api/v1/odds?chance=0.25`);
    expect(odds.body).toMatchObject({
      ok: true,
      chance: 0.25,
      wins_on_10: 40,
      profit_on_10: 30,
      odds: { percent: '25%', decimal: '4.00', fractional: '3/1', american: '+300', price: '25¢' },
    });
    const missing = await getJson<{ ok: boolean; error: { code: string } }>(`${stack.apiUrl}/api/v1/markets/no-such-event-slug`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    const bad = await getJson<{ error: { code: string; message: string } }>(`${stack.apiUrl}/api/v1/markets?limit=61`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('limit');
    const post = await fetch(`${stack.apiUrl}/api/v1/markets`, { method: 'POST' });
    expect(post.status).toBe(405);
  });
});
