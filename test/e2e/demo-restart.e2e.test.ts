import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { marketListResponseSchema } from '@pm/shared/api';
import { createDb, dropDatabase, sql } from '@pm/shared/db';
import { deleteKeysWithPrefix, testServices, uniqueSuffix } from '@pm/shared/testing';
import { startStack, untilMarketConnected, type Stack } from '../support/stack.js';
import { until } from '@pm/shared/wait';

/**
 * `npm start`, Ctrl-C, `npm start` again on the same database and Redis prefix: the restarted
 * simulator no longer knows the first run's events (404 by id), which must void nothing; its own
 * events never take the first run's ids; the open list shows no event without open markets; and a
 * call made in the first run stays open on its open market.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let stack: Stack | undefined;
let databaseUrl = '';
let redisUrl = '';
let prefix = '';

/**
 * The stacks run on a database and a Redis prefix of the test's own, which their stops leave in
 * place for the restart: removed here, after the file and before a retry (which starts over).
 */
async function cleanUp(): Promise<void> {
  await stack?.stop();
  stack = undefined;
  if (databaseUrl) await dropDatabase(databaseUrl).catch(() => {});
  if (redisUrl && prefix) {
    const redis = new Redis(redisUrl);
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  }
}

afterAll(cleanUp);

describe('a restarted demo on the same database', () => {
  it('keeps a consistent catalog: no open event without open markets, the first run\'s calls still open', { timeout: 900_000 }, async () => {
    await cleanUp();
    const services = await testServices();
    const suffix = uniqueSuffix();
    const url = new URL(services.postgresUrl);
    url.pathname = `/pm_restart_${suffix}`;
    databaseUrl = url.toString();
    redisUrl = services.redisUrl;
    prefix = `restart_${suffix}`;
    // Short syncs so several 404s come while the test runs: none may close anything within the hour.
    const env = { DATABASE_URL: databaseUrl, REDIS_PREFIX: prefix, CATALOG_SYNC_SECONDS: '3', RATE_LIMIT_PER_MINUTE: '1000000', CROWD: '0' };
    stack = await startStack({ env, readyTimeoutMs: 240_000 });
    await untilMarketConnected(stack);
    const db = createDb(databaseUrl, { poolSize: 1 });
    try {
      const recordsEnv = { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, REDIS_PREFIX: prefix, LOG_LEVEL: 'silent' };
      const records = (...args: string[]) => promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/records.ts', ...args], { cwd: root, env: recordsEnv });
      await records('user', '--handle', 'restarter', '--name', 'Restarter');
      const list = marketListResponseSchema.parse(await (await fetch(`${stack.apiUrl}/api/v1/markets?limit=10`)).json());
      let called: string | undefined;
      for (const card of list.events) {
        const marketId = card.markets[0]?.id;
        if (marketId === undefined) continue;
        try {
          await records('call', '--user', 'restarter', '--market', marketId, '--outcome', '0');
          called = marketId;
          break;
        } catch {
          // a refused call (a stale price): try the next event
        }
      }
      expect(called).toBeDefined();

      await stack.stop();
      // The first run's events as the restart finds them: the second run may neither hand their ids to
      // other matches nor close the open ones on the simulator's 404s (within the grace period).
      const first = (await db.query(sql`select id, slug, title, closed from events`)) as Array<{ id: string; slug: string; title: string; closed: boolean }>;
      const firstIds = new Set(first.map((e) => e.id));
      expect(first.filter((e) => !e.closed).length).toBeGreaterThan(0);
      const openMarkets = ((await db.query(sql`select id from markets where not closed`)) as Array<{ id: string }>).map((m) => m.id);
      stack = await startStack({ env, readyTimeoutMs: 240_000 });
      await untilMarketConnected(stack);
      // Several syncs of the second run, each asking the simulator about the first run's events (404).
      await until(
        'the first run\'s events missed twice',
        async () => {
          const [row] = (await db.query(sql`select count(*)::int as n from catalog_absences where misses >= 2`)) as Array<{ n: number }>;
          return row && row.n > 0 ? true : undefined;
        },
        { timeoutMs: 120_000, everyMs: 1000, context: () => stack?.logs() ?? '' },
      );

      // The second run has events of its own, and no id of the first run was given to one of them.
      const both = (await db.query(sql`select id, slug, title, closed from events`)) as typeof first;
      const second = both.filter((e) => !firstIds.has(e.id));
      expect(second.length).toBeGreaterThan(0);
      const now = new Map(both.map((e) => [e.id, e] as const));
      expect(first.filter((e) => now.get(e.id)?.slug !== e.slug || now.get(e.id)?.title !== e.title)).toEqual([]);
      // Nothing of the first run was closed on a 404, and the call stays open on its open market.
      expect(first.filter((e) => !e.closed && now.get(e.id)?.closed !== false).map((e) => e.slug)).toEqual([]);
      const [closedSince] = (await db.query(sql`select count(*)::int as n from markets where closed and id = any(${openMarkets}::text[])`)) as Array<{ n: number }>;
      expect(closedSince?.n).toBe(0);
      const [call] = (await db.query(sql`select c.status, m.closed from calls c join markets m on m.id = c.market_id where c.market_id = ${called!}`)) as Array<{ status: string; closed: boolean }>;
      expect(call).toEqual({ status: 'open', closed: false });
      // Every event on the open list (every page) has an open market on its card.
      let cursor: string | null = null;
      let cards = 0;
      do {
        const page = marketListResponseSchema.parse(
          await (await fetch(`${stack.apiUrl}/api/v1/markets?limit=60${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)).json(),
        );
        for (const e of page.events) expect(e.markets.length, `${e.slug} lists no open market`).toBeGreaterThan(0);
        cards += page.events.length;
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(cards).toBeGreaterThan(0);
    } finally {
      await db.dispose();
    }
  });
});
