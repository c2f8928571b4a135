import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '@pm/shared/logger';
import { historyPointSchema, liveMatchSchema } from '@pm/shared/api';
import { HISTORY_RANGES } from '@pm/shared/snapshots';
import { redisKeys } from '@pm/shared/redis';
import { sql } from '@pm/shared/db';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import { useFreshStores } from '../testing/stores.js';
import { builderSource } from '../testing/builder-source.js';
import { createSnapshotBuilder } from './builder.js';
import { createHistoryBuilder, type HistoryBuilder, type HistoryBuildStats } from './history.js';
import { downsample } from './history-buckets.js';
import { eventSnapshotSchema, insertFixture, readSnapshot, readStored, token, WEB_URL } from './test-fixture.js';

/**
 * History snapshots, change_24h and the live list, built from the test catalog with price_points
 * in a real Postgres and snapshots in a real Redis.
 */

let tdb: TestDatabase;
let tr: TestRedisPrefix;
let history: HistoryBuilder;
// On a 30-minute boundary, so bucket counts are exact. Each test starts here.
const START = 1_800_000_000_000;
let now = START;
const NOW_S = START / 1000;
const logger = createLogger('worker-history-test', { LOG_LEVEL: 'silent' });
const historySchema = z.object({ market_id: z.string(), range: z.enum(HISTORY_RANGES), points: z.array(historyPointSchema) });

/** First outcome of m1: 0.2 + a tenth of a cent per hour of age; its second outcome the complement. */
const firstChance = (t: number) => Math.round((0.2 + ((NOW_S - t) / 3600) * 0.0001) * 10_000) / 10_000;

async function insertPoints(tokenId: string, rows: Array<{ t: number; chance: number }>) {
  await tdb.db.query(sql`
    insert into price_points (token_id, t, chance)
    select ${tokenId}, to_timestamp(x.t), x.c
    from unnest(${rows.map((r) => r.t)}::float8[], ${rows.map((r) => r.chance)}::numeric[]) as x(t, c)
    on conflict do nothing
  `);
}

const readHistory = (marketId: string, range: string) =>
  readSnapshot(tr.redis, tr.prefix, `history:${marketId}:${range}`, historySchema);

const stores = useFreshStores('worker_history');

// Each test: the fixture and m1's series alone in Postgres, an empty Redis prefix, a new builder.
beforeEach(async () => {
  now = START;
  ({ tdb, tr } = stores);
  await insertFixture(tdb.db, tr.redis, tr.prefix);
  // m1: 40 days hourly, then the last day every minute; its second outcome moves the other way.
  const rows: Array<{ t: number; chance: number }> = [];
  for (let t = NOW_S - 40 * 86_400; t < NOW_S - 86_400; t += 3600) rows.push({ t, chance: firstChance(t) });
  for (let t = NOW_S - 86_400; t <= NOW_S - 60; t += 60) rows.push({ t, chance: firstChance(t) });
  await insertPoints(token('m1', 0), rows);
  await insertPoints(token('m1', 1), rows.map((r) => ({ t: r.t, chance: Math.round((1 - r.chance) * 10_000) / 10_000 })));
  history = createHistoryBuilder({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, clock: { now: () => now }, logger });
});

describe('history snapshots', () => {
  // Each starts after the first build.
  let stats: HistoryBuildStats;
  beforeEach(async () => {
    stats = await history.build();
  });

  it('the first build covers every open market: each range downsampled, ascending, first outcome only', async () => {
    // 10 markets of the 3 open events (5 + 1 + 4), 4 ranges each.
    expect(stats.built).toBe(40);

    const day = await readHistory('m1', '1d');
    expect(day.market_id).toBe('m1');
    // A day of minute points in 5-minute buckets: 288 buckets (the day-old point opens one more).
    expect(day.points.length).toBeGreaterThanOrEqual(288);
    expect(day.points.length).toBeLessThanOrEqual(289);
    const week = await readHistory('m1', '1w');
    const month = await readHistory('m1', '1m');
    const max = await readHistory('m1', 'max');
    // 6 days of hourly points (one per 30-minute bucket that has one) + 48 half-hours of the last day.
    expect(week.points.length).toBeGreaterThanOrEqual(6 * 24 + 48);
    expect(week.points.length).toBeLessThanOrEqual(6 * 24 + 49);
    expect(month.points.length).toBeGreaterThanOrEqual(240);
    expect(month.points.length).toBeLessThanOrEqual(241);
    expect(max.points.length).toBeGreaterThanOrEqual(40);
    expect(max.points.length).toBeLessThanOrEqual(41);
    // The first UTC day's last hourly point (buckets are aligned to the epoch, not to the first point).
    const firstDayEnd = (Math.floor((NOW_S - 40 * 86_400) / 86_400) + 1) * 86_400;
    expect(max.points[0]?.t).toBe(firstDayEnd - 3600);

    for (const [range, snap, bucket] of [
      ['1d', day, 300],
      ['1w', week, 1800],
      ['1m', month, 10_800],
      ['max', max, 86_400],
    ] as const) {
      const ts = snap.points.map((p) => p.t);
      expect(ts, range).toEqual([...ts].sort((a, b) => a - b));
      // one point per bucket, each the bucket's LAST point
      const buckets = ts.map((t) => Math.floor(t / bucket));
      expect(new Set(buckets).size, range).toBe(buckets.length);
      for (const p of snap.points) expect(p.chance, range).toBe(firstChance(p.t));
      // the latest point ends every range
      expect(ts.at(-1), range).toBe(NOW_S - 60);
    }
    // 1d starts a day back, 1w a week back
    expect(day.points[0]!.t).toBeGreaterThanOrEqual(NOW_S - 86_400);
    expect(week.points[0]!.t).toBeGreaterThanOrEqual(NOW_S - 7 * 86_400);
  });

  it('every range is exactly the rule of history-buckets.ts over irregular points: sub-second times, bucket edges, gaps, before the range, after now', async () => {
    // m2's first outcome: a seeded irregular series over 50 days (the rule's twin, `downsample`, in TypeScript).
    let seed = 7;
    const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
    const points = new Map<number, number>();
    for (let i = 0; i < 3_000; i++) {
      const t = NOW_S - Math.floor(rand() * 50 * 86_400) + (rand() < 0.3 ? Math.round(rand() * 1000) / 1000 : 0);
      points.set(t, Math.round(rand() * 10_000) / 10_000);
    }
    // On bucket edges of every range, one second before them, the edge of each range's start, and just after now.
    for (const edge of [300, 1800, 10_800, 86_400]) for (let k = 1; k <= 5; k++) for (const d of [0, -1, -0.001]) points.set(Math.floor(NOW_S / edge) * edge - k * edge + d, 0.5);
    for (const span of [86_400, 7 * 86_400, 30 * 86_400]) for (const d of [-1, 0, 0.5]) points.set(NOW_S - span + d, 0.25);
    points.set(NOW_S + 2.5, 0.75);
    const rows = [...points].map(([t, chance]) => ({ t, chance }));
    await insertPoints(token('m2', 0), rows);
    // The points are new: rebuild every range of m2 past the throttle, as a backfill does.
    await tr.redis.sadd(redisKeys(tr.prefix).backfilledHistory, 'm2');
    await history.build();
    for (const range of HISTORY_RANGES) {
      const built = await readHistory('m2', range);
      expect(built.points, range).toEqual(downsample(rows, range, NOW_S));
    }
  });

  it('a rebuild from the last bucket on gives what reading every point gives, as time and the ranges move on', async () => {
    let seed = 11;
    const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
    const chance = () => Math.round(rand() * 10_000) / 10_000;
    const all = new Map<number, number>();
    const add = async (given: Array<[number, number]>) => {
      // price_points keeps the first point of an instant (on conflict do nothing): so does the reference.
      const points: Array<[number, number]> = [];
      for (const [t, c] of given) {
        if (all.has(t)) continue;
        all.set(t, c);
        points.push([t, c]);
      }
      await insertPoints(token('m2', 0), points.map(([t, c]) => ({ t, chance: c })));
    };
    const expectWhole = async (label: string) => {
      const rows = [...all].map(([t, c]) => ({ t, chance: c }));
      for (const range of HISTORY_RANGES) expect((await readHistory('m2', range)).points, `${label} ${range}`).toEqual(downsample(rows, range, now / 1000));
    };
    // 40 days of irregular points, read whole (a backfill).
    await add(Array.from({ length: 2_000 }, () => [NOW_S - Math.floor(rand() * 40 * 86_400) + (rand() < 0.3 ? Math.round(rand() * 1000) / 1000 : 0), chance()]));
    await tr.redis.sadd(redisKeys(tr.prefix).backfilledHistory, 'm2');
    expect((await history.build()).incremental).toBe(0);
    await expectWhole('backfilled');

    // Rounds of new points, some written late (up to 100 s before the previous build), some on the
    // bucket edges of every range; between rounds from a minute to two days pass, so every range
    // is due and the starts of 1d, 1w and 1m move past buckets the previous build held.
    let builtAt = now / 1000;
    for (const [round, step] of [61, 600, 3_600, 2 * 86_400, 61, 86_400 + 7].entries()) {
      now += step * 1000;
      const nowS = now / 1000;
      const fresh: Array<[number, number]> = Array.from({ length: 40 }, () => [builtAt - 100 + rand() * (nowS - builtAt + 100), chance()]);
      // The last build held a point a second before it; one written late lands in the 5-minute bucket before that one.
      const lateBucket = Math.floor((builtAt - 1) / 300) * 300;
      if (lateBucket - 0.0005 >= builtAt - 100) fresh.push([lateBucket - 0.0005, chance()]);
      fresh.push([nowS - 1, chance()]);
      for (const edge of [300, 1800, 10_800, 86_400]) {
        const b = Math.floor(nowS / edge) * edge;
        if (b > builtAt - 100) fresh.push([b, chance()], [b - 0.001, chance()]);
      }
      await add(fresh);
      await tr.redis.sadd(redisKeys(tr.prefix).dirtyHistory, 'm2');
      const stats = await history.build();
      expect(stats.built, `round ${round}`).toBe(4);
      expect(stats.incremental, `round ${round}`).toBe(4);
      await expectWhole(`round ${round}`);
      builtAt = nowS;
    }

    // A snapshot Redis lost (or one another process wrote) is not a base: that range is read whole.
    await tr.redis.del(redisKeys(tr.prefix).snapshot('history:m2:1w'));
    await tr.redis.hset(redisKeys(tr.prefix).snapshot('history:m2:1m'), 'etag', '"someone-else"');
    now += 61_000;
    await add([[now / 1000 - 5, 0.5]]);
    await tr.redis.sadd(redisKeys(tr.prefix).dirtyHistory, 'm2');
    expect(await history.build()).toMatchObject({ built: 4, incremental: 2 });
    await expectWhole('after losing two snapshots');
  });

  it('a market with no points gets an empty history', async () => {
    expect((await readHistory('m5', 'max')).points).toEqual([]);
  });

  it('new points are picked up when marked, 1d within 10 s and the other ranges at most once a minute', async () => {
    await insertPoints(token('m1', 0), [{ t: NOW_S + 5, chance: 0.9 }]);
    await tr.redis.sadd(redisKeys(tr.prefix).dirtyHistory, 'm1');
    now += 1_000;
    expect((await history.build()).built).toBe(0);
    expect((await readHistory('m1', '1d')).points.at(-1)?.chance).not.toBe(0.9);

    now += 9_000;
    expect((await history.build()).built).toBe(1);
    expect((await readHistory('m1', '1d')).points.at(-1)).toEqual({ t: NOW_S + 5, chance: 0.9 });
    expect((await readHistory('m1', 'max')).points.at(-1)?.chance).not.toBe(0.9);

    now += 50_000;
    expect((await history.build()).built).toBe(3);
    expect((await readHistory('m1', 'max')).points.at(-1)).toEqual({ t: NOW_S + 5, chance: 0.9 });
    // Nothing pending any more: later builds rebuild nothing.
    now += 120_000;
    expect((await history.build()).built).toBe(0);
  });

  it('after Redis lost them, rebuildAll writes every range again, a resolved market and a quiet one included', async () => {
    await tdb.db.query(sql`update markets set closed = true, resolved_outcome_index = 0, resolved_at = to_timestamp(${NOW_S - 30}) where id = 'm1'`);
    now += 1_000;
    await history.build(); // the resolution: m1 ends at it
    const before = await Promise.all(HISTORY_RANGES.map((r) => readHistory('m1', r)));
    expect(before[0]!.points.at(-1)).toEqual({ t: NOW_S - 30, chance: 1 });
    const names = [...HISTORY_RANGES.map((r) => `history:m1:${r}` as const), 'history:m10:1d' as const];
    const lose = () => tr.redis.del(...names.map((n) => redisKeys(tr.prefix).snapshot(n)));
    await lose();
    now += 120_000;
    await history.build();
    // Nothing marks them again (m1 is resolved, m10 has no points): they stay missing.
    expect(await readStored(tr.redis, tr.prefix, 'history:m1:1d')).toBeNull();
    history.rebuildAll();
    now += 1_000;
    await history.build();
    expect(await Promise.all(HISTORY_RANGES.map((r) => readHistory('m1', r)))).toEqual(before);
    expect((await readHistory('m10', '1d')).points).toEqual([]);
  });

  it('a market just backfilled is rebuilt at once in every range, past the throttle', async () => {
    await insertPoints(token('m10', 0), [{ t: NOW_S - 30 * 86_400, chance: 0.4 }]);
    await tr.redis.sadd(redisKeys(tr.prefix).dirtyHistory, 'm10');
    now += 120_000;
    expect((await history.build()).built).toBe(4); // m10 not built for two minutes: every range due
    await insertPoints(token('m10', 0), [{ t: NOW_S - 20 * 86_400, chance: 0.45 }]);
    await tr.redis.sadd(redisKeys(tr.prefix).backfilledHistory, 'm10');
    now += 1_000;
    expect((await history.build()).built).toBe(4);
    expect((await readHistory('m10', 'max')).points.map((p) => p.chance)).toEqual([0.4, 0.45]);
  });
});

describe('event snapshots: change_24h and the live list', () => {
  it('change_24h is the first outcome now minus its point at or before 24 h ago; the catalog figure without history', async () => {
    // m10: a point 25 h ago (0.5) and one 23 h ago (0.7): the one at or before 24 h ago counts.
    await insertPoints(token('m10', 0), [
      { t: now / 1000 - 25 * 3600, chance: 0.5 },
      { t: now / 1000 - 23 * 3600, chance: 0.7 },
    ]);
    const builder = createSnapshotBuilder(builderSource(tdb, tr, () => now));
    await builder.build({ full: true });
    const btc = (await readSnapshot(tr.redis, tr.prefix, 'event:btc-100k', eventSnapshotSchema)).event;
    expect(btc.markets[0]?.change_24h).toBe(0.12); // 0.62 live − 0.5
    const soccer = (await readSnapshot(tr.redis, tr.prefix, 'event:ars-che', eventSnapshotSchema)).event;
    const m1 = soccer.markets.find((m) => m.id === 'm1');
    // m1's first outcome 24 h ago per the fixture series; live chance 0.25.
    const dayAgo = firstChance(Math.floor(now / 1000 - 86_400 - ((now / 1000 - 86_400 - NOW_S) % 60)));
    expect(m1?.change_24h).toBeCloseTo(0.25 - dayAgo, 4);
    // m4 has no history: the catalog's oneDayPriceChange; m3 neither: 0.
    expect(soccer.markets.find((m) => m.id === 'm4')?.change_24h).toBe(-0.02);
    expect(soccer.markets.find((m) => m.id === 'm3')?.change_24h).toBe(0);
  });

  it('the live list shows the match in play with home, draw and away from its moneyline markets', async () => {
    await createSnapshotBuilder(builderSource(tdb, tr, () => now)).build({ full: true });
    const stored = await readStored(tr.redis, tr.prefix, 'live');
    expect(stored).not.toBeNull();
    const { matches } = z.object({ matches: z.array(liveMatchSchema) }).parse(JSON.parse(stored!.body));
    expect(matches.map((m) => m.slug)).toEqual(['ars-che']);
    expect(matches[0]).toMatchObject({ league: 'epl', score: '1-0', period: '1H', clock: '23', markets: 5, url: `${WEB_URL}/e/ars-che` });
    expect(matches[0]?.result).toEqual([
      { label: 'Arsenal', chance: 0.25, market_id: 'm1' },
      { label: 'Draw', chance: 0.3, market_id: 'm3' },
      { label: 'Chelsea', chance: 0.44, market_id: 'm4' },
    ]);

    // The game ends: the match leaves the list at the next build.
    await tdb.db.query(sql`update games set live = false, ended = true, updated_at = now() where game_id = 'g1'`);
    const builder = createSnapshotBuilder(builderSource(tdb, tr, () => now));
    await builder.build({ full: true });
    expect(JSON.parse((await readStored(tr.redis, tr.prefix, 'live'))!.body)).toEqual({ matches: [] });
  });
});

describe('a resolved market (DESIGN.md "Resolution is data")', () => {
  it('ends its history at resolved_at with the final price, dropping what the book quoted after', async () => {
    // m2: a point every 10 minutes over the last 6 hours, then it resolves 2 hours ago for its
    // second outcome (the first outcome's final price is 0), while its book kept quoting.
    const resolvedAt = NOW_S - 7_200 + 17;
    const rows = Array.from({ length: 36 }, (_, i) => ({ t: NOW_S - 21_600 + i * 600, chance: 0.6 }));
    await insertPoints(token('m2', 0), rows);
    await tdb.db.query(sql`update markets set resolved_outcome_index = 1, resolved_at = to_timestamp(${resolvedAt}), closed = true where id = 'm2'`);
    await history.build();
    for (const range of ['1d', '1w', 'max'] as const) {
      const { points } = await readHistory('m2', range);
      expect(points.at(-1), range).toEqual({ t: resolvedAt, chance: 0 });
      expect(points.slice(0, -1).every((p) => p.t < resolvedAt && p.chance === 0.6), range).toBe(true);
    }
    // The event page says how it resolved.
    const builder = createSnapshotBuilder(builderSource(tdb, tr, () => now));
    await builder.build({ full: true });
    const event = (await readSnapshot(tr.redis, tr.prefix, 'event:ars-che', eventSnapshotSchema)).event;
    expect(event.markets.find((m) => m.id === 'm2')).toMatchObject({ resolved_outcome: 1, resolved_at: new Date(resolvedAt * 1000).toISOString() });
    expect(event.markets.find((m) => m.id === 'm1')).toMatchObject({ resolved_outcome: null, resolved_at: null });
  });
});
