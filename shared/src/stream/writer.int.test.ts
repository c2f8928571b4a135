import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redisKeys } from '../redis/keys.js';
import { createTestRedis, type TestRedis } from '../testing/index.js';
import { priceMessage } from './messages.js';
import { createStreamWriter } from './writer.js';

/**
 * The event-stream writer against a real Redis: a burst offered in one turn — the ingestor's first
 * books at 5,000 open events offer about 21,000 prices at once — reaches the stream whole and in
 * order. It once kept only the newest 10,000 of such a burst, and dropped the rest with a warning.
 */

let tr: TestRedis;

beforeAll(async () => {
  tr = await createTestRedis('stream_writer');
});
afterAll(() => tr?.cleanup());

it('streams every message of a 25,000-message burst, in the order offered, and warns of nothing', async () => {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) }));
  const writer = createStreamWriter({ redis: tr.redis, prefix: tr.prefix, logger });
  const count = 25_000;
  const at = Date.parse('2026-11-27T10:00:00Z');
  for (let i = 0; i < count; i++) writer.append(priceMessage({ eventSlug: `event-${i}`, marketId: `m${i}`, outcomeIndex: 0, name: 'Yes' }, 0.5, at));
  await writer.flush();

  const key = redisKeys(tr.prefix).stream;
  expect(await tr.redis.xlen(key)).toBe(count);
  const [first] = await tr.redis.xrange(key, '-', '+', 'COUNT', 1);
  const [last] = await tr.redis.xrevrange(key, '+', '-', 'COUNT', 1);
  // Entry fields: t topic, e event slug, d data.
  expect(first?.[1].slice(0, 4)).toEqual(['t', 'price', 'e', 'event-0']);
  expect(last?.[1].slice(0, 4)).toEqual(['t', 'price', 'e', `event-${count - 1}`]);
  await writer.close();
  expect(lines).toEqual([]);
});

it('flush waits for what was offered before it, also when it spans several pipelines', async () => {
  const logger = pino({ level: 'silent' });
  const prefix = `${tr.prefix}_flush`;
  const writer = createStreamWriter({ redis: tr.redis, prefix, logger });
  const key = redisKeys(prefix).stream;
  for (let i = 0; i < 12_000; i++) writer.append(priceMessage({ eventSlug: `e${i}`, marketId: `m${i}`, outcomeIndex: 1, name: 'No' }, 0.25, Date.now()));
  await writer.flush();
  expect(await tr.redis.xlen(key)).toBe(12_000);
  writer.append(priceMessage({ eventSlug: 'one-more', marketId: 'm', outcomeIndex: 0, name: 'Yes' }, 0.75, Date.now()));
  await writer.close();
  expect(await tr.redis.xlen(key)).toBe(12_001);
  await tr.redis.del(key);
});
