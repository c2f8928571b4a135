import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import { EMPTY_SPORTS, indexSports, mapEvents, type CatalogRows, type SportsIndex } from './catalog-map.js';
import type { LiveChances } from '../resolution/closing-chances.js';
import { closeVanishedEvent, forgetCatalogMisses, openEventIds, recordCatalogMiss, writeCatalogPage } from './catalog-db.js';
import { catalogGameRows, writeCatalogGames } from './catalog-games.js';
import type { GammaClient } from './gamma-client.js';
import type { GammaEvent } from '@pm/shared/exchange';
import type { Clock } from '../common/clock.js';
import type { MarketResolution } from '../resolution/record-resolution.js';
import { sleep } from '@pm/shared/wait';

/**
 * The catalog sync (docs/design.md "The flow" 1): page the catalog's open events busiest first until an
 * empty page, pacing pages, and upsert each page in its own transaction. A page that still fails
 * after the client's retries fails the sync: it is logged and the catalog stays as it was (pages
 * already written are kept, nothing is closed). Events that left the open list are closed only
 * once the catalog confirms them closed, never on absence alone — a page boundary shifting under a
 * busy sync would otherwise close live events. Such an event is asked for by id: `GET /events?id=`,
 * and when the list queries no longer show it at all, `GET /events/:id`; it is then written as the
 * catalog answers (closed, with its resolutions). A 404 there (the exchange does not know the event)
 * is only counted: absent is not void. The event stays exactly as it was until `vanishSyncs` syncs
 * in a row have found it missing over at least `vanishGraceMs`; only then is it closed here without a
 * resolution, so it stops being asked for every sync. Any answer for it in between forgets the misses.
 * Leagues come from the exchange's sports list (`GET /sports`), read once per full sync.
 */

export interface SyncResult {
  /** Events and markets read from the catalog (parsed, written). */
  events: number;
  markets: number;
  /** Events whose rows were inserted or changed. */
  changedEventIds: string[];
  /** Events and markets that could not be parsed or written, and were skipped. */
  skipped: number;
  durationMs: number;
}

export interface CatalogSyncOptions {
  db: Db;
  gamma: GammaClient;
  logger: Logger;
  clock: Clock;
  /** The displayed chances a market closed here records as its closing chances (resolution/closing-chances.ts). */
  liveChances?: LiveChances;
  /** Records resolutions the catalog shows (closed market with final prices). */
  resolve: (r: MarketResolution) => Promise<unknown>;
  /** Every page's rows after they are written (the live feed learns new tokens and catalog prices). */
  onRows?: (rows: CatalogRows) => void;
  /**
   * After a sync or refresh, the events changed in ways the outbox does not carry: catalog game
   * states, and events closed here because the catalog no longer knows them. Every other change is
   * in the `events-changed` outbox row written with its page (catalog-db.ts), which the worker's
   * relay delivers: handing those on here as well had the worker re-read and rebuild every event a
   * sync changed a second time.
   */
  onChanged?: (eventIds: string[]) => Promise<void>;
  /** An event the catalog no longer knows was closed here: its tokens are no longer wanted. */
  onVanished?: (eventId: string) => void;
  /** Events per page; default 100. */
  pageSize?: number;
  /** Least time between two catalog requests; default 50 ms. */
  pageDelayMs?: number;
  /** Safety stop against a catalog that ignores `offset`; default 500 pages. */
  maxPages?: number;
  /** Events that left the open list confirmed per sync (one request each); default 50. */
  confirmLimit?: number;
  /** Absent is not void: a 404 by id closes the event only after this many syncs in a row found it missing; default 3. */
  vanishSyncs?: number;
  /** … and the first of those misses is at least this old; default one hour. */
  vanishGraceMs?: number;
  /** Delay that coalesces `requestRefresh` calls; default 1 s. */
  refreshDebounceMs?: number;
}

export interface CatalogSyncStats {
  /** Full syncs that finished / failed: the first, the periodic ones and those a `new_market` asked for. */
  syncs: number;
  failures: number;
  last: SyncResult | null;
  /** Events absent from the open list that the catalog answered for by id (and were written as answered). */
  confirmedAbsent: number;
  /** Events the catalog no longer knows at all (404 by id over the grace period): closed here. */
  vanished: number;
  /** 404s by id counted without closing anything (still within the grace period). */
  missed: number;
}

export interface CatalogSync {
  syncCatalog(): Promise<SyncResult>;
  stats(): CatalogSyncStats;
  /** Re-read events by id or slug and upsert them (whatever their state). Returns changed event ids. */
  refreshEvents(refs: Array<{ id?: string | null; slug?: string | null }>): Promise<string[]>;
  /** Debounced refresh of the given events, or of the whole catalog when none is named (ws `new_market`). */
  requestRefresh(ref?: { id?: string | null; slug?: string | null }): void;
  /** Sync every `intervalMs` (the first one after `intervalMs`). */
  start(intervalMs: number): void;
  stop(): Promise<void>;
}


export function createCatalogSync(opts: CatalogSyncOptions): CatalogSync {
  const { db, gamma, logger, clock } = opts;
  const pageSize = opts.pageSize ?? 100;
  const pageDelayMs = opts.pageDelayMs ?? 50;
  const maxPages = opts.maxPages ?? 500;
  const confirmLimit = opts.confirmLimit ?? 50;
  const refreshDebounceMs = opts.refreshDebounceMs ?? 1000;
  const vanishSyncs = opts.vanishSyncs ?? 3;
  const vanishGraceMs = opts.vanishGraceMs ?? 3_600_000;

  let lastRequestAt = 0;
  let chain: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let refreshTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  const pendingRefs: Array<{ id?: string | null; slug?: string | null }> = [];
  let pendingFullSync = false;
  const stats: CatalogSyncStats = { syncs: 0, failures: 0, last: null, confirmedAbsent: 0, vanished: 0, missed: 0 };
  /** The last sports list read; kept when a later read fails (leagues rarely change). */
  let sports: SportsIndex = EMPTY_SPORTS;

  async function readSports() {
    try {
      const list = await paced(() => gamma.sports());
      if (list.length > 0) sports = indexSports(list);
    } catch (err) {
      logger.warn({ err }, 'reading the sports list failed; keeping the previous one');
    }
  }

  /** Every full sync goes through here, so `ingestor_catalog_syncs_total` counts them all. */
  async function countedSync(): Promise<SyncResult> {
    try {
      const r = await runSync();
      stats.syncs++;
      stats.last = r;
      return r;
    } catch (err) {
      stats.failures++;
      throw err;
    }
  }

  /** Syncs and refreshes never overlap: they write the same rows. */
  function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = chain.then(fn, fn);
    chain = run.catch(() => {});
    return run;
  }

  /** Pages are paced: the catalog throttles (~500 /events per 10 s). */
  async function paced<T>(fn: () => Promise<T>): Promise<T> {
    const wait = lastRequestAt + pageDelayMs - Date.now();
    if (wait > 0) await sleep(wait);
    lastRequestAt = Date.now();
    return fn();
  }

  /** Writes a page; `changed` gains every event whose rows changed, `direct` those not in the outbox (`onChanged`). */
  async function writeEvents(events: GammaEvent[], changed: Set<string>, direct: Set<string>): Promise<{ markets: number; skipped: number }> {
    const rows = mapEvents(events, sports);
    const written = await writeCatalogPage(db, rows, opts.liveChances);
    for (const id of written.changedEventIds) changed.add(id);
    try {
      const leagues = new Map(rows.events.map((e) => [e.id, e.league]));
      for (const id of await writeCatalogGames(db, catalogGameRows(events, (id) => leagues.get(id) ?? null))) {
        changed.add(id);
        direct.add(id);
      }
    } catch (err) {
      // Game state is the sports channel's first; the next sync fills it again.
      logger.warn({ err }, 'writing catalog game states failed');
    }
    opts.onRows?.(rows);
    for (const r of rows.resolutions) {
      try {
        await opts.resolve({ marketId: r.marketId, winningOutcomeIndex: r.winningOutcomeIndex, voided: r.voided, source: 'catalog' });
      } catch (err) {
        // The next sync sees the closed market again and retries.
        logger.error({ err, marketId: r.marketId }, 'recording a catalog resolution failed');
      }
    }
    return { markets: rows.markets.length, skipped: written.slugConflicts };
  }

  async function runSync(): Promise<SyncResult> {
    const started = clock.now();
    const seen = new Set<string>();
    const changed = new Set<string>();
    const direct = new Set<string>();
    let events = 0;
    let markets = 0;
    let skipped = 0;
    await readSports();
    for (let page = 0; page < maxPages; page++) {
      const offset = page * pageSize;
      const body = await paced(() => gamma.openEventsPage(offset, pageSize));
      if (body.events.length === 0 && body.skippedEvents === 0) break;
      skipped += body.skippedEvents + body.skippedMarkets;
      const fresh = body.events.filter((e) => !seen.has(e.id));
      for (const e of fresh) seen.add(e.id);
      const w = await writeEvents(fresh, changed, direct);
      events += fresh.length;
      markets += w.markets;
      skipped += w.skipped;
    }

    // Events we hold as open that the open list no longer shows: ask the catalog about each.
    const absent = (await openEventIds(db)).filter((id) => !seen.has(id));
    for (const id of absent.slice(0, confirmLimit)) {
      try {
        await confirmAbsent(id, changed, direct);
      } catch (err) {
        logger.warn({ err, eventId: id }, 'confirming an absent event failed; left as is');
      }
    }
    if (absent.length > confirmLimit) logger.info({ pending: absent.length - confirmLimit }, 'absent events left for the next sync');
    // Listed again (or answered by id): whatever misses they had are forgotten.
    try {
      await forgetCatalogMisses(db, [...seen]);
    } catch (err) {
      logger.warn({ err }, 'forgetting catalog misses failed; kept until the next sync');
    }

    const result: SyncResult = {
      events,
      markets,
      changedEventIds: [...changed],
      skipped,
      durationMs: clock.now() - started,
    };
    if (direct.size > 0) await opts.onChanged?.([...direct]);
    logger.info({ ...result, changedEventIds: result.changedEventIds.length }, 'catalog synced');
    return result;
  }

  /** Ask the catalog about one event it no longer lists as open, and write what it answers. */
  async function confirmAbsent(id: string, changed: Set<string>, direct: Set<string>) {
    const listed = (await paced(() => gamma.events({ id }))).events.filter((e) => e.id === id);
    const answer = listed.length > 0 ? listed : ((await paced(() => gamma.eventById(id)))?.events.filter((e) => e.id === id) ?? null);
    if (answer === null) {
      const { misses, firstMissedAt } = await recordCatalogMiss(db, id, new Date(clock.now()));
      const missingMs = clock.now() - firstMissedAt.getTime();
      if (misses < vanishSyncs || missingMs < vanishGraceMs) {
        stats.missed++;
        logger.info({ eventId: id, misses, missingMs }, 'event unknown to the catalog (404 by id); left as it is until its absence is confirmed');
        return;
      }
      if (await closeVanishedEvent(db, id, opts.liveChances)) {
        stats.vanished++;
        changed.add(id);
        direct.add(id);
        logger.warn({ eventId: id, misses, missingMs }, 'event unknown to the catalog (404 by id) over the grace period; closed without a resolution');
        opts.onVanished?.(id);
      }
      return;
    }
    if (answer.length === 0) {
      logger.debug({ eventId: id }, 'absent event answered unreadable by id; left as is');
      return;
    }
    stats.confirmedAbsent++;
    await forgetCatalogMisses(db, [id]);
    await writeEvents(answer, changed, direct);
  }

  async function runRefresh(refs: Array<{ id?: string | null; slug?: string | null }>): Promise<string[]> {
    const changed = new Set<string>();
    const direct = new Set<string>();
    const done = new Set<string>();
    for (const ref of refs) {
      const query: Record<string, string> | null = ref.id ? { id: ref.id } : ref.slug ? { slug: ref.slug } : null;
      if (!query) continue;
      const key = JSON.stringify(query);
      if (done.has(key)) continue;
      done.add(key);
      try {
        const body = await paced(() => gamma.events(query));
        if (body.events.length > 0) await writeEvents(body.events, changed, direct);
      } catch (err) {
        logger.warn({ err, query }, 'refreshing an event failed');
      }
    }
    if (direct.size > 0) await opts.onChanged?.([...direct]);
    return [...changed];
  }

  function schedule(intervalMs: number) {
    if (stopped) return;
    timer = setTimeout(() => {
      exclusive(countedSync)
        .catch((err: unknown) => logger.error({ err }, 'catalog sync failed; keeping the previous catalog'))
        .finally(() => schedule(intervalMs));
    }, intervalMs);
  }

  return {
    syncCatalog: () => exclusive(countedSync),
    stats: () => ({ ...stats }),
    refreshEvents: (refs) => exclusive(() => runRefresh(refs)),
    requestRefresh(ref) {
      if (stopped) return;
      if (ref && (ref.id || ref.slug)) pendingRefs.push(ref);
      else pendingFullSync = true;
      if (refreshTimer) return;
      refreshTimer = setTimeout(() => {
        refreshTimer = undefined;
        const refs = pendingRefs.splice(0);
        const full = pendingFullSync;
        pendingFullSync = false;
        const job = full ? exclusive(countedSync) : exclusive(() => runRefresh(refs));
        job.catch((err: unknown) => logger.error({ err }, 'catalog refresh failed'));
      }, refreshDebounceMs);
    },
    start(intervalMs) {
      stopped = false;
      schedule(intervalMs);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (refreshTimer) clearTimeout(refreshTimer);
      timer = undefined;
      refreshTimer = undefined;
      // A sync retrying against an unreachable catalog must not hold shutdown past its deadline:
      // wait a little for the page in flight, then let it finish (or fail) on its own.
      let waited: NodeJS.Timeout | undefined;
      await Promise.race([chain, new Promise<void>((r) => (waited = setTimeout(r, 3_000)))]);
      clearTimeout(waited);
    },
  };
}
