import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@pm/shared/redis';
import { startStack, type Stack } from '../support/stack.js';
import { until } from '@pm/shared/wait';
import { apiChance, missed, priceBurst, priceTargets, snapshotReader, waitVisible, type PriceTarget, type Seen } from '../support/price-bursts.js';

/**
 * a burst of frames over many events, one more frame 50 ms
 * later, then silence — every price of the burst, and the last frame's above all, shows through
 * the API, and the worker's event page (what the API serves once its live-price overlay lets the
 * price go) shows it too. Replayed real frames showed the last frame's price only 15–17 s later,
 * when the next burst or a periodic sync touched the event again.
 *
 * No assertion here is about speed (that is `npm run bench:ingest`). The one bound, LOSS_BOUND_MS,
 * only has to come before anything else could bring a lost price back: nothing is sent after the
 * last frame, and the worker's periodic full build (30 s) and the catalog sync are further away.
 *
 * The simulator's walk is paused and the demo crowd off, so only the test's frames move prices and
 * no market is resolved under it.
 */

const EVENTS = 40;
const ROUNDS = 4;
const LOSS_BOUND_MS = 10_000;

let stack: Stack;
let redis: Redis;
let targets: PriceTarget[];

beforeAll(async () => {
  stack = await startStack({ env: { CROWD: '0', RATE_LIMIT_PER_MINUTE: '100000000' } });
  redis = new Redis(stack.redisUrl);
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
  const keys = redisKeys(stack.prefix);
  const [chance, dirty] = await Promise.all([redis.hget(keys.chances, token), redis.scard(keys.dirtyEvents)]);
  return `Redis: chance of the last frame's token ${String(chance)}, ${dirty} events left dirty`;
}

const inWords = (s: Seen) => `${s.target.slug} market ${s.target.marketId}: sent ${s.chance}, showed ${String(s.lastShown)}`;

afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
});

describe('a price burst followed by silence', () => {
  it('shows every price of the burst and the last frame after it, through the API and in the worker’s page, with nothing sent after', async () => {
    const report: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const result = await priceBurst(stack, targets, round, { deadlineMs: LOSS_BOUND_MS });
      const lost = missed(result);
      if (lost.length > 0) lost.push(await whereStuck(result.last.target.token));
      expect(lost, `round ${round}: prices the API did not show:\n${lost.join('\n')}\n${report.join('\n')}`).toEqual([]);

      // The worker's page has them too: the API's live price is held for a while only, and the
      // page is what remains after it. Still nothing sent meanwhile.
      const built = await Promise.all([result.last, ...result.burst].map((c) => waitVisible(snapshotReader(redis, stack.prefix), c, LOSS_BOUND_MS)));
      const notBuilt = built.filter((s) => s.delayMs === undefined).map(inWords);
      if (notBuilt.length > 0) notBuilt.push(await whereStuck(result.last.target.token));
      expect(notBuilt, `round ${round}: prices the worker's event page never showed:\n${notBuilt.join('\n')}`).toEqual([]);

      // And the API shows the last frame's price still, now that it is in the page.
      expect(await apiChance(stack, result.last.target)).toBe(result.last.chance);
      report.push(`round ${round}: ${result.burst.length} burst prices and the last frame shown through the API and built by the worker`);
    }
    process.stdout.write(`price bursts over ${targets.length} events:\n${report.join('\n')}\n`);
  });
});
