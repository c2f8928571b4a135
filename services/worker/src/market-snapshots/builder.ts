import type { Redis } from 'ioredis';
import { REDIS_FIELDS_PER_COMMAND, redisKeys, slices, takeSets, type SnapshotName } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import { RANKING_KEPT_SECONDS, type RankingSnapshot } from '@pm/shared/snapshots';
import { createBuildChain, type BuildChain } from './build-chain.js';
import { createCatalogCache } from './catalog.js';
import { parseQuote } from '@pm/shared/domain';
import { createChanceReader, createTokenReader } from './chances.js';
import { createDayAgoLookup } from './day-ago.js';
import { buildLiveSnapshot } from './live.js';
import type { CatalogEvent, Chances, DayAgo, GameState, Quotes, Splits } from './model.js';
import { createEtagMemo } from './etag-memo.js';
import { createListAssembler } from './list-bodies.js';
import { buildEventSnapshot, emptyList } from './payloads.js';
import { createSnapshotWriter, type SnapshotEntry } from './writer.js';
import { closedExpiry, createClosedEvents, retentionPassed } from '../retire/closed-expiry.js';

/**
 * One snapshot build: pop the dirty set; write the dirty events' pages at once from the cached
 * catalog and their fresh chances (a price change is what most marks are, and it needs nothing from
 * Postgres: docs/design.md "The read path", a price is visible as soon as it is known), and so again for
 * marks that arrived meanwhile, a few rounds at most; then bring the
 * catalog cache up to date, read the chances that can have moved (chances.ts), rebuild the dirty
 * events' pages again, and those of events a catalog reload found changed (now with the catalog,
 * games and splits as Postgres has them; unchanged pages are not rewritten) and every list (from the cards of the previous build, but those whose event or
 * shown chances changed: list-bodies.ts), write what changed.
 *
 * Events marked that are not open (closing now, or asked for by the API after their keys were
 * retired) are built as extras: their pages get an expiry (retire/closed-expiry.ts), and an event
 * past its retention no market-index entry.
 *
 * Builds never overlap within a process (a promise chain), whether they come from a job, the start-up
 * build or a test calling `build` directly. BullMQ's concurrency 1 keeps jobs apart as well.
 */

export interface Clock {
  now(): number;
}

export interface BuildStats {
  /** Event snapshots built (written or found unchanged). */
  events: number;
  /** List snapshots built (trending, categories, leagues, search). */
  lists: number;
  /** Snapshots whose body changed and were written. */
  written: number;
  full: boolean;
  ms: number;
  /** Markets whose by-id index entry this process remembers writing: those of the events built since the last full build. */
  indexed: number;
}

/**
 * `build`: what is dirty and every list; a full build (or one due by `fullEveryMs`) rebuilds every
 * open event and reloads the catalog from Postgres.
 */
export interface SnapshotBuilder extends BuildChain<BuildStats> {
  /** True when the periodic full build is due (the sweep requests a job then). */
  fullBuildDue(): boolean;
  /** The `catalogVersion` the last successful build worked from (undefined before the first). */
  builtVersion(): string | undefined;
}

export interface SnapshotBuilderDeps {
  db: Db;
  redis: Redis;
  prefix: string;
  /** PUBLIC_WEB_URL, without a trailing slash. */
  webUrl: string;
  logger: Logger;
  clock: Clock;
  /** Safety net: a full build at most this long after the previous one. Default 30 s. */
  fullEveryMs?: number;
  /** CLOSED_RETENTION_HOURS in ms: the pages of closed events written get an expiry from it (retire/closed-expiry.ts). Default 24 h. */
  retentionMs?: number;
  /**
   * Told when a build made the page of an event whose retention had passed: the API asked for it
   * and is waiting, for its histories too (the worker then builds those at once).
   */
  onRetiredBuilt?: () => void;
}

/** Rounds of "pages first" per build at most, so a feed that never pauses still gets its lists built. */
const EARLY_ROUNDS = 10;

export function createSnapshotBuilder(deps: SnapshotBuilderDeps): SnapshotBuilder {
  const keys = redisKeys(deps.prefix);
  const fullEveryMs = deps.fullEveryMs ?? 30_000;
  const catalog = createCatalogCache(deps.db);
  const chanceReader = createChanceReader(deps.redis, keys.chances);
  // Read right after the chances, of the same tokens: the ingestor writes a token's quotes with (before) its chance.
  const quoteReader = createTokenReader(deps.redis, keys.quotes, parseQuote);
  const dayAgo = createDayAgoLookup(deps.db);
  const writer = createSnapshotWriter({ redis: deps.redis, prefix: deps.prefix, now: () => deps.clock.now() });
  const closedEvents = createClosedEvents(deps.db, deps.retentionMs ?? 24 * 3_600_000);
  /** The lists as JSON, each card rebuilt only when its event or a chance it shows changed. */
  const listBodies = createListAssembler(deps.webUrl);
  /** The lists' ETags: most list bodies come back unchanged build after build. */
  const listEtags = createEtagMemo();
  let lastFullAt: number | undefined;
  let lastVersion: string | undefined;
  /** League lists written by this process, to empty the ones whose league has no open event left. */
  let leagueLists = new Set<string>();
  /** The ranking this process last wrote: its version and the order it records (slugs joined). */
  let ranking: { version: number; order: string } | undefined;
  /** The market index entries (market id → event slug) this process wrote, so a build writes only new ones. */
  const indexed = new Map<string, string>();

  /** Take the dirty sets and the catalog version in one atomic step. */
  async function popDirty(): Promise<{ ids: string[]; catalogIds: string[]; version: string }> {
    const { members, value } = await takeSets(deps.redis, [keys.dirtyEvents, keys.catalogDirtyEvents], keys.catalogVersion);
    return { ids: members[0] ?? [], catalogIds: members[1] ?? [], version: value ?? '0' };
  }

  /**
   * The market index (`marketEvents`: market id → event slug) behind /api/v1/markets/by-id, for the
   * events whose pages this build makes from the catalog: entries this process has not written yet,
   * or all of them on a full build (Redis may have lost them). Written before the pages, so a page
   * never lists a market the index cannot find.
   */
  async function indexMarkets(events: readonly CatalogEvent[], all: boolean): Promise<void> {
    // A full build writes every event it still builds: what it does not write has left the catalog,
    // and is not remembered past it (the exchange closes thousands of markets a day). Should the write
    // fail, the next build writes those entries again.
    if (all) indexed.clear();
    const fields: string[] = [];
    for (const e of events) for (const m of e.markets) if (all || indexed.get(m.id) !== e.slug) fields.push(m.id, e.slug);
    if (fields.length === 0) return;
    const pipeline = deps.redis.pipeline();
    for (const slice of slices(fields, 2 * REDIS_FIELDS_PER_COMMAND)) pipeline.hset(keys.marketEvents, ...slice);
    for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
    for (let i = 0; i < fields.length; i += 2) indexed.set(fields[i] as string, fields[i + 1] as string);
  }

  const firstTokens = (events: readonly CatalogEvent[]) =>
    events.flatMap((e) => e.markets.flatMap((m) => (m.outcomes[0] ? [m.outcomes[0].tokenId] : [])));

  function eventEntries(
    events: readonly CatalogEvent[],
    inputs: { chances: Chances; quotes: Quotes; splits: Splits; games: ReadonlyMap<string, GameState>; dayAgo: DayAgo },
  ): SnapshotEntry[] {
    return events.map((event) => ({
      name: `event:${event.slug}`,
      payload: buildEventSnapshot(event, {
        chances: inputs.chances,
        splits: inputs.splits,
        game: inputs.games.get(event.id),
        webUrl: deps.webUrl,
        dayAgo: inputs.dayAgo,
        quotes: inputs.quotes,
      }),
    }));
  }

  /**
   * The pages of the dirty events the cache knows, from the cache (catalog, games, splits, chances a
   * day ago) and fresh chances, written before anything that waits for Postgres. Returns how many
   * were written. What the cache has aged on is corrected by the rest of the build.
   */
  async function writeDirtyPagesFirst(ids: readonly string[]): Promise<number> {
    const cached = catalog.cached();
    if (cached === undefined || ids.length === 0) return 0;
    const events = ids.flatMap((id) => cached.byId.get(id) ?? []);
    if (events.length === 0) return 0;
    const chances = await chanceReader.read(events, new Set(ids));
    const quotes = await quoteReader.read(events, new Set(ids));
    const dayAgoChances = dayAgo.cached(firstTokens(events));
    const { written } = await writer.write(eventEntries(events, { chances, quotes, splits: cached.splits, games: cached.games, dayAgo: dayAgoChances }));
    return written;
  }

  async function run(requestedFull: boolean): Promise<BuildStats> {
    const started = deps.clock.now();
    const t0 = performance.now();
    const full = requestedFull || lastFullAt === undefined || started - lastFullAt >= fullEveryMs;
    let popped = await popDirty();
    /** Every id popped in this build: rebuilt from Postgres below, put back if the build fails. */
    const taken = new Set(popped.ids);
    /** Every catalog-dirty id popped: its rows are re-read below (put back if the build fails). */
    const catalogTaken = new Set(popped.catalogIds);
    try {
      if (full) writer.forget(); // compare with Redis again: it may have been flushed since
      let early = 0;
      // A full build rewrites every page from Postgres anyway, straight away. Otherwise pages first,
      // and again for marks that came meanwhile (a burst trickles in over tens of ms): each round
      // costs two Redis round trips, the Postgres refresh and the lists below cost far more.
      for (let round = 0; !full && popped.ids.length > 0 && round < EARLY_ROUNDS; round++) {
        early += await writeDirtyPagesFirst(popped.ids);
        popped = await popDirty();
        for (const id of popped.ids) taken.add(id);
        for (const id of popped.catalogIds) catalogTaken.add(id);
      }
      const dirty = [...taken];
      const view = await catalog.refresh({ version: popped.version, dirty, catalogDirty: [...catalogTaken], full });
      const rebuild = view.rebuild;
      const pages = rebuild === 'all' ? view.open : view.open.filter((e) => rebuild.has(e.id));
      // Fresh from Redis: every chance on a full build, else those of the events marked (or closed)
      // since; the tokens of an event new to the catalog are read anyway (chances.ts).
      const fresh = rebuild === 'all' ? 'all' : new Set([...taken, ...view.extra.map((e) => e.id)]);
      const readable = view.extra.length === 0 ? view.open : [...view.open, ...view.extra];
      const chances = await chanceReader.read(readable, fresh);
      const quotes = await quoteReader.read(readable, fresh);
      const built = [...pages, ...view.extra];
      // Extra events are mostly closed ones (closing now, or asked for by the API after their keys
      // were retired): their pages expire, and one whose retention has passed gets no index entry
      // (a hash field cannot expire; the retirement pass deleted its own).
      const closedAt = await closedEvents.closedAt(view.extra.filter((e) => e.closed).map((e) => e.id));
      const retired = new Set([...closedAt].filter(([, at]) => retentionPassed(at, started, closedEvents.retentionMs)).map(([id]) => id));
      // The rebuilt pages include every event new to the catalog (and any whose slug changed).
      await indexMarkets(retired.size === 0 ? built : built.filter((e) => !retired.has(e.id)), full);
      const dayAgoChances = await dayAgo.lookup(firstTokens(built), started);

      const entries = eventEntries(built, { chances, quotes, splits: view.splits, games: view.games, dayAgo: dayAgoChances });
      view.extra.forEach((e, i) => {
        const at = closedAt.get(e.id);
        const entry = entries[pages.length + i];
        if (at !== undefined && entry !== undefined) entry.expireAtMs = closedExpiry(at, started, closedEvents.retentionMs);
      });

      // The ranking a /markets walk keeps: a new version whenever the busiest-first order changed.
      const ordered = listBodies.order(view.open);
      const order = ordered.map((e) => e.slug).join('\n');
      // Remembered only once written: a build that fails after this point must not leave the lists
      // of the next build naming a ranking that was never stored (every walk would stop at page one).
      const rankingEntries: SnapshotEntry[] = [];
      let next = ranking;
      if (next === undefined || next.order !== order) {
        const version = await deps.redis.incr(keys.rankingVersion);
        const payload: RankingSnapshot = { version, events: ordered.map((e) => [e.slug, e.category, e.league]) };
        rankingEntries.push({ name: `markets:ranking:${version}`, payload });
        next = { version, order };
      }
      const superseded = rankingEntries.length > 0 ? ranking?.version : undefined;
      const lists = listBodies.build(view.open, chances, next.version);
      // The live list changes with any game or any in-play chance: cheap to rebuild every time,
      // and the writer stores it only when its body changed.
      const live: SnapshotEntry = { name: 'live', payload: buildLiveSnapshot(view.open, view.games, chances, deps.webUrl) };
      const listEntries: SnapshotEntry[] = [...lists.lists.map((l) => ({ ...l, etag: listEtags.etagOf(l.name, l.body) })), live];
      const current = new Set(lists.leagueKeys);
      for (const key of leagueLists) {
        if (!current.has(key)) listEntries.push({ name: `markets:league:${key}` satisfies SnapshotName, payload: emptyList(view.open) });
      }
      // The ranking with (before) the lists that name it, in the same MULTI.
      const { written } = await writer.write([...entries, ...rankingEntries, ...listEntries]);
      if (retired.size > 0) deps.onRetiredBuilt?.();
      ranking = next;
      await keepRankings(next.version, superseded, full || rankingEntries.length > 0);
      leagueLists = current;
      if (full) lastFullAt = started;
      lastVersion = popped.version;
      return { events: entries.length, lists: listEntries.length, written: early + written, full, ms: Math.round(performance.now() - t0), indexed: indexed.size };
    } catch (err) {
      // Put the popped ids back so the next build (the sweep requests one within a second) retries them.
      if (taken.size > 0) await deps.redis.sadd(keys.dirtyEvents, ...taken).catch(() => {});
      if (catalogTaken.size > 0) await deps.redis.sadd(keys.catalogDirtyEvents, ...catalogTaken).catch(() => {});
      throw err;
    }
  }

  /**
   * A ranking stays walkable RANKING_KEPT_SECONDS after the next replaced it; the current one is kept
   * a day at a time (renewed on full builds), so one left behind by a stopped worker goes away too.
   */
  async function keepRankings(current: number, superseded: number | undefined, renew: boolean): Promise<void> {
    const pipeline = deps.redis.pipeline();
    if (renew) pipeline.expire(keys.snapshot(`markets:ranking:${current}`), 86_400);
    if (superseded !== undefined) pipeline.expire(keys.snapshot(`markets:ranking:${superseded}`), RANKING_KEPT_SECONDS);
    for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
  }

  const builds = createBuildChain(run, deps.logger, 'snapshots');

  return {
    ...builds,
    fullBuildDue() {
      return lastFullAt === undefined || deps.clock.now() - lastFullAt >= fullEveryMs;
    },
    builtVersion() {
      return lastVersion;
    },
  };
}
