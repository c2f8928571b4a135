import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrderBook } from '@pm/shared/domain';
import { redisKeys } from '@pm/shared/redis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { eventually, sleep } from '@pm/shared/wait';
import type { BookSnapshot } from '@pm/shared/snapshots';
import { OutcomeDirectory } from '../catalog/outcome-directory.js';
import { quietLogger } from '../testing/harness.js';
import { createBookPublisher } from './book-publisher.js';

/**
 * The order-book publisher against a real Redis: a book moving on every millisecond is written a few
 * times a second at most, is never far behind, shows its stated top first, and carries a TTL.
 */
let tr: TestRedis;
beforeAll(async () => {
  tr = await createTestRedis('book_publisher');
});
afterAll(() => tr?.cleanup());

const ref = (tokenId: string, outcomeIndex: number) => ({
  tokenId,
  marketId: 'mk1',
  eventId: 'e1',
  eventSlug: 'e1',
  outcomeIndex,
  name: outcomeIndex === 0 ? 'Yes' : 'No',
  catalogPrice: 0.5,
  closed: false,
});

describe('the book publisher', () => {
  it('bounds the writes per book, keeps up with the changes, and gives every book a TTL', async () => {
    const outcomes = new OutcomeDirectory();
    outcomes.upsert(ref('y', 0));
    outcomes.upsert(ref('n', 1));
    const books = new Map([
      ['y', new OrderBook('y')],
      ['n', new OrderBook('n')],
    ]);
    books.get('y')!.applySnapshot([{ price: '0.40', size: '10' }, { price: '0.41', size: '5' }], [{ price: '0.45', size: '7' }], 1);
    books.get('n')!.applySnapshot([{ price: '0.55', size: '7' }], [{ price: '0.59', size: '5' }, { price: '0.60', size: '10' }], 1);
    // The exchange stated a top bid of 0.40 for Yes: the 0.41 level the book still holds is stale.
    const tops = new Map([['y', { bid: 0.4, ask: null }]]);
    const keys = redisKeys(tr.prefix);
    const publisher = createBookPublisher({
      redis: tr.redis,
      prefix: tr.prefix,
      outcomes,
      book: (t) => books.get(t),
      top: (t) => ({ bid: tops.get(t)?.bid ?? books.get(t)?.bestBid() ?? null, ask: tops.get(t)?.ask ?? books.get(t)?.bestAsk() ?? null }),
      clock: { now: () => Date.now() },
      logger: quietLogger,
      everyMs: 100,
      ttlMs: 60_000,
    });
    const read = async () => {
      const body = await tr.redis.hget(keys.snapshot('book:mk1'), 'body');
      return body === null ? null : (JSON.parse(body) as BookSnapshot);
    };
    try {
      // A change every 2 ms for a second: a level's size moves each time.
      const started = Date.now();
      let size = 100;
      while (Date.now() - started < 1_000) {
        books.get('n')!.applyLevel('SELL', '0.60', String(++size), Date.now());
        publisher.changed('n');
        await sleep(2); // the feed's pace, not a wait for a result
      }
      const last = size;
      const caughtUp = await eventually(read, (b) => b?.outcomes[1]?.asks[1]?.size === last, { timeoutMs: 1_000, everyMs: 20 });
      expect(caughtUp?.outcomes[1]?.asks[1]).toEqual({ price: 0.6, size: last });
      // At most one write per 100 ms (plus the one that caught up), however many changes.
      expect(publisher.stats().written).toBeLessThanOrEqual(13);
      expect(publisher.stats().written).toBeGreaterThanOrEqual(5);
      // Best first, and the stated top first: the stale 0.41 bid is not shown.
      expect(caughtUp?.outcomes[0]).toEqual({ index: 0, bids: [{ price: 0.4, size: 10 }], asks: [{ price: 0.45, size: 7 }] });
      expect(caughtUp?.outcomes[1]?.bids).toEqual([{ price: 0.55, size: 7 }]);
      const ttl = await tr.redis.pttl(keys.snapshot('book:mk1'));
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);

      // A closed market is no longer written: its key expires on its own.
      outcomes.upsert({ ...ref('n', 1), closed: true });
      const before = publisher.stats().written;
      publisher.changed('n');
      await publisher.flush();
      expect(publisher.stats().written).toBe(before);
      // Its tokens dropped, nothing of its book is kept (markets close all day).
      expect(publisher.stats().held).toBe(1);
      publisher.forget('y');
      publisher.forget('n');
      expect(publisher.stats().held).toBe(0);
    } finally {
      await publisher.close();
    }
  });
});
