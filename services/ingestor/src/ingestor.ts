import type { Redis } from 'ioredis';
import { createSnapshotTrigger } from '@pm/shared/queues';
import { redisKeys } from '@pm/shared/redis';
import type { Config } from '@pm/shared/config';
import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import type { OrderBook } from '@pm/shared/domain';
import { storedTrade } from '@pm/shared/trades';
import { systemClock, type Clock } from './common/clock.js';
import { createGammaClient } from './catalog/gamma-client.js';
import { createCatalogSync, type CatalogSync, type CatalogSyncStats, type SyncResult } from './catalog/catalog-sync.js';
import { loadOutcomes } from './catalog/catalog-db.js';
import { OutcomeDirectory } from './catalog/outcome-directory.js';
import { createResolutionRecorder } from './resolution/record-resolution.js';
import { redisLiveChances } from './resolution/closing-chances.js';
import { createDirtyEvents, type SnapshotTriggerLike } from './common/dirty-events.js';
import { createChancePublisher } from './market-feed/chance-publisher.js';
import { createBookPublisher } from './market-feed/book-publisher.js';
import { createFeedHealth } from './common/feed-health.js';
import { createMarketHandler, type MarketHandlerStats } from './market-feed/market-handler.js';
import { createMarketFeed, type MarketFeedStats } from './market-feed/market-feed.js';
import { createBookResync, type BookResyncStats } from './market-feed/book-resync.js';
import { createMarketSubscriptions } from './market-feed/subscriptions.js';
import { createSportsFeed } from './sports/sports-feed.js';
import { createGamesWriter } from './sports/games-writer.js';
import { createHistoryClient } from './history/history-client.js';
import { createHistoryRecorder, type HistoryRecorderStats } from './history/history-recorder.js';
import { createIngestorStream } from './stream/stream-out.js';
import { createTradeRecorder, type TradeRecorderStats } from './trades/trade-recorder.js';

/**
 * The ingestor, assembled from its parts (catalog sync, market feed, sports feed, resolution
 * recorder, Redis publishers). Everything it needs is passed in, so a test runs it in-process
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
  /** Trade tape: between a batch's first print and its write (1 s). */
  tradesFlushMs?: number;
  /** Run the periodic catalog sync (every CATALOG_SYNC_SECONDS); default true. */
  periodicSync?: boolean;
  /** How long a closed market's outcomes stay known (a late market_resolved frame still finds them): 1 h. */
  closedOutcomesMs?: number;
  /** Connect the sports channel; default true. */
  sportsFeed?: boolean;
}

export interface IngestorOptions {
  config: Pick<
    Config,
    'GAMMA_URL' | 'CLOB_URL' | 'CLOB_WS_URL' | 'SPORTS_WS_URL' | 'REDIS_PREFIX' | 'CATALOG_SYNC_SECONDS' | 'CATALOG_VANISH_GRACE_SECONDS' | 'CATALOG_VANISH_SYNCS'
  >;
  db: Db;
  /** Used for chance/feed writes and as BullMQ's connection: create it with maxRetriesPerRequest: null. */
  redis: Redis;
  logger: Logger;
  clock?: Clock;
  /** Defaults to `createSnapshotTrigger` on `redis` (and is then closed by `stop()`). */
  trigger?: SnapshotTriggerLike;
  tuning?: IngestorTuning;
  /**
   * Work shared with other ingestors (sharing/): subscribe only the markets this one owns, and sync
   * the catalog at start only when it leads. Default: everything is this ingestor's.
   */
  share?: { ownsMarket(marketId: string): boolean; isLeader(): boolean };
}

export interface IngestorStats {
  market: MarketHandlerStats & { sockets: MarketFeedStats; resync: BookResyncStats; bookSnapshots: { written: number; held: number } };
  sports: { frames: number; updates: number; malformed: number; reconnects: number; games: number };
  catalog: CatalogSyncStats & { outcomes: number };
  chances: { published: number; writes: number };
  history: HistoryRecorderStats;
  trades: TradeRecorderStats;
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
  /** Wait for every pending write (resolutions, chances, dirty events, games, history, feed health) to reach Redis/Postgres. */
  flush(): Promise<void>;
  catalog: CatalogSync;
  /** With `share`: subscribe the open tokens now owned, drop those no longer owned (after a change of the share). */
  reassign(): void;
  /** With `share`, on an ingestor that does not sync the catalog: learn the catalog the leader wrote to Postgres. */
  reloadOutcomes(): Promise<void>;
}

export function createIngestor(opts: IngestorOptions): Ingestor {
  const { config, db, redis, logger } = opts;
  const clock = opts.clock ?? systemClock;
  const t = opts.tuning ?? {};
  const keys = redisKeys(config.REDIS_PREFIX);
  const ownTrigger = opts.trigger === undefined;
  const trigger = opts.trigger ?? createSnapshotTrigger({ redis, prefix: config.REDIS_PREFIX, logger });

  // Stages are built in the order they depend on each other: each receives the ones it calls.
  // The three asks that flow back to a stage built later are connected at the end, by name.

  // Ground every stage stands on: where each token belongs, resolutions, feed health.
  const outcomes = new OutcomeDirectory(() => clock.now());
  const closedOutcomesMs = t.closedOutcomesMs ?? 3_600_000;
  /** The outcomes to load: every open one, and those closed within closedOutcomesMs. */
  const knownOutcomes = () => loadOutcomes(db, new Date(clock.now() - closedOutcomesMs));
  /** Forgets the outcomes closed longer ago than closedOutcomesMs (after each catalog page and reload). */
  const forgetClosed = () => outcomes.forgetClosed(clock.now() - closedOutcomesMs);
  // What GET /api/v1/stream hears from the ingestor: moved chances and match states.
  const stream = createIngestorStream({ redis, prefix: config.REDIS_PREFIX, logger, clock, outcomes });
  // A resolution's outbox row makes the relay mark its event stale (services/worker/src/outbox).
  // A market closed or resolved here records its closing chances from the chances it displayed:
  // the publisher's pending writes first (it is built below), then Redis.
  const liveChances = redisLiveChances(redis, keys.chances, () => publisher.flush());
  const resolutions = createResolutionRecorder({ db, logger, liveChances });
  const marketHealth = createFeedHealth({ redis, key: keys.feed, announce: keys.feedAnnounce, channel: 'market', clock, logger });
  const sportsHealth = createFeedHealth({ redis, key: keys.feed, announce: keys.feedAnnounce, channel: 'sports', clock, logger });

  // History: price history of each market's first outcome, fed by every moved chance, backfilled on first sight.
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

  // Trade tape: every print of the match feed, recorded once; what this ingestor added is streamed.
  const trades = createTradeRecorder({
    db,
    logger: logger.child({ part: 'trades' }),
    onRecorded: stream.trades,
    flushMs: t.tradesFlushMs,
  });

  // Market feed: chances to Redis, stale events to the snapshot trigger, frames into books.
  const publisher = createChancePublisher({
    redis,
    keys,
    clock,
    logger,
    onMoved: (tokenId, chance, quote, chanceMoved) => {
      if (chanceMoved) history.offer(tokenId, chance);
      stream.price(tokenId, chance, quote);
    },
    reconfirmMs: t.chanceReconfirmMs,
  });
  // Marks go to the trigger only after the chances they stand for are in Redis (dirty-events.ts).
  const dirty = createDirtyEvents({ trigger, logger, before: publisher.flush });
  // Reads the handler's books, which tells it of every change (it is only asked after a change).
  const books = createBookPublisher({
    redis,
    prefix: config.REDIS_PREFIX,
    outcomes,
    book: (tokenId) => handler.book(tokenId),
    top: (tokenId) => handler.top(tokenId),
    clock,
    logger: logger.child({ part: 'books' }),
  });
  const handler = createMarketHandler({
    outcomes,
    publisher,
    markDirty: dirty.mark,
    onBookChanged: (tokenId) => books.changed(tokenId),
    onTrade: (tokenId, print, ordinal) => trades.offer(tokenId, storedTrade(print, ordinal)),
    resolve: (r) => {
      resolutions.resolve(r).catch((err: unknown) => logger.error({ err, marketId: r.marketId }, 'recording a ws resolution failed'));
    },
    clock,
    logger,
  });
  const resync = createBookResync({
    clobUrl: config.CLOB_URL,
    logger: logger.child({ feed: 'book-resync' }),
    clock,
    lastBookAt: handler.lastBookAt,
    // The sockets hold every open outcome this ingestor owns (subscriptions.ts).
    isSubscribed: (tokenId) => subscriptions.holds(tokenId),
    applyBook: handler.applyBook,
    delayMs: t.resyncDelayMs,
    paceMs: t.resyncPaceMs,
  });
  const marketFeed = createMarketFeed({
    url: `${config.CLOB_WS_URL}/ws/market`,
    logger: logger.child({ feed: 'market' }),
    onFrame: handler.handleFrame,
    // Life, not only data: a quiet socket whose PONGs keep coming is a live feed (docs/protocol.md §1).
    onAlive: marketHealth.data,
    onConnectionChange: marketHealth.connected,
    onSubscribed: (tokens, reconnect) => {
      if (reconnect) resync.afterResubscribe(tokens, clock.now());
    },
    maxAssetsPerSocket: t.maxAssetsPerSocket,
    pingIntervalMs: t.pingIntervalMs,
    silenceMs: t.marketSilenceMs,
    reconnectInitialMs: t.reconnectInitialMs,
    reconnectMaxMs: t.reconnectMaxMs,
  });
  const share = opts.share;
  // A dropped token is forgotten by the books, the publisher's last-published copy and the book
  // publisher's last-written levels alike: the exchange closes thousands of markets a day.
  const forgetful = {
    recompute: handler.recompute,
    forget: (tokenId: string) => {
      handler.forget(tokenId);
      publisher.forget(tokenId);
      books.forget(tokenId);
    },
  };
  const subscriptions = createMarketSubscriptions({ outcomes, feed: marketFeed, handler: forgetful, owns: share && ((marketId) => share.ownsMarket(marketId)) });

  // Catalog: pages of events into Postgres; its rows keep the outcomes and the subscriptions current.
  const catalog = createCatalogSync({
    db,
    gamma: createGammaClient({ baseUrl: config.GAMMA_URL, logger, retryDelayMs: t.catalogRetryDelayMs, attempts: t.catalogAttempts }),
    logger,
    clock,
    resolve: resolutions.resolve,
    liveChances,
    pageDelayMs: t.catalogPageDelayMs,
    refreshDebounceMs: t.catalogRefreshDebounceMs,
    vanishSyncs: config.CATALOG_VANISH_SYNCS,
    vanishGraceMs: config.CATALOG_VANISH_GRACE_SECONDS * 1000,
    onRows: (rows) => {
      subscriptions.learn(rows);
      forgetClosed();
    },
    onVanished: subscriptions.closeEvent,
    onChanged: (ids) => trigger.markCatalogChanged(ids),
  });

  // Sports: game states into Postgres, their events marked stale.
  const games = createGamesWriter({ db, logger, markDirty: dirty.mark, onStateChanged: stream.scores, flushMs: t.gamesFlushMs });
  const sportsFeed = createSportsFeed({
    url: `${config.SPORTS_WS_URL}/ws`,
    logger: logger.child({ feed: 'sports' }),
    onUpdate: games.offer,
    onFrame: sportsHealth.data,
    onConnectionChange: sportsHealth.connected,
    silenceMs: t.sportsSilenceMs,
    reconnectInitialMs: t.reconnectInitialMs,
    reconnectMaxMs: t.reconnectMaxMs,
  });

  // Asks to stages built after the asker: a `new_market` wants a catalog refresh, a crossed book a
  // REST fetch, and an unchanged chance is re-confirmed while its socket is live.
  handler.onNewMarket(catalog.requestRefresh);
  handler.onCrossedBook(resync.refetch);
  publisher.keepConfirmed(marketFeed.isLive);

  // The batched writers in the order their writes feed each other: chances (which record history
  // and mark events) before the marks, the marks before feed health.
  const writers = [publisher, history, trades, games, stream, dirty, marketHealth, sportsHealth, books];

  async function flush() {
    await resolutions.idle();
    for (const w of writers) await w.flush();
  }

  let stopping: Promise<void> | undefined;

  return {
    catalog,
    syncCatalog: catalog.syncCatalog,
    flush,
    reassign() {
      const moved = subscriptions.reassign();
      if (moved.gained + moved.lost > 0) logger.info(moved, 'market feed reassigned');
    },
    async reloadOutcomes() {
      subscriptions.reload(await knownOutcomes());
      forgetClosed();
    },
    async start() {
      try {
        if (share === undefined || share.isLeader()) await catalog.syncCatalog();
      } catch (err) {
        // Serve from what Postgres already holds; the periodic sync tries again.
        logger.error({ err }, 'initial catalog sync failed; starting from the stored catalog');
      }
      for (const ref of await knownOutcomes()) outcomes.upsert(ref);
      marketHealth.connected(false);
      const tokens = subscriptions.start();
      logger.info({ tokens, outcomes: outcomes.size }, 'market feed started');
      if (t.sportsFeed !== false) sportsFeed.start();
      if (t.periodicSync !== false) catalog.start(config.CATALOG_SYNC_SECONDS * 1000);
    },
    stop() {
      stopping ??= (async () => {
        await catalog.stop();
        await Promise.all([marketFeed.close(), sportsFeed.close(), resync.close()]);
        // Writers before the trigger: flushing games and chances can still mark events dirty.
        for (const w of writers) await w.close();
        if (ownTrigger) await trigger.close();
      })();
      return stopping;
    },
    book: handler.book,
    stats() {
      return {
        market: { ...handler.stats(), sockets: marketFeed.stats(), resync: resync.stats(), bookSnapshots: books.stats() },
        sports: { ...sportsFeed.stats(), games: games.stats().games },
        catalog: { ...catalog.stats(), outcomes: outcomes.size },
        chances: publisher.stats(),
        history: history.stats(),
        trades: trades.stats(),
      };
    },
  };
}
