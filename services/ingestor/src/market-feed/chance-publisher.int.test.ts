import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '@pm/shared/redis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { quoteOf } from '@pm/shared/domain';
import { createChancePublisher } from './chance-publisher.js';
import { quietLogger } from '../testing/harness.js';

let tr: TestRedis;

beforeAll(async () => {
  tr = await createTestRedis('chance_publisher');
});

afterAll(async () => {
  await tr?.cleanup();
});

describe('the chance publisher', () => {
  it('counts every publication, not distinct tokens, and leaves the last chance of each token in Redis', async () => {
    const keys = redisKeys(tr.prefix);
    const publisher = createChancePublisher({ redis: tr.redis, keys, clock: { now: () => Date.now() }, logger: quietLogger });
    try {
      // One token moving three times (back to where it was included), another once, one offer that did not move.
      expect([0.5, 0.6, 0.5].map((c) => publisher.publish('t1', c))).toEqual([true, true, true]);
      expect(publisher.publish('t2', 0.25)).toBe(true);
      expect(publisher.publish('t2', 0.25)).toBe(false);
      expect(await publisher.flush()).toBe(true);
      expect(publisher.stats().published).toBe(4);
      expect(await tr.redis.hmget(keys.chances, 't1', 't2')).toEqual(['0.5', '0.25']);
    } finally {
      await publisher.close();
    }
  });

  it('publishes the quotes with the chance, and a quote that moved while the chance stood still', async () => {
    const keys = redisKeys(tr.prefix);
    const moved: Array<[string, number, boolean]> = [];
    const publisher = createChancePublisher({
      redis: tr.redis,
      keys,
      clock: { now: () => Date.now() },
      logger: quietLogger,
      onMoved: (token, chance, _quote, chanceMoved) => moved.push([token, chance, chanceMoved]),
    });
    try {
      expect(publisher.publish('q1', 0.5, quoteOf(0.49, 0.51, null))).toBe(true);
      // The spread widens around the same midpoint: the chance stands, the quotes moved.
      expect(publisher.publish('q1', 0.5, quoteOf(0.48, 0.52, null))).toBe(true);
      expect(publisher.publish('q1', 0.5, quoteOf(0.48, 0.52, null))).toBe(false);
      expect(await publisher.flush()).toBe(true);
      expect(await tr.redis.hget(keys.quotes, 'q1')).toBe('0.48|0.52|');
      expect(await tr.redis.hget(keys.chances, 'q1')).toBe('0.5');
      expect(moved).toEqual([
        ['q1', 0.5, true],
        ['q1', 0.5, false],
      ]);
    } finally {
      await publisher.close();
    }
  });
});
