import type { Redis } from 'ioredis';
import { createSnapshotTrigger } from '@pm/shared/queues';
import { redisKeys } from '@pm/shared/redis';
import type { Config } from '@pm/shared/config';
import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import type { OrderBook } from '@pm/shared/domain';
import { systemClock, type Clock } from './clock.js';
import { createGammaClient } from './gamma-client.js';
import { createCatalogSync, type CatalogSync, type CatalogSyncStats, type SyncResult } from './catalog-sync.js';
import { loadOutcomes } from './catalog-db.js';
import type { CatalogRows } from './catalog-map.js';
import { OutcomeDirectory } from './outcome-directory.js';
import { createSettlement, type SettleMarket } from './settlement.js';
import { createDirtyEvents, type SnapshotTriggerLike } from './dirty-events.js';
import { createChancePublisher } from './chance-publisher.js';
import { createFeedHealth } from './feed-health.js';
import { createMarketHandler, type MarketHandlerStats } from './market-handler.js';
import { createMarketFeed, type MarketFeedStats } from './market-feed.js';
import { createBookResync, type BookResyncStats } from './book-resync.js';
import { createSportsFeed } from './sports-feed.js';
import { createGamesWriter } from './games-writer.js';
import { createHistoryClient } from './history-client.js';
import { createHistoryRecorder, type HistoryRecorderStats } from './history-recorder.js';

/**
 * The ingestor, assembled from its parts (catalog sync, market feed, sports feed, settlement
 * producer, Redis publishers). Everything it needs is passed in, so a test runs it in-process
 * against a fake exchange with its own database and Redis prefix.
 */

export interface IngestorTuning {
  /**
   * Market channel: assets per socket (200), PING interval (10 s), recycle after this long with
   * neither data nor PONG (120 s; two unanswered PINGs in a row recycle sooner).
   */
  maxAssetsPerSocket?: number;
  pingIntervalMs?: number;
  marketSilenceMs?: number;
  /** Sports channel: recycle after this long without any frame (45 s). */
  sportsSilenceMs?: number;
  /** Reconnect backoff of both channels (500 ms doubling to 10 s, jittered). */
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  /** REST book resync after a reconnect: grace for the initial dump (3 s), pace between requests (100 ms). */
  resyncDelayMs?: number;
  resyncPaceMs?: number;
  /** Batching of games writes (500 ms). Chances and dirty events have no delay to tune (coalesced-write.ts). */
  gamesFlushMs?: number;
  /** Re-confirm an unchanged live chance's timestamp this often (30 s). */
  chanceReconfirmMs?: number;
  /** Catalog: least time between page requests (50 ms), retry delay (500 ms), attempts (4), refresh debounce (1 s). */
  catalogPageDelayMs?: number;
  catalogRetryDelayMs?: number;
  catalogAttempts?: number;
  catalogRefreshDebounceMs?: number;
  /** Price history: between batched point inserts (5 s), and the most time between two points of an open market (60 s). */
  historyFlushMs?: number;
  historyMinuteMs?: number;
  /** Run the periodic catalog sync (every CATALOG_SYNC_SECONDS); default true. */
  periodicSync?: boolean;
  /** Connect the sports channel; default true. */
  sportsFeed?: boolean;
}

export interface IngestorOptions {
  config: Pick<
    Config,
    'GAMMA_URL' | 'CLOB_URL' | 'CLOB_WS_URL' | 'SPORTS_WS_URL' | 'REDIS_PREFIX' | 'CATALOG_SYNC_SECONDS'
  >;
  db: Db;
  /** Used for chance/feed writes and as BullMQ's connection: create it with maxRetriesPerRequest: null. */
  redis: Redis;
  logger: Logger;
  clock?: Clock;
  /** Defaults to `createSnapshotTrigger` on `redis` (and is then closed by `stop()`). */
  trigger?: SnapshotTriggerLike;
  tuning?: IngestorTuning;
}

export interface IngestorStats {
  market: MarketHandlerStats & { sockets: MarketFeedStats; resync: BookResyncStats };
  sports: { frames: number; updates: number; malformed: number; reconnects: number; games: number };
  catalog: CatalogSyncStats & { outcomes: number };
  chances: { published: number; writes: number };
  history: HistoryRecorderStats;
}

export interface Ingestor {
  /** Initial catalog sync, load outcomes, then the market feed, the sports feed and the periodic sync. */
  start(): Promise<void>;
  /** Close sockets, flush pending writes, close the queue and trigger. Does not close `db` or `redis`. */
  stop(): Promise<void>;
  stats(): IngestorStats;
  /** The local order book of a token (tests and diagnostics); undefined before its first book. */
  book(tokenId: string): OrderBook | undefined;
  syncCatalog(): Promise<SyncResult>;
  /** Wait for every batched write (chances, dirty events, games, feed health) to reach Redis/Postgres. */
  flush(): Promise<void>;
  catalog: CatalogSync;
}

export function createIngestor(opts: IngestorOptions): Ingestor {
  const { config, db, redis } = opts;
  const logger = opts.logger;
  const clock = opts.clock ?? systemClock;
  const t = opts.tuning ?? {};
  const keys = redisKeys(config.REDIS_PREFIX);
  const ownTrigger = opts.trigger === undefined;
  const trigger =
    opts.trigger ?? createSnapshotTrigger({ redis, prefix: config.REDIS_PREFIX, logger });

  const outcomes = new OutcomeDirectory();
  // Marks go to the trigger only after the chances they stand for are in Redis (dirty-events.ts).
  const dirty = createDirtyEvents({ trigger, logger, before: () => publisher.flush() });
  // A resolution's outbox row makes the relay mark its event stale (services/worker/src/outbox).
  const settlement = createSettlement({ db, logger });
  const marketHealth = createFeedHealth({ redis, key: keys.feed, announce: keys.feedAnnounce, channel: 'market', clock, logger });
  const sportsHealth = createFeedHealth({ redis, key: keys.feed, announce: keys.feedAnnounce, channel: 'sports', clock, logger });

  let feedStarted = false;

  const gamma = createGammaClient({
    baseUrl: config.GAMMA_URL,
    logger,
    retryDelayMs: t.catalogRetryDelayMs,
    attempts: t.catalogAttempts,
  });

  const resolve = (r: SettleMarket) => settlement.resolve(r);

  const catalog = createCatalogSync({
    db,
    gamma,
    logger,
    clock,
    resolve,
    pageDelayMs: t.catalogPageDelayMs,
    refreshDebounceMs: t.catalogRefreshDebounceMs,
    onRows: (rows) => learnOutcomes(rows),
    onVanished: (eventId) => {
      const tokens = outcomes.closeEvent(eventId);
      if (!feedStarted || tokens.length === 0) return;
      marketFeed.unsubscribe(tokens);
      for (const tokenId of tokens) handler.forget(tokenId);
    },
    onChanged: async (ids) => {
      for (const id of ids) dirty.mark(id);
      await trigger.markCatalogChanged();
    },
  });

  // Price history of each market's first outcome: fed by every moved chance, backfilled on first sight.
  const history = createHistoryRecorder({
    db,
    redis,
    keys,
    fetchHistory: createHistoryClient({ clobUrl: config.CLOB_URL }),
    clock,
    logger: logger.child({ part: 'history' }),
    firstOutcomeMarket: (tokenId) => {
      const ref = outcomes.get(tokenId);
      return ref !== undefined && ref.outcomeIndex === 0 && !ref.closed ? ref.marketId : undefined;
    },
    flushMs: t.historyFlushMs,
    minuteMs: t.historyMinuteMs,
  });

  const publisher = createChancePublisher({
    redis,
    keys,
    clock,
    logger,
    onMoved: (tokenId, chance) => history.offer(tokenId, chance),
    isLive: (tokenId) => marketFeed.isLive(tokenId),
    reconfirmMs: t.chanceReconfirmMs,
  });

  const handler = createMarketHandler({
    outcomes,
    publisher,
    markDirty: (eventId) => dirty.mark(eventId),
    resolve: (r) => {
      settlement.resolve(r).catch((err: unknown) => logger.error({ err, marketId: r.marketId }, 'recording a ws resolution failed'));
    },
    requestRefresh: (ref) => catalog.requestRefresh(ref),
    resyncBook: (tokenId) => resync.refetch(tokenId),
    clock,
    logger,
  });

  const marketFeed = createMarketFeed({
    url: `${config.CLOB_WS_URL}/ws/market`,
    logger: logger.child({ feed: 'market' }),
    onFrame: (text) => handler.handleFrame(text),
    // Life, not only data: a quiet socket whose PONGs keep coming is a live feed (PROTOCOL.md §1).
    onAlive: () => marketHealth.data(),
    onConnectionChange: (up) => marketHealth.connected(up),
    onSubscribed: (tokens, reconnect) => {
      if (reconnect) resync.afterResubscribe(tokens, clock.now());
    },
    maxAssetsPerSocket: t.maxAssetsPerSocket,
    pingIntervalMs: t.pingIntervalMs,
    silenceMs: t.marketSilenceMs,
    reconnectInitialMs: t.reconnectInitialMs,
    reconnectMaxMs: t.reconnectMaxMs,
  });

  const resync = createBookResync({
    clobUrl: config.CLOB_URL,
    logger: logger.child({ feed: 'book-resync' }),
    clock,
    lastBookAt: (tokenId) => handler.lastBookAt(tokenId),
    isSubscribed: (tokenId) => marketFeed.isSubscribed(tokenId),
    applyBook: (m) => handler.applyBook(m),
    delayMs: t.resyncDelayMs,
    paceMs: t.resyncPaceMs,
  });

  const games = createGamesWriter({ db, logger, markDirty: (eventId) => dirty.mark(eventId), flushMs: t.gamesFlushMs });
  const sportsFeed = createSportsFeed({
    url: `${config.SPORTS_WS_URL}/ws`,
    logger: logger.child({ feed: 'sports' }),
    onUpdate: (u) => games.offer(u),
    onFrame: () => sportsHealth.data(),
    onConnectionChange: (up) => sportsHealth.connected(up),
    silenceMs: t.sportsSilenceMs,
    reconnectInitialMs: t.reconnectInitialMs,
    reconnectMaxMs: t.reconnectMaxMs,
  });

  /** Keep the in-memory outcomes current; subscribe tokens seen for the first time, drop closed ones. */
  function learnOutcomes(rows: CatalogRows) {
    const closedMarkets = new Set(rows.markets.filter((m) => m.closed).map((m) => m.id));
    const eventOf = new Map(rows.markets.map((m) => [m.id, m.event_id]));
    const subscribe: string[] = [];
    const unsubscribe: string[] = [];
    for (const o of rows.outcomes) {
      const eventId = eventOf.get(o.market_id);
      if (!eventId) continue;
      const closed = closedMarkets.has(o.market_id);
      const change = outcomes.upsert({
        tokenId: o.token_id,
        marketId: o.market_id,
        eventId,
        outcomeIndex: o.outcome_index,
        name: o.name,
        catalogPrice: o.catalog_price,
        closed,
      });
      if (!closed && (change.isNew || change.closedChanged)) subscribe.push(o.token_id);
      if (closed && change.closedChanged) unsubscribe.push(o.token_id);
      // A token without a book yet shows its catalog price (the display rule's fallback), so every
      // open outcome has a chance in Redis before its first book arrives.
      if (!closed && feedStarted && (change.isNew || change.priceChanged)) handler.recompute(o.token_id);
    }
    if (!feedStarted) return;
    if (subscribe.length > 0) marketFeed.subscribe(subscribe);
    if (unsubscribe.length > 0) {
      marketFeed.unsubscribe(unsubscribe);
      for (const tokenId of unsubscribe) handler.forget(tokenId);
    }
  }

  const syncCatalog = () => catalog.syncCatalog();

  async function flush() {
    await publisher.flush();
    await history.flush();
    await games.flush();
    await dirty.flush();
    await marketHealth.flush();
    await sportsHealth.flush();
  }

  let stopping: Promise<void> | undefined;

  return {
    catalog,
    syncCatalog,
    flush,
    async start() {
      try {
        await syncCatalog();
      } catch (err) {
        // Serve from what Postgres already holds; the periodic sync tries again.
        logger.error({ err }, 'initial catalog sync failed; starting from the stored catalog');
      }
      for (const ref of await loadOutcomes(db)) outcomes.upsert(ref);
      feedStarted = true;
      marketHealth.connected(false);
      const open = outcomes.openTokens();
      marketFeed.subscribe(open);
      for (const tokenId of open) handler.recompute(tokenId);
      logger.info({ tokens: open.length, outcomes: outcomes.size }, 'market feed started');
      if (t.sportsFeed !== false) sportsFeed.start();
      if (t.periodicSync !== false) {
        catalog.start(config.CATALOG_SYNC_SECONDS * 1000);
      }
    },
    stop() {
      stopping ??= (async () => {
        await catalog.stop();
        await Promise.all([marketFeed.close(), sportsFeed.close(), resync.close()]);
        // Writers before the trigger: flushing games and chances can still mark events dirty.
        await publisher.close();
        await history.close();
        await games.close();
        await dirty.close();
        await marketHealth.close();
        await sportsHealth.close();
        if (ownTrigger) await trigger.close();
      })();
      return stopping;
    },
    book: (tokenId) => handler.book(tokenId),
    stats() {
      const s = sportsFeed.stats();
      return {
        market: { ...handler.stats(), sockets: marketFeed.stats(), resync: resync.stats() },
        sports: { ...s, games: games.stats().games },
        catalog: { ...catalog.stats(), outcomes: outcomes.size },
        chances: publisher.stats(),
        history: history.stats(),
      };
    },
  };
}
