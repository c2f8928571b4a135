import type { Redis } from 'ioredis';
import { HISTORY_RANGES, type HistoryRange, type HistorySnapshot } from '@pm/shared/snapshots';
import { redisKeys, snapshotEtag, takeSets, type SnapshotName } from '@pm/shared/redis';
import { composeCandles, HISTORY_RANGE_TIERS, MAX_DAILY_POINTS, readCandles } from '@pm/shared/history';
import type { Logger } from '@pm/shared/logger';
import { sql, type Db, type Markets } from '@pm/shared/db';
import type { HistoryPoint } from '@pm/shared/api';
import type { Clock } from './builder.js';
import { dueRanges, endAtResolution, type HistoryEnd } from './history-buckets.js';
import { createSnapshotWriter, type SnapshotEntry } from './writer.js';
import { closedExpiry, createClosedEvents } from '../retire/closed-expiry.js';

/**
 * Builds the `history:<marketId>:<range>` snapshots from the candle tiers (docs/history.md): 1d
 * from 5m candles, 1w from 1h candles, 1m from 1h candles in 3-hour buckets,
 * max from 1d candles (weeks past 500 days). A point is the close of its bucket's candle, at the
 * bucket's start, gaps carried forward; a resolved market ends at its final price at resolved_at.
 *
 * The ingestor SADDs a market id to `dirtyHistory` whenever it inserted live points for the market's
 * first-outcome token, and to `backfilledHistory` when it backfilled its past (rebuilt at once). Each
 * build pops that set into an in-memory pending list and rebuilds only the ranges that are due
 * (history-buckets.ts REBUILD_EVERY_MS: a busy market is rebuilt at most every 10 s for 1d and once a
 * minute for the other ranges). The first build covers every market of every open event.
 * A closed event's histories are written with an expiry (retire/closed-expiry.ts); once its
 * retention has passed, only when asked for (the API marks its markets in `backfilledHistory`).
 *
 * A range of a whole batch of markets is one candle read (a few index range scans: the stored
 * tier, and the raw points the rollup has not reached), a few hundred candles per market.
 */

export interface HistoryBuildStats {
  /** Market-range snapshots built. */
  built: number;
  /** Snapshots whose body changed and were written. */
  written: number;
  /** Markets still waiting (throttled, or beyond this build's batch). */
  pending: number;
  /** Markets this builder keeps anything for: open ones, and resolved ones not yet built to their end. */
  held: number;
}

export interface HistoryBuilder {
  build(): Promise<HistoryBuildStats>;
  /**
   * Redis lost its contents (the reconciler saw its epoch key gone): the next builds write every
   * range again, of every open event's markets and of every resolved market, as at start. Without
   * it a snapshot whose body does not change again (a resolved market's chart) stayed missing: the
   * writer remembers having written it, and the API showed the market with no points.
   */
  rebuildAll(): void;
}

export interface HistoryBuilderDeps {
  db: Db;
  redis: Redis;
  prefix: string;
  clock: Clock;
  logger: Logger;
  /** Markets per range per build (bounds one statement's work). Default 250. */
  batchSize?: number;
  /** CLOSED_RETENTION_HOURS in ms (retire/closed-expiry.ts). Default 24 h. */
  retentionMs?: number;
}

/** How far back each look for newly resolved markets reaches behind the last resolved_at seen. */
const RESOLVED_LOOKBACK_MS = 60_000;
/** A resolved market's end: its id, resolved_at as Unix s (float8) and its first outcome's final chance (float8). */
type EndRow = Pick<Markets, 'id'> & { t: number; chance: number | null };
export function createHistoryBuilder(deps: HistoryBuilderDeps): HistoryBuilder {
  const keys = redisKeys(deps.prefix);
  const batchSize = deps.batchSize ?? 250;
  const writer = createSnapshotWriter({ redis: deps.redis, prefix: deps.prefix, now: () => deps.clock.now() });
  const closedEvents = createClosedEvents(deps.db, deps.retentionMs ?? 24 * 3_600_000);
  /** Market → ranges whose points changed since they were last built. */
  const pending = new Map<string, Set<HistoryRange>>();
  const lastBuilt = new Map<string, Partial<Record<HistoryRange, number>>>();
  /** Market → the series of its first outcome's token (fixed for the market's life, once it has one). */
  const firstSeries = new Map<string, number>();
  /** Markets that have a first outcome (those without one have no history to show). */
  const hasOutcome = new Set<string>();
  let started = false;
  /** The latest resolved_at seen: markets resolved after it get their history's end point at once. */
  let resolvedSince: Date | undefined;
  /** Markets taken by newlyResolved in the last look-back window (id → resolved_at ms). */
  const resolvedTaken = new Map<string, number>();
  let chain: Promise<unknown> = Promise.resolve();

  const markAll = (ids: Iterable<string>) => {
    for (const id of ids) pending.set(id, new Set(HISTORY_RANGES));
  };
  const nameOf = (marketId: string, range: HistoryRange): SnapshotName => `history:${marketId}:${range}`;

  /** Take both sets in one atomic step: markets with new points, and markets just backfilled. */
  async function popDirty(): Promise<{ dirty: string[]; backfilled: string[] }> {
    const { members } = await takeSets(deps.redis, [keys.dirtyHistory, keys.backfilledHistory]);
    return { dirty: members[0] ?? [], backfilled: members[1] ?? [] };
  }

  /** Every market of every open event (the first build). inputs: none. outputs: market ids. */
  async function openMarkets(): Promise<string[]> {
    const rows: Array<{ id: string }> = await deps.db.query(sql`
      select m.id from markets m join events e on e.id = m.event_id where e.closed = false
    `);
    return rows.map((r) => r.id);
  }

  /**
   * Markets resolved since the last look (all resolved ones the first time, but those of events
   * whose retention has passed: their keys were retired, and they are built again only when asked
   * for, with an expiry): their ranges are
   * rebuilt at once, whatever the throttle, so the history ends at the resolution without waiting
   * for a point that may never come. resolved_at is the resolving transaction's start, so one that
   * commits late can carry a time below the watermark: each look reaches a minute back and skips
   * the ids it already took. inputs: the watermark, now. outputs: market ids; the watermark moves.
   */
  async function newlyResolved(now: number): Promise<string[]> {
    const since = resolvedSince === undefined ? sql`` : sql`and m.resolved_at > ${new Date(resolvedSince.getTime() - RESOLVED_LOOKBACK_MS)}`;
    const retiredBefore = new Date(now - closedEvents.retentionMs);
    const rows: Array<{ id: string; resolved_at: Date }> = await deps.db.query(sql`
      select m.id, m.resolved_at from markets m join events e on e.id = m.event_id
      where m.resolved_at is not null ${since} and not (e.closed and e.updated_at <= ${retiredBefore})
      order by m.resolved_at
    `);
    const fresh = rows.filter((r) => !resolvedTaken.has(r.id));
    for (const r of rows) resolvedTaken.set(r.id, r.resolved_at.getTime());
    const last = rows.at(-1);
    if (last && (resolvedSince === undefined || last.resolved_at > resolvedSince)) resolvedSince = last.resolved_at;
    resolvedSince ??= new Date(0);
    const floor = resolvedSince.getTime() - 2 * RESOLVED_LOOKBACK_MS;
    for (const [id, at] of resolvedTaken) if (at < floor) resolvedTaken.delete(id);
    return fresh.map((r) => r.id);
  }

  /**
   * inputs: market ids. outputs: for those resolved, when (Unix s) and their first outcome's final
   * chance: 1 or 0 by the winner, a voided market's final catalog price (none known: no end point).
   */
  async function resolutionsOf(marketIds: string[]): Promise<Map<string, HistoryEnd>> {
    if (marketIds.length === 0) return new Map();
    const rows: EndRow[] = await deps.db.query(sql`
      select m.id, extract(epoch from m.resolved_at)::float8 as t,
             case when not m.voided and m.resolved_outcome_index is not null then (m.resolved_outcome_index = 0)::int::float8
                  else o.catalog_price::float8 end as chance
      from markets m left join outcomes o on o.market_id = m.id and o.outcome_index = 0
      where m.id = any(${marketIds}::text[]) and m.resolved_at is not null
    `);
    const ends = new Map<string, HistoryEnd>();
    for (const r of rows) {
      if (r.chance !== null) ends.set(r.id, { t: r.t, chance: r.chance });
    }
    return ends;
  }

  /**
   * inputs: market ids. outputs: none; `hasOutcome` and `firstSeries` learn the markets' first
   * outcome and its series (a token with no point yet has no series: asked again next time).
   */
  async function resolveSeries(marketIds: string[]): Promise<void> {
    const missing = marketIds.filter((id) => !firstSeries.has(id));
    if (missing.length === 0) return;
    const rows: Array<{ market_id: string; series: number | null }> = await deps.db.query(sql`
      select o.market_id, s.id as series
      from outcomes o left join series s on s.token_id = o.token_id
      where o.market_id = any(${missing}::text[]) and o.outcome_index = 0
    `);
    for (const r of rows) {
      hasOutcome.add(r.market_id);
      if (r.series !== null) firstSeries.set(r.market_id, r.series);
    }
  }

  /** The tier a range falls back to when its own holds next to nothing of a series: step → coarser step. */
  const COARSER_STEP: Readonly<Record<number, number>> = { 300: 3_600, 3_600: 86_400 };

  /** inputs: markets with a series, the range, now (Unix s). outputs: market → its points. */
  async function pointsOf(marketIds: readonly string[], range: HistoryRange, nowSeconds: number, ends: Map<string, HistoryEnd>): Promise<Map<string, HistoryPoint[]>> {
    const tier = HISTORY_RANGE_TIERS[range];
    const seriesEnds = new Map<number, HistoryEnd>();
    for (const id of marketIds) {
      const end = ends.get(id);
      if (end !== undefined) seriesEnds.set(firstSeries.get(id) as number, end);
    }
    const read = (series: readonly number[], step: number, bucket: number) =>
      readCandles(deps.db, {
        series,
        step,
        bucket,
        start: tier.span === null ? 0 : nowSeconds - tier.span,
        end: nowSeconds + 1,
        now: nowSeconds,
        ends: seriesEnds,
      });
    const candles = await read(marketIds.map((id) => firstSeries.get(id) as number), tier.step, tier.bucket);
    // A series the range's tier barely holds (a market resolved before its fine past was fetched: the
    // exchange answers a resolved market only at coarse fidelity) is drawn from the next coarser tier
    // instead, when that holds more of the range: fewer, honest points rather than one.
    const coarser = COARSER_STEP[tier.step];
    const thin = marketIds.map((id) => firstSeries.get(id) as number).filter((s) => (candles.get(s)?.length ?? 0) < 2);
    if (coarser !== undefined && thin.length > 0) {
      const again = await read(thin, coarser, Math.max(coarser, tier.bucket));
      for (const s of thin) if ((again.get(s)?.length ?? 0) > (candles.get(s)?.length ?? 0)) candles.set(s, again.get(s)!);
    }
    const out = new Map<string, HistoryPoint[]>();
    for (const id of marketIds) {
      let list = candles.get(firstSeries.get(id) as number) ?? [];
      if (range === 'max' && list.length > MAX_DAILY_POINTS) list = composeCandles(list, 7 * 86_400);
      // The partial first bucket of a range that starts mid-bucket is not shown: it reaches before the range.
      const start = tier.span === null ? -Infinity : nowSeconds - tier.span;
      out.set(id, list.filter((c) => c.t >= start || tier.span === null).map((c) => ({ t: c.t, chance: c.close })));
    }
    return out;
  }

  let lost = false;

  async function run(): Promise<HistoryBuildStats> {
    const now = deps.clock.now();
    if (lost) {
      lost = false;
      writer.forget();
      lastBuilt.clear();
      started = false;
      resolvedSince = undefined;
      resolvedTaken.clear();
    }
    const popped = await popDirty();
    markAll(popped.dirty);
    markAll(popped.backfilled);
    // A backfill is a one-off that changes the whole chart: rebuild its ranges now, past the throttle,
    // and whole (a range never built, or not since, has no base below).
    for (const id of popped.backfilled) lastBuilt.delete(id);
    if (!started) {
      markAll(await openMarkets());
      started = true;
    }
    const resolved = await newlyResolved(now);
    markAll(resolved);
    for (const id of resolved) lastBuilt.delete(id);
    // Per range, the markets due now (pending for that range and past its throttle), a batch at most.
    const work = new Map<HistoryRange, string[]>(HISTORY_RANGES.map((r) => [r, []]));
    for (const [marketId, ranges] of pending) {
      for (const range of dueRanges(lastBuilt.get(marketId) ?? {}, now)) {
        const list = work.get(range);
        if (ranges.has(range) && list !== undefined && list.length < batchSize) list.push(marketId);
      }
    }
    const working = [...new Set([...work.values()].flat())];
    await resolveSeries(working);
    const ends = await resolutionsOf(working);
    // A closed event's histories expire (retire/closed-expiry.ts).
    const closedAt = await closedEvents.marketsClosedAt(working);

    const nowSeconds = Math.floor(now / 1000);
    const entries: SnapshotEntry[] = [];
    const done: Array<[string, HistoryRange]> = [];
    for (const [range, marketIds] of work) {
      // A market without outcomes has no history to show: drop it from the pending list.
      for (const id of marketIds) if (!hasOutcome.has(id)) done.push([id, range]);
      const shown = marketIds.filter((id) => hasOutcome.has(id));
      if (shown.length === 0) continue;
      const points = await pointsOf(
        shown.filter((id) => firstSeries.has(id)),
        range,
        nowSeconds,
        ends,
      );
      for (const marketId of shown) {
        const recorded = points.get(marketId) ?? [];
        const end = ends.get(marketId);
        const payload: HistorySnapshot = { market_id: marketId, range, points: end ? endAtResolution(recorded, range, end) : recorded };
        const body = JSON.stringify(payload);
        const at = closedAt.get(marketId);
        entries.push({ name: nameOf(marketId, range), body, etag: snapshotEtag(body), ...(at === undefined ? {} : { expireAtMs: closedExpiry(at, now, closedEvents.retentionMs) }) });
        done.push([marketId, range]);
      }
    }
    const { written } = entries.length > 0 ? await writer.write(entries) : { written: 0 };
    // Only after the write: a failed build leaves its markets pending for the next one.
    for (const [marketId, range] of done) {
      const ranges = pending.get(marketId);
      ranges?.delete(range);
      if (ranges?.size === 0) pending.delete(marketId);
      lastBuilt.set(marketId, { ...lastBuilt.get(marketId), [range]: now });
    }
    // A resolved market's history is final once every range is built: what this process holds for it
    // goes (a late point would only make it read whole again), or every market ever resolved stays.
    for (const marketId of ends.keys()) {
      if (pending.has(marketId)) continue;
      lastBuilt.delete(marketId);
      // Read again from Postgres if the market is ever built again (resolveSeries).
      firstSeries.delete(marketId);
      hasOutcome.delete(marketId);
    }
    return { built: entries.length, written, pending: pending.size, held: new Set([...pending.keys(), ...lastBuilt.keys(), ...hasOutcome]).size };
  }

  return {
    build() {
      const next = chain.then(run);
      chain = next.catch(() => {});
      return next;
    },
    rebuildAll() {
      lost = true;
    },
  };
}

export interface HistoryLoop {
  /**
   * Build now rather than at the next tick (after the build in progress, if any): a request is
   * waiting for a history (the API asked for a retired closed event's snapshots).
   */
  nudge(): void;
  /** Stop the timer and wait for the build in progress. */
  stop(): Promise<void>;
}

/**
 * Run `builder.build()` every `everyMs` (default 2 s), one at a time, off the event snapshots'
 * path: a history downsample may take a few hundred ms and must never delay live prices.
 */
export function startHistoryLoop(builder: HistoryBuilder, opts: { logger: Logger; everyMs?: number }): HistoryLoop {
  let running: Promise<void> | undefined;
  let stopped = false;
  /** Nudged while a build ran: another follows it. */
  let again = false;
  const tick = () => {
    if (stopped) return;
    if (running) return;
    again = false;
    running = builder
      .build()
      .then((stats) => {
        if (stats.built > 0) opts.logger.debug(stats, 'history snapshots built');
      })
      .catch((err: unknown) => opts.logger.warn({ err }, 'history snapshot build failed'))
      .finally(() => {
        running = undefined;
        if (again) tick();
      });
  };
  tick();
  const timer = setInterval(tick, opts.everyMs ?? 2_000);
  timer.unref();
  return {
    nudge() {
      if (running) again = true;
      else tick();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
