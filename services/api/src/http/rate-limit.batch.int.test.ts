import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { redisKeys } from '@pm/shared/redis';
import { startOwnRedis, until, uniqueSuffix, type OwnRedis } from '@pm/shared/testing';
import { createRateLimiter, type RateLimitDecision } from './rate-limit.js';

/**
 * The limiter counts the requests of one client that arrive together in one script call, each in its
 * own place, and refuses a client that is over the limit without asking Redis again. On a Redis of its
 * own, so the script calls can be read from INFO commandstats.
 */

let own: OwnRedis;
let redis: Redis;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  own = await startOwnRedis();
  // As the API connects (main.ts): auto-pipelining on.
  redis = new Redis(own.url, { enableAutoPipelining: true });
});

afterAll(async () => {
  redis?.disconnect();
  await own?.stop();
});

/** Script calls Redis has run so far (EVALSHA, and EVAL when the script was not loaded yet). */
async function scriptCalls(): Promise<number> {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(evalsha|eval):calls=(\d+)/gm)) calls += Number(m[2]);
  return calls;
}

const allowed = (ds: Array<RateLimitDecision | undefined>) => ds.filter((d) => d && !d.limited).length;

type Limiter = ReturnType<typeof createRateLimiter>;

/** Two limiters on one prefix, the second with a Redis connection of its own, as two processes would be. */
async function twoProcesses(limit: number, run: (a: Limiter, b: Limiter, prefix: string) => Promise<void>): Promise<void> {
  const prefix = `rl_${uniqueSuffix()}`;
  const other = new Redis(own.url, { enableAutoPipelining: true });
  try {
    await run(createRateLimiter({ redis, prefix, limit, logger }), createRateLimiter({ redis: other, prefix, limit, logger }), prefix);
  } finally {
    other.disconnect();
  }
}

describe('rate limiter', () => {
  it('counts a burst of one client in one script call, each request in its own place', async () => {
    const prefix = `rl_${uniqueSuffix()}`;
    const limiter = createRateLimiter({ redis, prefix, limit: 10, logger });
    const before = await scriptCalls();
    const decisions = await Promise.all(Array.from({ length: 15 }, () => limiter.hit('198.51.100.7')));
    expect(await scriptCalls()).toBe(before + 1);
    // Exactly what 15 separate calls would have said, in arrival order.
    expect(decisions.map((d) => d?.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0]);
    expect(decisions.map((d) => d?.limited)).toEqual([...Array<boolean>(10).fill(false), ...Array<boolean>(5).fill(true)]);
    // Redis counts the places handed out: the limit, not the refused requests.
    expect(await redis.get(`${redisKeys(prefix).rateLimitPrefix}198.51.100.7`)).toBe('10');
    // Another client is counted apart.
    expect((await limiter.hit('198.51.100.8'))?.remaining).toBe(9);
  });

  it("counts a client's next turn while its previous count is still unanswered; later turns wait and go together", async () => {
    const prefix = `rl_${uniqueSuffix()}`;
    const limiter = createRateLimiter({ redis, prefix, limit: 10, logger, timeoutMs: 5_000 });
    const pauser = new Redis(own.url);
    try {
      const before = await scriptCalls();
      // Redis holds the counts for 300 ms: four turns of requests from one client arrive meanwhile.
      await pauser.client('PAUSE', 300, 'ALL');
      const turns: Array<Promise<Array<RateLimitDecision | undefined>>> = [];
      for (const size of [2, 3, 1, 2]) {
        turns.push(Promise.all(Array.from({ length: size }, () => limiter.hit('198.51.100.20'))));
        await new Promise<void>((resolve) => setImmediate(resolve)); // the next event-loop turn
      }
      const decisions = (await Promise.all(turns)).flat();
      // The first two turns at once (two in flight), the last two together once the first is answered:
      // 3 script calls (one at a time sent 2: the first, then the rest; one per turn would send 4).
      expect((await scriptCalls()) - before).toBe(3);
      // In arrival order, as eight separate calls would have said.
      expect(decisions.map((d) => d?.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2]);
    } finally {
      pauser.disconnect();
    }
  });

  /** `turns` turns of `size` requests from one client, each turn once the previous one is answered (a busy client). */
  async function busyClient(limiter: ReturnType<typeof createRateLimiter>, client: string, turns: number, size: number) {
    const decisions: Array<RateLimitDecision | undefined> = [];
    for (let t = 0; t < turns; t++) decisions.push(...(await Promise.all(Array.from({ length: size }, () => limiter.hit(client)))));
    return decisions;
  }

  it('answers a busy client from places counted ahead: a script call per many turns, each place once, the count exact after', async () => {
    const prefix = `rl_${uniqueSuffix()}`;
    const limiter = createRateLimiter({ redis, prefix, limit: 10_000, logger });
    const before = await scriptCalls();
    const decisions = await busyClient(limiter, '198.51.100.30', 50, 20);
    const calls = (await scriptCalls()) - before;
    // One count per turn would be 50 script calls.
    expect(calls).toBeLessThan(15);
    const remaining = decisions.map((d) => d?.remaining);
    expect(decisions.every((d) => d && !d.limited)).toBe(true);
    // Every request its own place, in arrival order: 9,999 down to 9,000.
    expect(remaining).toEqual(Array.from({ length: 1000 }, (_, i) => 9_999 - i));
    // Places held and not used go back once idle: Redis then counts exactly the requests answered.
    const key = `${redisKeys(prefix).rateLimitPrefix}198.51.100.30`;
    await until('the unused places to be given back', async () => ((await redis.get(key)) === '1000' ? true : undefined), { timeoutMs: 5_000, everyMs: 50 });
  });

  it('never holds places past the limit: a busy client gets exactly the limit', async () => {
    const prefix = `rl_${uniqueSuffix()}`;
    const limiter = createRateLimiter({ redis, prefix, limit: 100, logger });
    const decisions = await busyClient(limiter, '198.51.100.31', 8, 20);
    expect(allowed(decisions)).toBe(100);
    expect(decisions.slice(0, 100).map((d) => d?.remaining)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    expect(decisions.slice(100).every((d) => d?.limited && d.remaining === 0)).toBe(true);
  });

  it('keeps the limit exact for a busy client hitting two processes', async () => {
    await twoProcesses(300, async (a, b, prefix) => {
      // Both busy at once, each holding places ahead of the other.
      const [fromA, fromB] = await Promise.all([busyClient(a, '203.0.113.30', 20, 15), busyClient(b, '203.0.113.30', 20, 15)]);
      const all = [...fromA, ...fromB];
      // 600 requests against a limit of 300: at most 300 let through.
      const places = all.filter((d) => d && !d.limited).map((d) => d!.remaining);
      expect(places.length).toBeLessThanOrEqual(300);
      // Once the held places are given back and the refusals are rechecked, the two together let
      // through exactly the rest of the limit, and no more.
      const key = `${redisKeys(prefix).rateLimitPrefix}203.0.113.30`;
      await until('held places to be given back', async () => (Number(await redis.get(key)) === places.length ? true : undefined), { timeoutMs: 5_000, everyMs: 50 });
      const rest = await until(
        'the rest of the limit to be let through',
        async () => {
          await busyClient(b, '203.0.113.30', 1, 1).then((d) => places.push(...d.filter((x) => x && !x.limited).map((x) => x!.remaining)));
          return places.length >= 300 ? places : undefined;
        },
        { timeoutMs: 5_000, everyMs: 100 },
      );
      expect(rest.length).toBe(300);
      expect(allowed(await busyClient(a, '203.0.113.30', 1, 10))).toBe(0);
    });
  });

  it('counts a client whose requests alternate between two processes request by request: each answer continues the other', async () => {
    await twoProcesses(120, async (a, b) => {
      const decisions: Array<RateLimitDecision | undefined> = [];
      // One request at a time, as fast as the answers come: busy, but on both processes.
      for (let i = 0; i < 130; i++) decisions.push(await (i % 2 === 0 ? a : b).hit('203.0.113.40'));
      expect(decisions.slice(0, 120).map((d) => d?.remaining)).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i));
      expect(decisions.slice(120).every((d) => d?.limited)).toBe(true);
    });
  });

  it('forgets clients once they are idle, and gives back what a busy one held', async () => {
    const prefix = `rl_${uniqueSuffix()}`;
    const limiter = createRateLimiter({ redis, prefix, limit: 1_000, logger });
    await Promise.all(Array.from({ length: 500 }, (_, i) => limiter.hit(`192.0.2.${i % 250}:${i}`)));
    await busyClient(limiter, '192.0.2.251', 5, 20);
    expect(limiter.tracked()).toBe(501);
    await until('idle clients forgotten', async () => (limiter.tracked() === 0 ? true : undefined), { timeoutMs: 5_000, everyMs: 50 });
    // The busy client's places went back with it: Redis counts the 100 requests it made.
    expect(await redis.get(`${redisKeys(prefix).rateLimitPrefix}192.0.2.251`)).toBe('100');
  });

  it('keeps the limit exact across two processes hit at the same time', async () => {
    await twoProcesses(50, async (a, b) => {
      const decisions = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).hit('203.0.113.9')));
      expect(allowed(decisions)).toBe(50);
      // Every allowed request saw its own remaining count: 49 down to 0, each once.
      const remaining = decisions.filter((d) => d && !d.limited).map((d) => d!.remaining);
      expect(remaining.sort((x, y) => y - x)).toEqual(Array.from({ length: 50 }, (_, i) => 49 - i));
    });
  });

  it('refuses a client over the limit without a round trip until its window resets', async () => {
    const prefix = `rl_${uniqueSuffix()}`;
    const windowMs = 1_500;
    const limiter = createRateLimiter({ redis, prefix, limit: 2, logger, windowMs });
    const first = await Promise.all([limiter.hit('192.0.2.1'), limiter.hit('192.0.2.1'), limiter.hit('192.0.2.1')]);
    expect(first.map((d) => d?.limited)).toEqual([false, false, true]);
    const before = await scriptCalls();
    const again = await Promise.all(Array.from({ length: 20 }, () => limiter.hit('192.0.2.1')));
    expect(again.every((d) => d?.limited && d.remaining === 0 && d.resetMs === first[2]!.resetMs)).toBe(true);
    expect(await scriptCalls()).toBe(before);
    // Once the window is over the client is counted afresh.
    const fresh = await until('the window to reset', async () => {
      const d = await limiter.hit('192.0.2.1');
      return d && !d.limited ? d : undefined;
    }, { timeoutMs: 10_000, everyMs: 100 });
    expect(fresh.remaining).toBe(1);
  });

  it('lets requests through uncounted when Redis does not answer in time, and counts again after', async () => {
    const prefix = `rl_${uniqueSuffix()}`;
    const limiter = createRateLimiter({ redis, prefix, limit: 5, logger, timeoutMs: 200 });
    const pauser = new Redis(own.url);
    try {
      // Redis holds every other client's commands for a second: the counter does not answer in time.
      await pauser.client('PAUSE', 1_000);
      const during = await Promise.all([limiter.hit('192.0.2.50'), limiter.hit('192.0.2.50')]);
      expect(during).toEqual([undefined, undefined]);
      const after = await until('the counter to answer again', () => limiter.hit('192.0.2.50'), { timeoutMs: 5_000, everyMs: 50 });
      expect(after.limit).toBe(5);
    } finally {
      pauser.disconnect();
    }
  });
});
