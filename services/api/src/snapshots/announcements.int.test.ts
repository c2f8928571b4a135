import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { marketEventResponseSchema, marketListResponseSchema } from '@pm/shared/api';
import { redisKeys } from '@pm/shared/redis';
import { startOwnRedis, type OwnRedis } from '@pm/shared/testing';
import { eventually, until } from '@pm/shared/wait';
import { event, listSnapshot, startApp, writeSnapshot, type RunningApp } from '../testing/fixtures.js';

/**
 * The held snapshots follow Redis through a restart (a fault: the API's subscription drops and
 * announcements are missed). Runs its OWN throwaway redis-server, which it stops and starts again.
 */

let own: OwnRedis;
let redis: Redis;
let seeder: Redis;
let api: RunningApp;
const prefix = 't_announce';
const slug = 'restart-probe';

async function title(of = slug): Promise<string | number> {
  const res = await fetch(`${api.base}/api/v1/markets/${of}`);
  if (res.status !== 200) return res.status;
  return marketEventResponseSchema.parse(await res.json()).event.title;
}

beforeAll(async () => {
  own = await startOwnRedis();
  const url = own.url;
  redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: 1_000, retryStrategy: () => 100 });
  redis.on('error', () => {});
  seeder = new Redis(url, { retryStrategy: () => 100 });
  seeder.on('error', () => {});
  await new Promise<void>((resolve) => (redis.status === 'ready' ? resolve() : redis.once('ready', () => resolve())));
  api = await startApp({ redis, env: { REDIS_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '100000' } });
});

afterAll(async () => {
  await api?.close();
  redis?.disconnect();
  seeder?.disconnect();
  await own?.stop();
});

describe('held snapshots across a Redis restart', () => {
  it('serves the new version announced while it runs, the held one while Redis is down, then the one written while it was cut off', async () => {
    await writeSnapshot(seeder, prefix, `event:${slug}`, { event: event(slug, 'First', 'Tech', ['Q?']) }, '"v1"');
    expect(await title()).toBe('First');
    await writeSnapshot(seeder, prefix, `event:${slug}`, { event: event(slug, 'Second', 'Tech', ['Q?']) }, '"v2"');
    expect(await title()).toBe('Second');

    // Redis dies (no persistence: everything is gone) and comes back; the worker rewrites the
    // snapshot before the API has resubscribed, so the API never hears of it. Meanwhile what the API
    // held is served as it was (a failover lasts seconds), and what it never held is a 503.
    await writeSnapshot(seeder, prefix, 'event:never-read', { event: event('never-read', 'Unread', 'Tech', ['Q?']) }, '"u1"');
    await own.stop();
    const downStatus = await title();
    const downUnheld = await title('never-read');
    await own.start();
    await until('the seeder reconnected', async () => seeder.status === 'ready' || (await seeder.ping().then(() => false, () => false)), { timeoutMs: 5_000, everyMs: 100 });
    await seeder.hset(redisKeys(prefix).snapshot(`event:${slug}`), { body: JSON.stringify({ event: event(slug, 'Third', 'Tech', ['Q?']) }), etag: '"v3"', built_at: String(Date.now()) });

    const started = Date.now();
    const seen = await eventually(title, (t) => t === 'Third', { timeoutMs: 15_000, everyMs: 100 });
    console.log(`redis restart: while down the API answered ${downStatus} (a snapshot never read: ${downUnheld}); the unannounced version was served ${Date.now() - started} ms after Redis was back`);
    expect(downStatus).toBe('Second');
    expect(downUnheld).toBe(503);
    expect(seen).toBe('Third');
  });

  it('serves a first page of the market list with its cursor while Redis is down, when the list changed to a new ranking just before', async () => {
    const events = [event('first-a', 'A', 'Tech', ['Q?']), event('first-b', 'B', 'Tech', ['Q?'])];
    const ranking = (version: number) => ({ version, events: events.map((e) => [e.slug, e.category, null]) });
    const page = async () => {
      const res = await fetch(`${api.base}/api/v1/markets?limit=1`);
      return res.status === 200 ? marketListResponseSchema.parse(await res.json()) : res.status;
    };
    await writeSnapshot(seeder, prefix, 'markets:ranking:1', ranking(1), '"r1"');
    await writeSnapshot(seeder, prefix, 'markets:trending', { ...listSnapshot(events), ranking: 1 }, '"l1"');
    expect(await page()).toMatchObject({ count: 1, next_cursor: expect.any(String) });
    // The worker renumbers the ranking (it does on every build that reorders) and the list follows;
    // nobody asks for a page between that and the failure.
    await writeSnapshot(seeder, prefix, 'markets:ranking:2', ranking(2), '"r2"');
    await writeSnapshot(seeder, prefix, 'markets:trending', { ...listSnapshot([...events].reverse()), ranking: 2 }, '"l2"');
    await own.stop();
    try {
      const down = await page();
      expect(down).toMatchObject({ count: 1, next_cursor: expect.any(String) });
      expect(typeof down === 'number' ? down : down.events[0]!.slug).toBe('first-b');
    } finally {
      await own.start();
    }
  });
});

describe('a version that fails its schema', () => {
  it('is not served: the version before it is, until a good one comes', async () => {
    const s = 'invalid-probe';
    // The tests before this one restart Redis: the API may still be reconnecting.
    await until('the API reads Redis again', () => writeSnapshot(seeder, prefix, `event:${s}`, { event: event(s, 'Good', 'Tech', ['Q?']) }, '"g1"').then(() => true, () => false), { timeoutMs: 15_000, everyMs: 100 });
    expect(await eventually(() => title(s), (t) => t === 'Good', { timeoutMs: 5_000, everyMs: 50 })).toBe('Good');
    // What a writer with a bug leaves: the worker once wrote a crossed quote the schema refused, and
    // every read of the event's pages was a 500 until its next build.
    await writeSnapshot(seeder, prefix, `event:${s}`, { event: { ...event(s, 'Bad', 'Tech', ['Q?']), volume: 'a lot' } }, '"b1"');
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await title(s));
    expect(answers).toEqual(Array(20).fill('Good'));
    await writeSnapshot(seeder, prefix, `event:${s}`, { event: event(s, 'Fixed', 'Tech', ['Q?']) }, '"g2"');
    expect(await eventually(() => title(s), (t) => t === 'Fixed', { timeoutMs: 5_000, everyMs: 50 })).toBe('Fixed');
  });
});
