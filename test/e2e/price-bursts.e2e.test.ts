import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@pm/shared/redis';
import { startStack, type Stack } from '../support/stack.js';
import { until } from '../support/poll.js';
import { apiChance, missed, priceBurst, priceTargets, type PriceTarget } from '../support/price-bursts.js';

/**
 * Issue 18 item 4 on the running stack: a burst of frames over many events, one more frame 50 ms
 * later, then silence — every price of the burst and of the last frame shows through the API.
 * Replayed real frames showed the last frame's price only 15–17 s later, when the next burst or
 * the periodic catalog sync touched the event again. The deadline is a correctness bound against
 * that loss, not a speed target (speed is `npm run bench:ingest`).
 *
 * The simulator's walk is paused and the demo crowd off, so only the test's frames move prices and
 * no market is resolved under it.
 */

const EVENTS = 40;
const ROUNDS = 4;
const DEADLINE_MS = 2_000;

let stack: Stack;
let targets: PriceTarget[];

beforeAll(async () => {
  stack = await startStack({ env: { CROWD: '0', RATE_LIMIT_PER_MINUTE: '100000000' } });
  expect((await stack.simControl('/_sim/pause', {})).status).toBe(200);
  targets = await priceTargets(stack, EVENTS);
  expect(targets.length).toBeGreaterThan(10);
  // Every target's event page is built before the first burst.
  await until('every target event in the API', async () => (await Promise.all(targets.map((t) => apiChance(stack, t)))).every((c) => c !== undefined), {
    timeoutMs: 60_000,
    everyMs: 500,
    context: () => stack.logs(),
  });
});

/** Where a lost price stopped: what Redis holds for the last frame's token, and what is left dirty. */
async function whereStuck(token: string): Promise<string> {
  const redis = new Redis(stack.redisUrl);
  try {
    const keys = redisKeys(stack.prefix);
    const [chance, dirty] = await Promise.all([redis.hget(keys.chances, token), redis.scard(keys.dirtyEvents)]);
    return `Redis: chance of the last frame's token ${String(chance)}, ${dirty} events left dirty`;
  } finally {
    redis.disconnect();
  }
}

afterAll(async () => {
  await stack?.stop();
});

describe('a price burst followed by silence', () => {
  it('shows every price of the burst and the last frame after it, without waiting for a later change', async () => {
    const report: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const result = await priceBurst(stack, targets, round, { deadlineMs: DEADLINE_MS });
      const delays = result.burst.flatMap((s) => (s.delayMs === undefined ? [] : [s.delayMs]));
      report.push(
        `burst ${round}: ${delays.length}/${result.burst.length} burst prices shown (slowest ${Math.max(...delays)} ms), ` +
          `last frame ${result.last.delayMs === undefined ? 'NOT shown' : `${result.last.delayMs} ms`}`,
      );
      const lost = missed(result);
      if (lost.length > 0) lost.push(await whereStuck(result.last.target.token));
      expect(lost, `round ${round}: prices not shown within ${DEADLINE_MS} ms of their frame:\n${lost.join('\n')}\n${report.join('\n')}`).toEqual([]);
    }
    process.stdout.write(`price bursts over ${targets.length} events (deadline ${DEADLINE_MS} ms):\n${report.join('\n')}\n`);
  });
});
