import http from 'node:http';
import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { createServiceMetrics, type ServiceMetrics } from '@pm/shared/metrics';
import type { Config } from '@pm/shared/config';
import type { Logger } from '@pm/shared/logger';
import { redisKeys } from '@pm/shared/redis';
import { createApp } from './app/app.js';
import { errorBody, ERROR_STATUS, type ErrorCode } from './http/errors.js';
import { ALLOWED_METHODS } from './http/respond.js';
import { CORS_HEADERS } from './http/cors.js';
import { responseUnderWay } from './http/node-internals.js';
import { frontHandler } from './front/front-handler.js';
import { apiReadiness, collectSnapshotAges, opsRoutes, requestObserver } from './ops/metrics.js';
import { createRateLimiter } from './http/rate-limit.js';
import { createReadyCache } from './front/ready-cache.js';
import { createSnapshotStore, type SnapshotStore } from './snapshots/snapshot-store.js';
import { listRanking } from './snapshots/snapshot-schemas.js';
import { createLivePrices } from './snapshots/live-prices.js';
import { createCursors } from './pages/cursor.js';
import { createPageReader } from './pages/pages.js';
import { createSharedRankings } from './pages/shared-rankings.js';
import { createCandleReader } from './pages/candles.js';
import { createApiReadPool } from './pages/read-pool.js';
import { createEventLookup } from './pages/event-lookup.js';
import { createOnDemandBuilds } from './snapshots/on-demand.js';
import { ApiError } from './http/errors.js';
import { createStreamHub, type StreamHub } from './stream/hub.js';
import { streamRoute } from './stream/route.js';
import { createOpenStreams } from './stream/open-streams.js';
import { STREAM_RETENTION_MS } from '@pm/shared/stream';

export interface ApiServerDependencies {
  config: Config;
  redis: Redis;
  logger: Logger;
  /** Unix ms; injectable for tests. */
  clock?: () => number;
  /** This process's Prometheus registry; one is made when not given. */
  metrics?: ServiceMetrics<'api'>;
  /**
   * Serve /metrics on the public port (one process and no separate metrics port: development and
   * tests). Otherwise the metrics are served on API_METRICS_PORT (main.ts, cluster-metrics.ts).
   */
  publicMetrics?: boolean;
  /** Collect snapshot_age_seconds in this process (false in a cluster worker: the primary does). */
  snapshotAges?: boolean;
}

export interface ApiServer {
  server: http.Server;
  snapshots: SnapshotStore;
  metrics: ServiceMetrics<'api'>;
  /** The open event streams of this process (`GET /api/v1/stream`). */
  streams: StreamHub;
  /** Ends every event stream: call it before waiting for the server to close, which open streams would hold up. */
  closeStreams(): Promise<void>;
  /** Stops the subscription, the stream reader and timers and closes the page reader's pool (the caller closes the server). */
  stop(): Promise<void>;
}

/**
 * One API process: the snapshot store (held snapshots, announcements), the ready responses, the rate
 * limiter, the Express app behind the front handler, and malformed HTTP answered in JSON.
 */
export function createApiServer(deps: ApiServerDependencies): ApiServer {
  const { config, redis, logger } = deps;
  const clock = deps.clock ?? Date.now;
  const metrics = deps.metrics ?? createServiceMetrics('api');
  if (deps.snapshotAges ?? true) collectSnapshotAges(metrics, redis, config.REDIS_PREFIX, clock);

  // Live prices from the event stream laid over the event snapshots (live-prices.ts), fed below.
  const livePrices = createLivePrices({ clock, logger });
  const snapshots = createSnapshotStore({ redis, prefix: config.REDIS_PREFIX, clock, logger, overlay: livePrices, companion: listRanking });
  const readyCache = createReadyCache(snapshots);
  const limiter = createRateLimiter({ redis, prefix: config.REDIS_PREFIX, limit: config.RATE_LIMIT_PER_MINUTE, trustProxy: config.TRUST_PROXY, logger });
  const observer = requestObserver(metrics, logger);
  // Postgres reads (pages/pages.ts: pages past the first, a person's pages, a call's page; pages/candles.ts):
  // small pools connected on first use, on the read replica when there is a fresh one (pages/read-pool.ts).
  const readDb = createApiReadPool(config, logger, metrics);
  const pages = createPageReader({
    db: readDb,
    webUrl: config.PUBLIC_WEB_URL,
    logger,
    sharedRankings: createSharedRankings({ redis, prefix: config.REDIS_PREFIX, logger }),
  });
  // The candles share the page reader's pool (closed with it), so they follow the replica and its fallback too.
  const candles = createCandleReader({ db: { query: readDb.query }, logger });
  // An event Postgres knows whose snapshots Redis does not hold (a closed one, retired): the worker builds them on request.
  const onDemand = createOnDemandBuilds({ redis, prefix: config.REDIS_PREFIX, store: snapshots, lookup: createEventLookup({ db: readDb, logger }), logger, clock });
  const marketEvents = redisKeys(config.REDIS_PREFIX).marketEvents;
  const marketEvent = async (marketId: string): Promise<string | null> => {
    try {
      return await redis.hget(marketEvents, marketId);
    } catch (err) {
      logger.warn({ err }, 'redis unavailable');
      throw new ApiError('unavailable', 'market data is unavailable right now; please try again shortly', { cause: err });
    }
  };
  const ops = opsRoutes({
    metrics,
    readiness: apiReadiness(redis, config.REDIS_PREFIX),
    logger,
    paths: deps.publicMetrics === false ? ['/healthz', '/readyz'] : ['/metrics', '/healthz', '/readyz'],
  });
  const streams = createStreamHub({
    redis,
    prefix: config.REDIS_PREFIX,
    logger,
    heartbeatMs: config.STREAM_HEARTBEAT_MS,
    maxBufferBytes: config.STREAM_CLIENT_BUFFER_BYTES,
    retentionSeconds: STREAM_RETENTION_MS / 1000,
  });
  const app = createApp({
    config,
    logger,
    ctx: { snapshots, live: () => snapshots.live(), clock, config, logger, pages, candles, readDb, cursors: createCursors(config.CURSOR_SECRET), marketEvent, onDemand },
    limiter,
    readyCache,
    observer,
    ops,
    stream: streamRoute({
      hub: streams,
      openStreams: createOpenStreams({ redis, prefix: config.REDIS_PREFIX, max: config.STREAM_MAX_PER_IP, holdMs: Math.max(3 * config.STREAM_HEARTBEAT_MS, 1_000), logger }),
      maxPerIp: config.STREAM_MAX_PER_IP,
      trustProxy: config.TRUST_PROXY,
      refreshMs: config.STREAM_HEARTBEAT_MS,
      logger,
    }),
  });
  const server = http.createServer(
    frontHandler({ app: app as unknown as http.RequestListener, readyCache, limiter, observer, logger }),
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(err, socket));
  snapshots.start();
  streams.watch((entries) => livePrices.offer(entries));
  return {
    server,
    snapshots,
    metrics,
    streams,
    closeStreams: () => streams.close(),
    stop: async () => {
      livePrices.stop();
      await streams.close();
      await snapshots.stop();
      await pages.close();
      await candles.close();
    },
  };
}

/** Node's parser errors: the JSON error body with a status that says what was wrong. */
const CLIENT_ERRORS: Readonly<Record<string, { status: number; reason: string; code: ErrorCode; message: string }>> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    code: 'headers_too_large',
    message: 'the request headers are too large',
  },
  HPE_INVALID_METHOD: {
    status: 405,
    reason: 'Method Not Allowed',
    code: 'method_not_allowed',
    message: 'unknown method: this API is read-only (GET, HEAD, OPTIONS)',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: 'Request Timeout', code: 'request_timeout', message: 'the request took too long to arrive' },
};
const MALFORMED = { status: 400, reason: 'Bad Request', code: 'bad_request' as const, message: 'the request is not valid HTTP' };
// The status line is the code's own status: the body and the status can never disagree.
for (const answer of Object.values(CLIENT_ERRORS)) if (ERROR_STATUS[answer.code] !== answer.status) throw new Error(`${answer.code} is not ${answer.status}`);

/** The cors middleware's headers (cors.ts), on these answers too. */
const CORS_LINES = CORS_HEADERS.reduce((lines, value, i) => (i % 2 ? `${lines}${value}\r\n` : `${lines}${value}: `), '');

function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // Nothing to answer on a connection the client already dropped or that has half a response.
  if (err.code === 'ECONNRESET' || !socket.writable || responseUnderWay(socket)) {
    socket.destroy();
    return;
  }
  const answer = (err.code && CLIENT_ERRORS[err.code]) || MALFORMED;
  const body = JSON.stringify(errorBody(answer.code, answer.message));
  socket.end(
    `HTTP/1.1 ${answer.status} ${answer.reason}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Cache-Control: no-store\r\n' +
      'X-Content-Type-Options: nosniff\r\n' +
      CORS_LINES +
      (answer.status === 405 ? `Allow: ${ALLOWED_METHODS}\r\n` : '') +
      'Connection: close\r\n\r\n' +
      body,
  );
}
