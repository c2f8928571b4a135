import type { Redis } from 'ioredis';
import { redisKeys } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import { createBuildChain, type BuildChain } from '../snapshots/build-chain.js';
import type { SnapshotEntry } from '../snapshots/writer.js';
import { callBodies, globalBodies, marketBodies, refreshCallJson, userBodies } from './bodies.js';
import { createBulkSnapshotWriter } from './bulk-writer.js';
import { buildAllRecords } from './full-build.js';
import { cachedCallIds, createListPatcher, listPatches } from './list-patch.js';
import { expandDirty } from './queries.js';

/**
 * Builds the record snapshots (calls, users, leaderboard, combos; names in shared/src/redis/keys.ts)
 * from Postgres and writes them with the bulk writer (bulk-writer.ts: only what changed, one script
 * call per batch, announced). Postgres makes each body's JSON text set-based (bodies.ts); Node pages, hashes and writes.
 * Each call's Call object is kept as text in record_call_json, refreshed with the call's own page,
 * so a list costs an aggregation of ready text, not a hundred objects made again.
 *
 * Incremental build: pop the dirty set `<prefix>:dirty:records` (members `call:<id>`, `user:<id>`,
 * `lists:<id>`, `market:<id>`, `combos`, `leaderboard`), expand it in SQL to everything those records show up in (see
 * `expandDirty`), rebuild those items, and always the small global lists (latest calls, the four
 * leaderboards, the four combo lists: a few hundred rows, and unchanged ones cost no Redis write).
 *
 * Full build (at start, `{full: true}` from a rebuild, and periodically as a safety net): every
 * call, user and called market, set-based and streamed (full-build.ts), written by the bulk writer
 * (one script call per batch, only changed bodies sent), so a million calls never sit in memory at once.
 *
 * Builds never overlap within a process (a promise chain); a failed build puts the popped members
 * back so the next one retries them.
 */

export interface RecordBuildStats {
  full: boolean;
  calls: number;
  users: number;
  markets: number;
  /** Snapshots whose body changed and were written. */
  written: number;
  ms: number;
  /** An incremental build's stages: ms after its start when each ended (issue 18: where a settlement's time goes). */
  steps?: Record<string, number>;
  /** People whose call lists this build patched in Redis (list-patch.ts); the next build makes them from Postgres. */
  patched?: number;
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
  /** Ids per batch: calls of an incremental build, people and markets of both; snapshots per write of a full build. Default 1000 users / 5000 calls / 500 markets / 2000 writes. */
  batch?: { users?: number; calls?: number; markets?: number; writes?: number };
  /** People's call lists a build patches in Redis rather than makes from Postgres at once, from this many (default PATCH_LISTS_FROM). */
  patchListsFrom?: number;
}

/**
 * From how many people's lists a build patches them (list-patch.ts) instead of making them from
 * Postgres at once: below it, making them is a few milliseconds and a patch would only add the
 * follow-up build.
 */
export const PATCH_LISTS_FROM = 200;

interface Dirty {
  calls: string[];
  users: string[];
  markets: string[];
  /** People whose call lists alone are to be made from Postgres (`lists:<id>`: after a patch, list-patch.ts). */
  lists: string[];
  members: string[];
}

/** Snapshots per write of an incremental build (bounds memory on a big settlement). */
const FLUSH_AT = 2000;

/** Bigint ids only: anything else in the set is a producer's bug, skipped rather than failing the build. */
const USER_ID = /^[0-9]{1,18}$/;

export function parseDirty(members: readonly string[]): Dirty & { ignored: string[] } {
  const out: Dirty & { ignored: string[] } = { calls: [], users: [], markets: [], lists: [], members: [...members], ignored: [] };
  for (const m of members) {
    const colon = m.indexOf(':');
    const kind = colon < 0 ? m : m.slice(0, colon);
    const id = colon < 0 ? '' : m.slice(colon + 1);
    // The combo lists and the leaderboards are rebuilt by every build.
    if ((kind === 'combos' || kind === 'leaderboard') && id === '') continue;
    if (kind === 'call' && id !== '') out.calls.push(id);
    else if (kind === 'market' && id !== '') out.markets.push(id);
    else if (kind === 'user' && USER_ID.test(id)) out.users.push(id);
    else if (kind === 'lists' && USER_ID.test(id)) out.lists.push(id);
    else out.ignored.push(m);
  }
  return out;
}

export function createRecordSnapshotBuilder(deps: RecordSnapshotBuilderDeps): RecordSnapshotBuilder {
  const { db, webUrl } = deps;
  const keys = redisKeys(deps.prefix);
  const fullEveryMs = deps.fullEveryMs ?? 1_800_000;
  const batchUsers = deps.batch?.users ?? 1000;
  const batchCalls = deps.batch?.calls ?? 5000;
  const batchMarkets = deps.batch?.markets ?? 500;
  const bulkWriter = createBulkSnapshotWriter({ redis: deps.redis, prefix: deps.prefix, now: () => deps.clock.now() });
  const listPatcher = createListPatcher({ redis: deps.redis, prefix: deps.prefix, now: () => deps.clock.now() });
  const patchListsFrom = deps.patchListsFrom ?? PATCH_LISTS_FROM;
  let lastFullAt: number | undefined;

  async function popDirty(): Promise<string[]> {
    const results = await deps.redis.multi().smembers(keys.dirtyRecords).del(keys.dirtyRecords).exec();
    if (results === null) throw new Error('dirty records pop aborted');
    for (const [err] of results) if (err) throw err;
    const members = results[0]?.[1];
    return Array.isArray(members) ? members.filter((v): v is string => typeof v === 'string') : [];
  }

  // Each family's bodies are made in SQL (bodies.ts): here they are only paged and written.
  const marketEntries = (ids: readonly string[]): Promise<SnapshotEntry[]> => marketBodies(db, ids, webUrl);
  const globalEntries = (): Promise<SnapshotEntry[]> => globalBodies(db, webUrl);

  /** Every call (first: the lists aggregate their cached objects), user and called market, then the global lists. */
  async function buildEverything(stats: RecordBuildStats): Promise<void> {
    const counts = await buildAllRecords({ db, webUrl, writer: bulkWriter, batch: { users: batchUsers, markets: batchMarkets, ...(deps.batch?.writes === undefined ? {} : { writes: deps.batch.writes }) } });
    Object.assign(stats, counts);
  }

  async function buildDirty(dirty: Dirty, stats: RecordBuildStats): Promise<void> {
    const t0 = performance.now();
    const steps: Record<string, number> = {};
    stats.steps = steps;
    const mark = (step: string) => {
      steps[step] = Math.round(performance.now() - t0);
    };
    const touched = await expandDirty(db, dirty);
    mark('expand');
    // Every write goes through the bulk writer (one script call per batch finds the changed bodies
    // and one more writes and announces them, atomically), in batches of FLUSH_AT, so a settlement
    // that touches thousands of people never sits in memory whole.
    const write = async (entries: readonly SnapshotEntry[]) => {
      for (let i = 0; i < entries.length; i += FLUSH_AT) {
        // Read `written` after the write, not before it: the paths below write at the same time.
        const n = await bulkWriter.write(entries.slice(i, i + FLUSH_AT).map((e) => ({ name: e.name, body: 'body' in e ? e.body : JSON.stringify(e.payload) })));
        stats.written += n;
      }
    };
    // Paths at once, on separate connections, so Postgres, Node and Redis overlap (a 10,000-call
    // settlement touches ~18k people):
    // - the people's records (a row each, one indexed statement), written as soon as made: no
    //   list is in them;
    // - the calls, in batches: each batch's cached Call objects (record_call_json) and its page
    //   bodies made side by side, the pages written;
    // - once the cached Call objects are there: the market lists and the global lists (boards,
    //   combos);
    // - the people's call lists: a big change's are patched in Redis with the changed calls
    //   (list-patch.ts: ~4 MB for a 10,000-call settlement, where its callers' lists are ~165 MB to
    //   make again), from the start (the calls they patch are calls with a page already), and made
    //   again from Postgres by the next build (`lists:<id>`); a small change's, and anyone's a patch
    //   cannot serve, are made from Postgres once the calls' pages are written.
    // Lists asked for by name (`lists:<id>`) are the follow-up of a patch: made from Postgres.
    const asked = new Set(dirty.lists);
    const exact = new Set(touched.lists.filter((id) => asked.has(id)));
    const patching = touched.lists.length - exact.size >= patchListsFrom;
    // Which calls had a page and a cached object before this build (read before the refresh below).
    const cached = patching ? await cachedCallIds(db, touched.calls) : [];
    const records = (async () => {
      await write(await userBodies(db, touched.users, webUrl, 'record'));
      mark('records');
    })();
    // The calls' cached Call objects first (the lists and the market list aggregate them), each
    // batch beside its page bodies.
    const refreshed: Array<Promise<void>> = [];
    const pages: Array<Promise<SnapshotEntry[]>> = [];
    for (let i = 0; i < touched.calls.length; i += batchCalls) {
      const ids = touched.calls.slice(i, i + batchCalls);
      refreshed.push(refreshCallJson(db, ids, webUrl));
      pages.push(callBodies(db, ids, webUrl));
    }
    const objects = Promise.all(refreshed).then(() => mark('call_json'));
    const calls = (async () => {
      for (const made of pages) await write(await made);
      mark('calls');
    })();
    const boards = (async () => {
      await objects;
      for (let i = 0; i < touched.markets.length; i += batchMarkets) await write(await marketEntries(touched.markets.slice(i, i + batchMarkets)));
      await write(await globalEntries());
      mark('boards');
    })();
    const lists = (async () => {
      if (patching) {
        // The patch covers the owners of the changed calls; anyone else (a new person) is made from Postgres.
        const patches = await listPatches(db, touched.calls, cached, webUrl);
        mark('lists_read');
        const owners = new Set(patches.map((p) => p.userId));
        for (const id of touched.lists) if (!owners.has(id)) exact.add(id);
        const patched = await listPatcher.patch(patches);
        stats.written += patched.written;
        for (const id of patched.untouched) exact.add(id);
        const later = patches.map((p) => p.userId).filter((id) => !exact.has(id));
        if (later.length > 0) await deps.redis.sadd(keys.dirtyRecords, ...later.map((id) => `lists:${id}`));
        stats.patched = later.length;
        mark('lists_patched');
      } else {
        for (const id of touched.lists) exact.add(id);
      }
      // Lists made from Postgres aggregate the cached Call objects, and show a call only once its page is written.
      await calls;
      const ids = [...exact];
      for (let i = 0; i < ids.length; i += batchUsers) await write(await userBodies(db, ids.slice(i, i + batchUsers), webUrl, 'lists'));
      mark('lists');
    })();
    // Every path settles before the build ends (no query outlives a failed build); the first failure fails it.
    const done = await Promise.allSettled([records, ...refreshed, ...pages, calls, boards, lists]);
    const failed = done.find((d): d is PromiseRejectedResult => d.status === 'rejected');
    if (failed) throw failed.reason;
    stats.calls = touched.calls.length;
    stats.users = touched.users.length;
    stats.markets = touched.markets.length;
  }

  async function run(requestedFull: boolean): Promise<RecordBuildStats> {
    const started = deps.clock.now();
    const t0 = performance.now();
    const full = requestedFull || lastFullAt === undefined || started - lastFullAt >= fullEveryMs;
    const members = await popDirty();
    const stats: RecordBuildStats = { full, calls: 0, users: 0, markets: 0, written: 0, ms: 0 };
    try {
      const dirty = parseDirty(members);
      if (dirty.ignored.length > 0) deps.logger.warn({ ignored: dirty.ignored.slice(0, 10), count: dirty.ignored.length }, 'unknown dirty record members ignored');
      if (full) {
        await buildEverything(stats);
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
