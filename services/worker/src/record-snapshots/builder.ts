import type { Redis } from 'ioredis';
import { redisKeys, takeSets } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import { createBuildChain, type BuildChain } from '../market-snapshots/build-chain.js';
import type { SnapshotEntry } from '../market-snapshots/writer.js';
import { globalBodies, marketBodies, refreshTouchedCallJson } from './bodies.js';
import { createBulkSnapshotWriter } from './bulk-writer.js';
import { buildAllRecords, withClosedExpiry } from './full-build.js';
import { createClosedEvents } from '../retire/closed-expiry.js';
import { touchedMarkets } from './queries.js';

/**
 * Builds the record snapshots (the latest calls, each called market's calls, the leaderboards, the
 * combo lists; names in shared/src/redis/keys.ts) from Postgres and writes them with the bulk writer
 * (bulk-writer.ts: only what changed, one script call per batch, announced). Postgres makes each
 * body's JSON text set-based (bodies.ts); Node pages, hashes and writes. Each call's Call object is
 * kept as text in record_call_json, so a list costs an aggregation of ready text, not a hundred
 * objects made again.
 *
 * A person's record, their call lists and a call's own page are not snapshots: the API reads them
 * from Postgres as committed (services/api/src/pages/pages.ts, one indexed statement each), so a
 * settlement of 10,000 calls costs this builder its calls' objects and one market's list, not the
 * ~60,000 person and call pages it would otherwise rewrite.
 *
 * Incremental build: pop the dirty set `<prefix>:dirty:records` (members `call:<id>`,
 * `market:<id>`, `combos`, `leaderboard`; `user:<id>` and `lists:<id>`, which earlier builds wrote,
 * are accepted and need nothing), refresh the objects of those dirty calls, and of the calls on a
 * dirty market that resolved, that a list shows (`refreshTouchedCallJson`), make the lists of the
 * markets they are on (`touchedMarkets`), and always the small global lists (latest
 * calls, the four leaderboards, the four combo lists: a few hundred rows, and unchanged ones cost no
 * Redis write).
 *
 * Full build (at start, `{full: true}` from a rebuild, and periodically as a safety net): every
 * call's object and every called market's list, set-based and streamed (full-build.ts), written by
 * the bulk writer, so a million calls never sit in memory at once. The lists of events past their
 * retention are left out, unless asked for by name (`market:<id>`: the API, for a retired event).
 *
 * A closed event's list is written with an expiry (retire/closed-expiry.ts), so what comes back of
 * a retired event leaves again.
 *
 * Builds never overlap within a process (a promise chain); a failed build puts the popped members
 * back so the next one retries them.
 */

export interface RecordBuildStats {
  full: boolean;
  calls: number;
  /**
   * An incremental build's Call objects made: of `calls` (the touched calls a list shows), those whose
   * row changed since their object was made (a settlement's calls are requested twice: the second
   * build makes none).
   */
  made?: number;
  markets: number;
  /** Snapshots whose body changed and were written. */
  written: number;
  ms: number;
  /** An incremental build's stages: ms after its start when each ended (where a settlement's time goes). */
  steps?: Record<string, number>;
  /** A full build's stages (full-build.ts), in ms. */
  stages?: Record<string, number>;
}

export interface RecordSnapshotBuilder extends BuildChain<RecordBuildStats> {
  /**
   * True when a full build is due: none yet, the period has passed, or Redis lost the snapshots
   * (no `calls:latest` after a build wrote one: a flush or an eviction, which the writer's memory of
   * what it wrote would otherwise hide until each item changed again).
   */
  fullBuildDue(): Promise<boolean>;
  /** Whether a full build has completed in this process (until then one is due: see fullBuildDue). */
  hasFullBuild(): boolean;
  /** Members waiting in the dirty set (the sweep asks for a build when there are any). */
  pending(): Promise<number>;
}

export interface RecordSnapshotBuilderDeps {
  db: Db;
  redis: Redis;
  prefix: string;
  /** PUBLIC_WEB_URL without a trailing slash. */
  webUrl: string;
  logger: Logger;
  clock: { now(): number };
  /**
   * Safety net: a full build at most this long after the previous one. Default 30 minutes: over a
   * million calls a full build takes minutes, and incremental builds wait behind it.
   */
  fullEveryMs?: number;
  /** Markets per batch; snapshots per write of a full build. Default 500 markets / 2000 writes. */
  batch?: { markets?: number; writes?: number };
  /** CLOSED_RETENTION_HOURS in ms: closed events' lists expire (retire/closed-expiry.ts). Default 24 h. */
  retentionMs?: number;
}

interface Dirty {
  calls: string[];
  markets: string[];
  members: string[];
}

/** Snapshots per write of an incremental build (bounds memory on a big settlement). */
const FLUSH_AT = 2000;

/** Bigint ids only: anything else in the set is a producer's bug, skipped rather than failing the build. */
const USER_ID = /^[0-9]{1,18}$/;

export function parseDirty(members: readonly string[]): Dirty & { ignored: string[] } {
  const out: Dirty & { ignored: string[] } = { calls: [], markets: [], members: [...members], ignored: [] };
  for (const m of members) {
    const colon = m.indexOf(':');
    const kind = colon < 0 ? m : m.slice(0, colon);
    const id = colon < 0 ? '' : m.slice(colon + 1);
    // The combo lists and the leaderboards are rebuilt by every build.
    if ((kind === 'combos' || kind === 'leaderboard') && id === '') continue;
    if (kind === 'call' && id !== '') out.calls.push(id);
    else if (kind === 'market' && id !== '') out.markets.push(id);
    // A person's pages are read from Postgres by the API: their members (from producers before that) need nothing.
    else if ((kind === 'user' || kind === 'lists') && USER_ID.test(id)) continue;
    else out.ignored.push(m);
  }
  return out;
}

export function createRecordSnapshotBuilder(deps: RecordSnapshotBuilderDeps): RecordSnapshotBuilder {
  const { db, webUrl } = deps;
  const keys = redisKeys(deps.prefix);
  const fullEveryMs = deps.fullEveryMs ?? 1_800_000;
  const batchMarkets = deps.batch?.markets ?? 500;
  const bulkWriter = createBulkSnapshotWriter({ redis: deps.redis, prefix: deps.prefix, now: () => deps.clock.now() });
  let lastFullAt: number | undefined;

  async function popDirty(): Promise<string[]> {
    const { members } = await takeSets(deps.redis, [keys.dirtyRecords]);
    return members[0] ?? [];
  }

  // Each family's bodies are made in SQL (bodies.ts): here they are only paged and written.
  const closedEvents = createClosedEvents(db, deps.retentionMs ?? 24 * 3_600_000);
  /** The lists of these markets; a closed event's with its expiry (asked for by the API after it was retired, or closing now). */
  const marketEntries = async (ids: readonly string[]): Promise<SnapshotEntry[]> =>
    withClosedExpiry(await marketBodies(db, ids, webUrl), await closedEvents.marketsClosedAt(ids), deps.clock.now(), closedEvents.retentionMs);
  const globalEntries = (): Promise<SnapshotEntry[]> => globalBodies(db, webUrl);

  /** Every call's object (the lists aggregate them), every called market's list, then the global lists. */
  async function buildEverything(stats: RecordBuildStats): Promise<void> {
    const counts = await buildAllRecords({
      db,
      webUrl,
      writer: bulkWriter,
      batch: { markets: batchMarkets, ...(deps.batch?.writes === undefined ? {} : { writes: deps.batch.writes }) },
      closedEvents,
      now: deps.clock.now(),
    });
    Object.assign(stats, counts);
  }

  /**
   * Writes through the bulk writer (one script call per batch finds the changed bodies and one more
   * writes and announces them, atomically), in batches of FLUSH_AT; counts them in `stats`.
   */
  async function write(entries: readonly SnapshotEntry[], stats: RecordBuildStats): Promise<void> {
    for (let i = 0; i < entries.length; i += FLUSH_AT) {
      const n = await bulkWriter.write(
        entries.slice(i, i + FLUSH_AT).map((e) => ({
          name: e.name,
          body: 'body' in e ? e.body : JSON.stringify(e.payload),
          ...(e.expireAtMs === undefined ? {} : { expireAtMs: e.expireAtMs }),
        })),
      );
      stats.written += n;
    }
  }

  /** The lists of these markets, a batch at a time. */
  async function writeMarkets(markets: readonly string[], stats: RecordBuildStats): Promise<void> {
    for (let i = 0; i < markets.length; i += batchMarkets) await write(await marketEntries(markets.slice(i, i + batchMarkets)), stats);
  }

  async function buildDirty(dirty: Dirty, stats: RecordBuildStats): Promise<void> {
    const t0 = performance.now();
    const steps: Record<string, number> = {};
    stats.steps = steps;
    const mark = (step: string) => {
      steps[step] = Math.round(performance.now() - t0);
    };
    // The markets the change touches; the Call objects their lists show (the newest of each touched
    // market and of all calls), found and made in one statement; then those lists and the global
    // ones. The other touched calls' objects (a settlement's other ~9,900) are not made: no list
    // shows them and the API's pages make theirs from the row, and a list that comes to show one
    // makes it first (bodies.ts ensureCallJson remakes a stale object). Making them here cost ~1.9 s
    // of Postgres right after a 10,000-call settlement, while every page it moved was being read.
    const markets = await touchedMarkets(db, dirty);
    const listed = await refreshTouchedCallJson(db, dirty, webUrl, markets);
    mark('call_json');
    await writeMarkets(markets, stats);
    mark('markets');
    await write(await globalEntries(), stats);
    mark('boards');
    stats.calls = listed.calls;
    stats.made = listed.made;
    stats.markets = markets.length;
  }

  async function run(requestedFull: boolean): Promise<RecordBuildStats> {
    const started = deps.clock.now();
    const t0 = performance.now();
    const full = requestedFull || lastFullAt === undefined || started - lastFullAt >= fullEveryMs;
    const members = await popDirty();
    const stats: RecordBuildStats = { full, calls: 0, markets: 0, written: 0, ms: 0 };
    // Every producer adds its members before it asks for a build, so an incremental build that finds
    // none was asked for what a build since then has read: the settlement's own build right after
    // its commit, then the job it and the outbox relay requested. Rebuilding the global lists there
    // anyway cost ~0.4 s of the worker and Postgres while a 10,000-call settlement's pages were read.
    if (!full && members.length === 0) return stats;
    try {
      const dirty = parseDirty(members);
      if (dirty.ignored.length > 0) deps.logger.warn({ ignored: dirty.ignored.slice(0, 10), count: dirty.ignored.length }, 'unknown dirty record members ignored');
      if (full) {
        await buildEverything(stats);
        // A full build leaves out the lists of events whose retention has passed; one asked for by
        // name (the API, for such an event) is built all the same, with its expiry.
        if (dirty.markets.length > 0) await writeMarkets(await touchedMarkets(db, { calls: [], markets: dirty.markets }), stats);
        lastFullAt = started;
      } else {
        await buildDirty(dirty, stats);
      }
    } catch (err) {
      if (members.length > 0) await deps.redis.sadd(keys.dirtyRecords, ...members).catch(() => {});
      throw err;
    }
    stats.ms = Math.round(performance.now() - t0);
    return stats;
  }

  const builds = createBuildChain(run, deps.logger, 'record snapshots');

  return {
    ...builds,
    hasFullBuild() {
      return lastFullAt !== undefined;
    },
    async fullBuildDue() {
      if (lastFullAt === undefined || deps.clock.now() - lastFullAt >= fullEveryMs) return true;
      return (await deps.redis.exists(keys.snapshot('calls:latest'))) === 0;
    },
    pending() {
      return deps.redis.scard(keys.dirtyRecords);
    },
  };
}
