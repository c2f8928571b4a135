import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { redisKeys } from '@pm/shared/redis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { createChanceReader, type ChanceReader } from './chances.js';
import type { CatalogEvent } from './model.js';

/**
 * The worker's chance copy against a real Redis: a build reads the chances of the events it was
 * told moved (and of events it meets for the first time), everything on a reload, and nothing else.
 */

let tr: TestRedis;
let key: string;
let reader: ChanceReader;

beforeAll(async () => {
  tr = await createTestRedis('chance_reader');
  key = redisKeys(tr.prefix).chances;
});
afterAll(() => tr?.cleanup());
beforeEach(async () => {
  await tr.redis.del(key);
  reader = createChanceReader(tr.redis, key);
});

/** An event with one two-outcome market whose tokens are `<id>-yes` and `<id>-no`. */
function event(id: string): CatalogEvent {
  const outcome = (index: number, name: string) => ({ index, name, tokenId: `${id}-${name}`, catalogPrice: null, finalChance: null });
  return {
    id,
    slug: id,
    title: id,
    category: 'Crypto',
    league: null,
    markets: [
      {
        id: `m-${id}`,
        eventId: id,
        position: 0,
        question: id,
        label: id,
        kind: null,
        closesAt: null,
        closed: false,
        oneDayPriceChange: null,
        resolution: null,
        outcomes: [outcome(0, 'yes'), outcome(1, 'no')],
      },
    ],
  } as unknown as CatalogEvent;
}

const a = event('a');
const b = event('b');
const c = event('c');
const none = new Set<string>();

it('reads every token on a reload and answers from its copy until an event is named as moved', async () => {
  await tr.redis.hset(key, { 'a-yes': '0.4', 'a-no': '0.6', 'b-yes': '0.25', 'b-no': '0.75' });
  const first = await reader.read([a, b], 'all');
  expect(Object.fromEntries(first)).toEqual({ 'a-yes': 0.4, 'a-no': 0.6, 'b-yes': 0.25, 'b-no': 0.75 });

  // Both move in Redis; only a is named: b keeps the value the last read saw.
  await tr.redis.hset(key, { 'a-yes': '0.45', 'a-no': '0.55', 'b-yes': '0.3', 'b-no': '0.7' });
  const second = await reader.read([a, b], new Set(['a']));
  expect([second.get('a-yes'), second.get('a-no'), second.get('b-yes'), second.get('b-no')]).toEqual([0.45, 0.55, 0.25, 0.75]);

  // b named later: now its new chances.
  const third = await reader.read([a, b], new Set(['b']));
  expect([third.get('b-yes'), third.get('b-no')]).toEqual([0.3, 0.7]);
});

it('reads the tokens of an event it has not seen, named or not', async () => {
  await tr.redis.hset(key, { 'a-yes': '0.4', 'c-yes': '0.9' });
  await reader.read([a], 'all');
  const read = await reader.read([a, c], none);
  expect(read.get('c-yes')).toBe(0.9);
  // A token with no chance is remembered as such and not asked for again until named.
  expect(read.has('c-no')).toBe(false);
  await tr.redis.hset(key, 'c-no', '0.1');
  expect((await reader.read([a, c], none)).has('c-no')).toBe(false);
  expect((await reader.read([a, c], new Set(['c']))).get('c-no')).toBe(0.1);
});

it('drops a chance that is gone or not a probability when its event is named, and forgets closed events on a reload', async () => {
  await tr.redis.hset(key, { 'a-yes': '0.4', 'a-no': '0.6', 'b-yes': '0.2' });
  await reader.read([a, b], 'all');
  await tr.redis.hdel(key, 'a-yes');
  await tr.redis.hset(key, 'a-no', '1.5');
  const read = await reader.read([a, b], new Set(['a']));
  expect(read.has('a-yes')).toBe(false);
  expect(read.has('a-no')).toBe(false);
  expect(read.get('b-yes')).toBe(0.2);

  // b left the open set: a reload without it forgets its tokens.
  const reloaded = await reader.read([a], 'all');
  expect(reloaded.has('b-yes')).toBe(false);
});

it('reads more tokens than one HMGET holds, in order', async () => {
  const many = Array.from({ length: 6_001 }, (_, i) => event(`e${i}`));
  const fields: Record<string, string> = {};
  many.forEach((e, i) => (fields[`e${i}-yes`] = String((i % 1000) / 1000)));
  await tr.redis.hset(key, fields);
  const read = await reader.read(many, 'all');
  expect(read.get('e0-yes')).toBe(0);
  expect(read.get('e5001-yes')).toBe(0.001);
  expect(read.get('e6000-yes')).toBe(0);
  expect(read.get('e4999-yes')).toBe(0.999);
  expect(read.has('e4999-no')).toBe(false);
});
