import type { Redis } from 'ioredis';
import { HISTORY_RANGES, HISTORY_RANGE_WINDOWS, type HistoryRange, type HistorySnapshot } from '@pm/shared/snapshots';
import { redisKeys, snapshotEtag, takeSets, type SnapshotName } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import { anyOf, sql, tables, type Db, type Markets, type PricePoints } from '@pm/shared/db';
import type { HistoryPoint } from '@pm/shared/api';
import type { Clock } from './builder.js';
import { bucketOf, dueRanges, endAtResolution, rangeStart, roundChance, type HistoryEnd } from './history-buckets.js';
import { createSnapshotWriter, type SnapshotEntry } from './writer.js';

/**
 * Builds the `history:<marketId>:<range>` snapshots from `price_points`.
 *
 * The ingestor SADDs a market id to `dirtyHistory` whenever it inserted live points for the market's
 * first-outcome token, and to `backfilledHistory` when it backfilled its past (rebuilt at once). Each build pops that set into an in-memory
 * pending list and rebuilds only the ranges that are due (history-buckets.ts REBUILD_EVERY_MS: a
 * busy market is rebuilt at most every 10 s for 1d and once a minute for the other ranges, however
 * often its points change). The first build covers every market of every open event.
 *
 * The downsample is one set-based statement per range for a whole batch of markets (DISTINCT ON
 * the bucket number, keeping each bucket's last point), never one query per market.
 *
 * Rebuilds are incremental: a bucket's last point cannot change once later points exist past it, so
 * a range this process built before is re-read from its last bucket on (and from a margin behind
 * its last build, for points written late), and joined to the buckets before it as the snapshot in
 * Redis holds them — one or two index probes per market instead of one per bucket (288 for 1d).
 * The snapshot is used only when it is the very one this process wrote (its ETag); anything else —
 * the first build, a backfill (which writes the past), a resolution (the end point), a snapshot
 * Redis lost or another wrote — is read whole, as before. A test holds the two ways equal.
 */

export interface HistoryBuildStats {
  /** Market-range snapshots built. */
  built: number;
  /** Snapshots whose body changed and were written. */
  written: number;
  /** Markets still waiting (throttled, or beyond this build's batch). */
  pending: number;
  /** Of `built`, those read from their last bucket on and joined to the snapshot before it. */
  incremental: number;
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
}

/**
 * An incremental rebuild re-reads the buckets from this long before its previous build on: a live
 * point is written up to a flush window (5 s) after its time, so one written after that build with
 * a time before it is still read.
 */
const LATE_POINT_SECONDS = 120;
/** How far back each look for newly resolved markets reaches behind the last resolved_at seen. */
const RESOLVED_LOOKBACK_MS = 60_000;
/** A resolved market's end: its id, resolved_at as Unix s (float8) and its first outcome's final chance (float8). */
type EndRow = Pick<Markets, 'id'> & { t: number; chance: number | null };
/** A bucket's last point: the token, its time as Unix s and its chance, both float8. */
type PointRow = Pick<PricePoints, 'token_id'> & { t: number; chance: number };

export function createHistoryBuilder(deps: HistoryBuilderDeps): HistoryBuilder {
  const keys = redisKeys(deps.prefix);
  const batchSize = deps.batchSize ?? 250;
  const writer = createSnapshotWriter({ redis: deps.redis, prefix: deps.prefix, now: () => deps.clock.now() });
  /** Market → ranges whose points changed since they were last built. */
  const pending = new Map<string, Set<HistoryRange>>();
  const lastBuilt = new Map<string, Partial<Record<HistoryRange, number>>>();
  /** Market → its first outcome's token (fixed for the market's life). */
  const firstToken = new Map<string, string>();
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

  /**
   * The points of the snapshots this process wrote last (the writer's ETag), for those still in
   * Redis as written; inputs: names; outputs: name → points (absent: read the range whole).
   */
  async function bases(names: readonly SnapshotName[]): Promise<Map<SnapshotName, HistoryPoint[]>> {
    const known = names.filter((n) => writer.etagOf(n) !== undefined);
    const out = new Map<SnapshotName, HistoryPoint[]>();
    if (known.length === 0) return out;
    const read = deps.redis.pipeline();
    for (const name of known) read.hmget(keys.snapshot(name), 'body', 'etag');
    const results = (await read.exec()) ?? [];
    known.forEach((name, i) => {
      const [err, value] = results[i] ?? [new Error('no reply'), null];
      const [body, etag] = Array.isArray(value) ? value : [];
      if (err || typeof body !== 'string' || etag !== writer.etagOf(name)) return;
      out.set(name, (JSON.parse(body) as HistorySnapshot).points);
    });
    return out;
  }

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
   * Markets resolved since the last look (all resolved ones the first time): their ranges are
   * rebuilt at once, whatever the throttle, so the history ends at the resolution without waiting
   * for a point that may never come. resolved_at is the resolving transaction's start, so one that
   * commits late can carry a time below the watermark: each look reaches a minute back and skips
   * the ids it already took. inputs: the watermark. outputs: market ids; the watermark moves.
   */
  async function newlyResolved(): Promise<string[]> {
    const since = resolvedSince === undefined ? sql`` : sql`and resolved_at > ${new Date(resolvedSince.getTime() - RESOLVED_LOOKBACK_MS)}`;
    const rows: Array<{ id: string; resolved_at: Date }> = await deps.db.query(sql`
      select id, resolved_at from markets where resolved_at is not null ${since} order by resolved_at
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

  async function resolveTokens(marketIds: string[]): Promise<void> {
    const missing = marketIds.filter((id) => !firstToken.has(id));
    if (missing.length === 0) return;
    // (market id, token id of outcome 0) for those that exist.
    const rows = await tables.outcomes(deps.db).find({ market_id: anyOf(missing), outcome_index: 0 }).select('market_id', 'token_id').all();
    for (const r of rows) {
      firstToken.set(r.market_id, r.token_id);
    }
  }

  /**
   * inputs: token ids, each with the Unix second its points are read from (null: everything), and
   * the range's bucket (s).
   * outputs: per token, the last point of each bucket, tokens grouped and buckets ascending.
   *
   * One index probe per bucket (price_points' key is (token_id, t)): each token's first and last
   * bucket from its first and last point in the range, then per bucket the latest point before the
   * bucket's end. The same rows as DISTINCT ON over every point in the range (a test holds the two
   * equal), without reading them all: over a month of points, 'max' for 250 tokens read every point
   * and sorted it (43-45 s on a 12M-point table, the bulk of Postgres' CPU under a live 5,000-event
   * feed) where this takes 74 ms; the shorter ranges halve.
   */
  async function downsampleRange(tokens: ReadonlyArray<{ token: string; since: number | null }>, range: HistoryRange): Promise<Map<string, HistoryPoint[]>> {
    const { bucketSeconds } = HISTORY_RANGE_WINDOWS[range];
    const since = sql`and q.t >= coalesce(to_timestamp(tok.since), '-infinity'::timestamptz)`;
    // Without JIT: planned at generate_series' default thousand rows a token, the statement was JIT-compiled
    // every time (~160 ms of Postgres CPU, more than the probes themselves took).
    const rows: PointRow[] = await deps.db.tx(async (tx) => {
      await tx.query(sql`set local jit = off`);
      return tx.query(sql`
      select tok.token_id, floor(extract(epoch from p.t))::float8 as t, p.chance::float8 as chance
      from unnest(${tokens.map((t) => t.token)}::text[], ${tokens.map((t) => t.since)}::float8[]) as tok(token_id, since)
      cross join lateral (
        select floor(extract(epoch from min(q.t)) / ${bucketSeconds}::numeric)::bigint as lo,
               floor(extract(epoch from max(q.t)) / ${bucketSeconds}::numeric)::bigint as hi
        from price_points q
        where q.token_id = tok.token_id ${since}
      ) r
      cross join lateral generate_series(r.lo, r.hi) as b(bucket)
      cross join lateral (
        select q.t, q.chance
        from price_points q
        where q.token_id = tok.token_id ${since}
          and q.t >= to_timestamp((b.bucket * ${bucketSeconds})::float8)
          and q.t < to_timestamp(((b.bucket + 1) * ${bucketSeconds})::float8)
        order by q.t desc
        limit 1
      ) p
      order by tok.token_id, b.bucket
    `);
    });
    const byToken = new Map<string, HistoryPoint[]>();
    for (const r of rows) {
      let list = byToken.get(r.token_id);
      if (list === undefined) byToken.set(r.token_id, (list = []));
      list.push({ t: r.t, chance: roundChance(r.chance) });
    }
    return byToken;
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
    const resolved = await newlyResolved();
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
    await resolveTokens(working);
    const ends = await resolutionsOf(working);

    const nowSeconds = Math.floor(now / 1000);
    const entries: SnapshotEntry[] = [];
    const done: Array<[string, HistoryRange]> = [];
    let incremental = 0;
    for (const [range, marketIds] of work) {
      const withToken = marketIds.filter((id) => firstToken.has(id));
      // A market without outcomes has no history to show: drop it from the pending list.
      for (const id of marketIds) if (!firstToken.has(id)) done.push([id, range]);
      if (withToken.length === 0) continue;
      const { bucketSeconds } = HISTORY_RANGE_WINDOWS[range];
      const start = rangeStart(range, nowSeconds);
      // A base: the range as this process last built it, unless the market resolved since (its
      // snapshot ends in the resolution point) or was backfilled (lastBuilt dropped): those are read whole.
      const builtAt = (id: string) => lastBuilt.get(id)?.[range];
      const based = await bases(withToken.filter((id) => !ends.has(id) && builtAt(id) !== undefined).map((id) => nameOf(id, range)));
      /** Per market, the first bucket read from Postgres (undefined: all of them). */
      const fromBucket = new Map<string, number>();
      for (const id of withToken) {
        const base = based.get(nameOf(id, range));
        const at = builtAt(id);
        if (base === undefined || at === undefined) continue;
        const lateFrom = Math.floor(at / 1000) - LATE_POINT_SECONDS;
        fromBucket.set(id, bucketOf(Math.min(base.at(-1)?.t ?? lateFrom, lateFrom), bucketSeconds));
      }
      const points = await downsampleRange(
        withToken.map((id) => {
          const from = fromBucket.get(id);
          const since = from === undefined ? start : Math.max(start ?? -Infinity, from * bucketSeconds);
          return { token: firstToken.get(id) as string, since };
        }),
        range,
      );
      for (const marketId of withToken) {
        let recorded = points.get(firstToken.get(marketId) as string) ?? [];
        const from = fromBucket.get(marketId);
        if (from !== undefined) {
          // The buckets before `from` as built last time, those that are still in the range.
          const kept = (based.get(nameOf(marketId, range)) ?? []).filter((p) => bucketOf(p.t, bucketSeconds) < from && (start === null || p.t >= start));
          recorded = [...kept, ...recorded];
          incremental++;
        }
        const end = ends.get(marketId);
        const payload: HistorySnapshot = { market_id: marketId, range, points: end ? endAtResolution(recorded, range, end) : recorded };
        const body = JSON.stringify(payload);
        entries.push({ name: nameOf(marketId, range), body, etag: snapshotEtag(body) });
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
      firstToken.delete(marketId);
    }
    return { built: entries.length, written, pending: pending.size, incremental };
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
  /** Stop the timer and wait for the build in progress. */
  stop(): Promise<void>;
}

/**
 * Run `builder.build()` every `everyMs` (default 2 s), one at a time, off the event snapshots'
 * path: a history downsample may take a few hundred ms and must never delay live prices.
 */
export function startHistoryLoop(builder: HistoryBuilder, opts: { logger: Logger; everyMs?: number }): HistoryLoop {
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    running = builder
      .build()
      .then((stats) => {
        if (stats.built > 0) opts.logger.debug(stats, 'history snapshots built');
      })
      .catch((err: unknown) => opts.logger.warn({ err }, 'history snapshot build failed'))
      .finally(() => {
        running = undefined;
      });
  };
  tick();
  const timer = setInterval(tick, opts.everyMs ?? 2_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
