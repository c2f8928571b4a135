import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLogger } from '@pm/shared/logger';
import { historyPointSchema, liveMatchSchema } from '@pm/shared/api';
import { HISTORY_RANGES } from '@pm/shared/snapshots';
import { redisKeys } from '@pm/shared/redis';
import { sql } from '@pm/shared/db';
import { HISTORY_RANGE_TIERS, insertRawPoints, readCandles, runRollup, seriesIds, storeBackfill } from '@pm/shared/history';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import { useFreshStores } from '../testing/stores.js';
import { builderSource } from '../testing/builder-source.js';
import { createSnapshotBuilder } from './builder.js';
import { createHistoryBuilder, type HistoryBuilder, type HistoryBuildStats } from './history.js';
import { eventSnapshotSchema, insertFixture, readSnapshot, readStored, token, WEB_URL } from './test-fixture.js';

/**
 * History snapshots, change_24h and the live list, built from the test catalog with price history
 * in the tiers (raw points and candles) of a real Postgres and snapshots in a real Redis.
 */

let tdb: TestDatabase;
let tr: TestRedisPrefix;
let history: HistoryBuilder;
// On a 30-minute boundary, so bucket counts are exact. Each test starts here.
const START = 1_800_000_000_000;
let now = START;
const NOW_S = START / 1000;
const DAY = 86_400;
const logger = createLogger('worker-history-test', { LOG_LEVEL: 'silent' });
const historySchema = z.object({ market_id: z.string(), range: z.enum(HISTORY_RANGES), points: z.array(historyPointSchema) });

/** First outcome of m1: 0.2 + a tenth of a cent per hour of age; its second outcome the complement. */
const firstChance = (t: number) => Math.round((0.2 + ((NOW_S - t) / 3600) * 0.0001) * 10_000) / 10_000;

async function seriesOf(tokenId: string): Promise<number> {
  return (await seriesIds(tdb.db, [tokenId])).get(tokenId) as number;
}

/** Live points of a token, as the recorder writes them (raw). */
async function insertPoints(tokenId: string, rows: Array<{ t: number; chance: number }>) {
  const series = await seriesOf(tokenId);
  await insertRawPoints(tdb.db, rows.map((r) => ({ series, t: Math.floor(r.t), chance: r.chance })));
}

const readHistory = (marketId: string, range: string) =>
  readSnapshot(tr.redis, tr.prefix, `history:${marketId}:${range}`, historySchema);

const stores = useFreshStores('worker_history');

// Each test: the fixture and m1's series alone in Postgres, an empty Redis prefix, a new builder.
beforeEach(async () => {
  now = START;
  ({ tdb, tr } = stores);
  await insertFixture(tdb.db, tr.redis, tr.prefix);
  // m1: 40 days backfilled hourly (the 1h tier, and 1d from it), then the last day live every minute (raw).
  const hourly: Array<{ t: number; chance: number }> = [];
  for (let t = NOW_S - 40 * DAY; t < NOW_S - DAY; t += 3600) hourly.push({ t, chance: firstChance(t) });
  const minutes: Array<{ t: number; chance: number }> = [];
  for (let t = NOW_S - DAY; t <= NOW_S - 60; t += 60) minutes.push({ t, chance: firstChance(t) });
  await storeBackfill(tdb.db, await seriesOf(token('m1', 0)), 3600, hourly);
  await storeBackfill(tdb.db, await seriesOf(token('m1', 0)), 300, hourly.filter((p) => p.t >= NOW_S - 7 * DAY));
  await insertPoints(token('m1', 0), minutes);
  history = createHistoryBuilder({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, clock: { now: () => now }, logger });
});

describe('history snapshots', () => {
  // Each starts after the first build.
  let stats: HistoryBuildStats;
  beforeEach(async () => {
    stats = await history.build();
  });

  it('the first build covers every open market: each range from its tier, ascending, one point per bucket', async () => {
    // 10 markets of the 3 open events (5 + 1 + 4), 4 ranges each.
    expect(stats.built).toBe(40);
    const day = await readHistory('m1', '1d');
    expect(day.market_id).toBe('m1');
    // A day of minute points in 5-minute buckets.
    expect(day.points.length).toBe(289); // and the current bucket, carried forward
    expect((await readHistory('m1', '1w')).points.length).toBe(7 * 24 + 1); // hourly: the tier backfilled history lands in
    expect((await readHistory('m1', '1m')).points.length).toBe(30 * 8); // NOW_S is not on a 3-hour boundary: the first bucket starts before the range
    expect((await readHistory('m1', 'max')).points.length).toBe(41);
    for (const range of HISTORY_RANGES) {
      const { points } = await readHistory('m1', range);
      const { bucket } = HISTORY_RANGE_TIERS[range];
      const ts = points.map((p) => p.t);
      expect(ts, range).toEqual([...ts].sort((a, b) => a - b));
      expect(ts.every((t) => t % bucket === 0), range).toBe(true);
      expect(new Set(ts).size, range).toBe(ts.length);
      // The latest chance ends every range.
      expect(points.at(-1)?.chance, range).toBe(firstChance(NOW_S - 60));
    }
  });

  it('a history point is the close of the candle of the same bucket, in every range', async () => {
    const series = await seriesOf(token('m1', 0));
    for (const range of HISTORY_RANGES) {
      const tier = HISTORY_RANGE_TIERS[range];
      const candles = (await readCandles(tdb.db, { series: [series], step: tier.step, bucket: tier.bucket, start: tier.span === null ? 0 : NOW_S - tier.span, end: NOW_S + 1, now: NOW_S })).get(series) ?? [];
      const closes = new Map(candles.map((c) => [c.t, c.close]));
      const { points } = await readHistory('m1', range);
      expect(points.length, range).toBeGreaterThan(0);
      for (const p of points) expect(p.chance, `${range} ${p.t}`).toBe(closes.get(p.t));
    }
  });

  it('the same after the rollup moved the last day into the tiers', async () => {
    const before = await Promise.all(HISTORY_RANGES.map((r) => readHistory('m1', r)));
    expect((await runRollup(tdb.db, { now: NOW_S + 120 })).slices).toBe(24);
    history.rebuildAll();
    await history.build();
    expect(await Promise.all(HISTORY_RANGES.map((r) => readHistory('m1', r)))).toEqual(before);
  });

  it('max of a three-year-old market is a few hundred points from the 1d tier', async () => {
    const days = Array.from({ length: 3 * 365 }, (_, i) => ({ t: NOW_S - (3 * 365 - i) * DAY, chance: 0.3 + (i % 50) / 100 }));
    await storeBackfill(tdb.db, await seriesOf(token('m2', 0)), 86_400, days);
    await tr.redis.sadd(redisKeys(tr.prefix).backfilledHistory, 'm2');
    now += 1_000;
    await history.build();
    const { points } = await readHistory('m2', 'max');
    expect(points.length).toBeGreaterThan(100);
    expect(points.length).toBeLessThan(300);
    expect(points.at(-1)?.chance).toBe(days.at(-1)?.chance);
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
    expect((await readHistory('m1', '1d')).points.at(-1)).toEqual({ t: NOW_S, chance: 0.9 });
    expect((await readHistory('m1', 'max')).points.at(-1)?.chance).not.toBe(0.9);

    now += 50_000;
    expect((await history.build()).built).toBe(3);
    expect((await readHistory('m1', 'max')).points.at(-1)).toEqual({ t: Math.floor(NOW_S / DAY) * DAY, chance: 0.9 });
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
    await insertPoints(token('m10', 0), [{ t: NOW_S - 60, chance: 0.4 }]);
    await tr.redis.sadd(redisKeys(tr.prefix).dirtyHistory, 'm10');
    now += 120_000;
    expect((await history.build()).built).toBe(4); // m10 not built for two minutes: every range due
    await storeBackfill(tdb.db, await seriesOf(token('m10', 0)), 86_400, [{ t: NOW_S - 20 * DAY, chance: 0.45 }]);
    await tr.redis.sadd(redisKeys(tr.prefix).backfilledHistory, 'm10');
    now += 1_000;
    expect((await history.build()).built).toBe(4);
    const max = (await readHistory('m10', 'max')).points;
    expect(max[0]).toEqual({ t: Math.floor((NOW_S - 20 * DAY) / DAY) * DAY, chance: 0.45 });
    expect(max.at(-1)?.chance).toBe(0.4);
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
    const dayAgo = firstChance(NOW_S - 86_400);
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

describe('a resolved market (docs/design.md "Resolution is data")', () => {
  it('ends its history at resolved_at with the final price, dropping what the book quoted after', async () => {
    // m2: a point every 10 minutes over the last 6 hours, then it resolves 2 hours ago for its
    // second outcome (the first outcome's final price is 0), while its book kept quoting.
    const resolvedAt = NOW_S - 7_200 + 17;
    const rows = Array.from({ length: 36 }, (_, i) => ({ t: NOW_S - 21_600 + i * 600, chance: 0.6 }));
    await insertPoints(token('m2', 0), rows);
    const before = await history.build();
    await tdb.db.query(sql`update markets set resolved_outcome_index = 1, resolved_at = to_timestamp(${resolvedAt}), closed = true where id = 'm2'`);
    const after = await history.build();
    // Its history is final: the builder keeps nothing of it (the exchange resolves thousands of markets a day).
    expect(after.held).toBe(before.held - 1);
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

describe('a series its range tier barely holds', () => {
  it('is drawn from the next coarser tier: 1d of a market with only an hourly past shows its hours', async () => {
    // m20: an hourly past only (as the exchange answers for a market it resolved), nothing at 5 minutes.
    const hourly: Array<{ t: number; chance: number }> = [];
    for (let t = NOW_S - 3 * DAY; t < NOW_S; t += 3600) hourly.push({ t, chance: 0.4 });
    await storeBackfill(tdb.db, await seriesOf(token('m20', 0)), 3600, hourly);
    await history.build();
    const day = await readHistory('m20', '1d');
    expect(day.points.length).toBeGreaterThanOrEqual(24);
    expect(day.points.every((p) => p.t % 3600 === 0 && p.chance === 0.4)).toBe(true);
    // m1, which the 5-minute tier holds, keeps its 5-minute buckets.
    expect((await readHistory('m1', '1d')).points.length).toBe(289);
  });
});
