import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Server } from 'node:http';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { parseConfig, type Config } from '@pm/shared/config';
import { queueSnapshotWrites, redisKeys, type SnapshotName } from '@pm/shared/redis';
import type { EventSnapshot, MarketListSnapshot, MarketSearchSnapshot } from '@pm/shared/snapshots';
import type { Logger } from '@pm/shared/logger';
import { CATEGORY_DISPLAY_ORDER, type Category, type Combo, type Event, type EventCard, type LeagueEntry, type LeaderboardRow, type Market } from '@pm/shared/api';
import { oddsForChance } from '@pm/shared/domain';
import { createTestDatabase, createTestRedis, type TestRedis } from '@pm/shared/testing';
import { createApiServer, type ApiServer } from '../server.js';

/** Test helpers: snapshot payloads in the worker's documented format, and an app on a free port. */

const WEB = 'http://localhost:3000';

export function outcome(name: string, chance: number) {
  return { name, chance, odds: oddsForChance(chance) };
}

/** An outcome of a market page: with quotes (a one-cent spread around the chance). */
export function quotedOutcome(name: string, chance: number) {
  const bid = Math.max(0.001, Math.round((chance - 0.005) * 1000) / 1000);
  const ask = Math.min(0.999, Math.round((chance + 0.005) * 1000) / 1000);
  return { ...outcome(name, chance), best_bid: bid, best_ask: ask, spread: Math.round((ask - bid) * 10_000) / 10_000, last_trade_price: chance };
}

export function market(id: string, question: string, chance = 0.5): Market {
  return {
    id,
    question,
    label: question.slice(0, 20),
    kind: null,
    outcomes: [quotedOutcome('Yes', chance), quotedOutcome('No', Math.round((1 - chance) * 1000) / 1000)].map((o) => ({ ...o, closing_chance: null })),
    platform_split: [],
    closes_at: '2030-01-01T00:00:00.000Z',
    closed: false,
    resolved_outcome: null,
    resolved_at: null,
    settling: null,
    change_24h: 0.01,
    url: `${WEB}/m/${id}`,
  };
}

export function event(slug: string, title: string, category: Category, questions: string[]): Event {
  return {
    slug,
    title,
    category,
    closes_at: '2030-01-01T00:00:00.000Z',
    volume: 12345.5,
    game: null,
    markets: questions.map((q, i) => market(`${slug}-m${i}`, q, 0.25)),
    market_count: questions.length,
    url: `${WEB}/e/${slug}`,
  };
}

/** The list form of an event: its top three markets with id, question, outcomes. */
export function card(e: Event): EventCard {
  return {
    slug: e.slug,
    title: e.title,
    category: e.category,
    markets: e.markets.slice(0, 3).map(({ id, question, outcomes }) => ({ id, question, outcomes: outcomes.map((o) => outcome(o.name, o.chance)) })),
    market_count: e.market_count,
    url: e.url,
  };
}

/** A leaderboard row in the worker's format. */
export const leaderboardRow = (rank: number, handle: string): LeaderboardRow => ({
  rank,
  handle,
  display_name: handle,
  avatar: null,
  right_pct: 60,
  settled: 5,
  won: 3,
  profit_on_10: 30 - rank,
  profit_7d: 5,
  xp: 100,
  streak: 1,
  clv: null,
  brier: null,
});
/** A two-leg combo in the worker's format. */
export const combo = (id: string, status: Combo['status']): Combo => ({
  id,
  user: { handle: 'Alice' },
  chance: 0.16,
  wins_on_10: 62.5,
  status,
  xp_awarded: status === 'won' ? 200 : 0,
  legs: [
    { market_id: 'm1', event: 'ars-che', question: 'Will Arsenal win?', outcome: 'Yes', outcome_index: 0, chance_at_call: 0.4, status: status === 'won' ? 'won' : 'open' },
    { market_id: 'm3', event: 'ars-che', question: 'Over 2.5 goals?', outcome: 'Over', outcome_index: 0, chance_at_call: 0.4, status: status === 'won' ? 'won' : 'open' },
  ],
  made_at: '2026-11-20T12:00:00.000Z',
  url: `${WEB}/combo/${id}`,
});


export const LEAGUES: LeagueEntry[] = [
  { group: 'Football', label: 'Premier League', league: 'epl' },
  { group: 'Crypto', label: 'Bitcoin', league: 'btc' },
];

export function listSnapshot(events: Event[]): MarketListSnapshot {
  return { categories: [...CATEGORY_DISPLAY_ORDER], leagues: LEAGUES, events: events.map(card) };
}

export function searchSnapshot(events: Array<{ event: Event; league: string | null }>): MarketSearchSnapshot {
  return {
    categories: [...CATEGORY_DISPLAY_ORDER],
    leagues: LEAGUES,
    entries: events.map(({ event: e, league }) => ({
      text: [e.title, ...e.markets.map((m) => m.question)].join('\n').toLowerCase(),
      category: e.category,
      league,
      card: card(e),
    })),
  };
}

/** Every app started here, so a write can wait until the apps of its prefix have taken it in. */
const running = new Set<{ prefix: string; api: ApiServer }>();

async function syncApps(prefix: string): Promise<void> {
  await Promise.all([...running].filter((r) => r.prefix === prefix).map((r) => r.api.snapshots.sync()));
}

/** Writes (and announces) a snapshot as the worker's writer does; resolves once the apps of `prefix` have seen it. */
export async function writeSnapshot(
  redis: Redis,
  prefix: string,
  name: SnapshotName,
  payload: MarketListSnapshot | MarketSearchSnapshot | EventSnapshot | unknown,
  etag: string,
): Promise<void> {
  const tx = redis.multi();
  queueSnapshotWrites(tx, prefix, [{ name, body: JSON.stringify(payload), etag }], Date.now());
  await tx.exec();
  await syncApps(prefix);
}

/** Writes the feed-health hash; resolves once the apps of `prefix` have re-read it. */
export async function writeFeed(redis: Redis, prefix: string, connected: boolean, lastAt: number): Promise<void> {
  await redis.hset(redisKeys(prefix).feed, { market_connected: connected ? '1' : '0', market_last_at: String(lastAt) });
  await syncApps(prefix);
}

/** A Redis client configured as main.ts does (fail fast), connected before it is returned. */
export async function apiRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 1_000, commandTimeout: 1_000 });
  await new Promise<void>((resolve, reject) => {
    redis.once('ready', () => resolve());
    redis.once('error', reject);
  });
  return redis;
}

/** A logger that keeps its lines, so tests can assert what was logged. */
export function memoryLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

export interface RunningApp {
  base: string;
  server: Server;
  config: Config;
  api: ApiServer;
  close(): Promise<void>;
}

export async function startApp(options: {
  redis: Redis;
  env: Record<string, string>;
  logger?: Logger;
  clock?: () => number;
}): Promise<RunningApp> {
  const config = parseConfig({ LOG_LEVEL: 'silent', ...options.env });
  const logger = options.logger ?? pino({ level: 'silent' });
  const api = createApiServer({ config, redis: options.redis, logger, ...(options.clock ? { clock: options.clock } : {}) });
  const entry = { prefix: config.REDIS_PREFIX, api };
  running.add(entry);
  const { server } = api;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  // Serve once the snapshot subscription is up (a Redis that is away: at once, reading through).
  await Promise.race([api.snapshots.subscribed(), new Promise((r) => setTimeout(r, 2_000))]);
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    server,
    config,
    api,
    close: async () => {
      running.delete(entry);
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await api.stop();
    },
  };
}

/** A seeded prefix served by one app, and a second app over a prefix the worker never wrote to. */
export interface SeededApps {
  testRedis: TestRedis;
  /** The apps' own connection (fails fast, as the API's does). */
  redis: Redis;
  api: RunningApp;
  emptyApi: RunningApp;
}

/**
 * Starts what the read-API tests need: a test Redis prefix filled by `seed`, an app over it and an
 * app over an empty prefix (no rate limit to speak of), both over an empty database of their own (a
 * snapshot Redis lacks is looked up there before a 404: snapshots/on-demand.ts). Everything is
 * handed to `teardown`.
 */
export async function startSeededApps(
  teardown: AsyncDisposableStack,
  name: string,
  seed: (redis: Redis, prefix: string) => Promise<void>,
  options: { logger?: Logger; clock?: () => number } = {},
): Promise<SeededApps> {
  const testRedis = teardown.use(await createTestRedis(name));
  const emptyRedis = teardown.use(await createTestRedis(`${name}_empty`));
  const redis = teardown.adopt(await apiRedis(testRedis.url), (r) => r.disconnect());
  await seed(testRedis.redis, testRedis.prefix);
  const database = teardown.use(await createTestDatabase(name));
  const env = { RATE_LIMIT_PER_MINUTE: '100000', DATABASE_URL: database.url };
  const api = teardown.adopt(await startApp({ redis, env: { ...env, REDIS_PREFIX: testRedis.prefix }, ...options }), (a) => a.close());
  const emptyApi = teardown.adopt(await startApp({ redis, env: { ...env, REDIS_PREFIX: emptyRedis.prefix } }), (a) => a.close());
  return { testRedis, redis, api, emptyApi };
}
