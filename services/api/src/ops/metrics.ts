import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import { answerOps, redisCheck, type ReadinessCheck } from '@pm/shared/ops';
import { redisKeys, SNAPSHOT_FAMILIES, type SnapshotName } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import type { ServiceMetrics } from '@pm/shared/metrics';
import { endpointList } from '@pm/shared/api';
import { requestDurations, type DurationSeries } from './request-durations.js';

/**
 * The API's metrics and operations routes (/metrics, /healthz, /readyz).
 *
 * The ops routes sit on the public port, outside /api/v1, ahead of the access log, CORS and the rate
 * limit: a load balancer's probe or a Prometheus scrape must never be refused with a 429 or fill the
 * request log. A deployment that publishes the API routes only `/api/v1/*` to the internet (README).
 */

/** Paths served besides the endpoint table, named as their own route template. */
const EXTRA_ROUTES = ['/api/v1/openapi.json', '/api/v1/docs', '/api/v1/charts'];

/**
 * The snapshots the first pages of a fresh stack read: the market list (the ingestor's catalog, then
 * the worker's market build) and the latest calls and the default board (the worker's first record
 * build, a moment later). Ready only when all three exist: a stack that said ready on the list alone
 * answered its first second of `/calls` and `/leaderboard` with 503s.
 */
export const READY_SNAPSHOTS: readonly SnapshotName[] = ['markets:trending', 'calls:latest', 'leaderboard:profit'];

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE']);

function templateMatcher(): (path: string) => string {
  const patterns = endpointList.map((e) => ({
    route: e.path as string,
    regex: new RegExp(`^${e.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[A-Za-z_][A-Za-z0-9_]*\}/g, '[^/]+')}/?$`),
  }));
  for (const route of EXTRA_ROUTES) patterns.push({ route, regex: new RegExp(`^${route.replace(/[.]/g, '\\.')}/?$`) });
  return (path) => patterns.find((p) => p.regex.test(path))?.route ?? 'unmatched';
}

/**
 * Observes a request once it is done, whichever path answered it (front/front-handler.ts or Express): its duration
 * by route template, method and status (a 429 also counts as rate limited), and the access-log line.
 * The route is the endpoint table's path (also for requests refused before reaching the endpoint,
 * e.g. a 429 or 405), else `unmatched`, so the label set stays bounded whatever is asked.
 */
export interface RequestObserver {
  /** `route`: the route template, or (when known only once the request is done) a function giving it. */
  observe(req: IncomingMessage, res: ServerResponse, requestId: string, route: string | (() => string | undefined)): void;
  /** The route template of a path (for requests no handler named). */
  routeOf(path: string): string;
}

export function requestObserver(metrics: ServiceMetrics<'api'>, logger: Logger): RequestObserver {
  const routeOf = templateMatcher();
  const { httpRateLimited } = metrics.metric;
  const durations = requestDurations(metrics);
  // The histogram's series by route, method and status, looked up in nested maps (no key string
  // built per request, request-durations.ts). Bounded: routes and methods are closed sets
  // (templates, KNOWN_METHODS), statuses are the few the API answers.
  type Series = DurationSeries;
  const series = new Map<string, Map<string, Map<number, Series>>>();
  const seriesOf = (route: string, method: string, status: number): Series => {
    let byMethod = series.get(route);
    if (!byMethod) series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let found = byStatus.get(status);
    if (!found) {
      found = durations.series({ route, method, status: String(status) });
      byStatus.set(status, found);
    }
    return found;
  };
  return {
    routeOf,
    observe(req, res, requestId, route) {
      const started = performance.now();
      // 'close' is emitted once: `on` spares the wrapper `once` makes per request.
      res.on('close', () => {
        const named = typeof route === 'string' ? route : route();
        const seconds = (performance.now() - started) / 1000;
        const method = req.method ?? 'GET';
        if (res.writableFinished) {
          const template = named ?? routeOf(pathOf(req.url ?? '/'));
          seriesOf(template, KNOWN_METHODS.has(method) ? method : 'other', res.statusCode).observe(seconds);
          if (res.statusCode === 429) httpRateLimited.inc();
        }
        // The access-log line is built only when it is written (LOG_LEVEL=info or lower).
        if (!logger.isLevelEnabled('info')) return;
        logger.info(
          {
            req_id: requestId,
            method,
            route: named ?? null,
            status: res.statusCode,
            ms: Math.round(seconds * 1e5) / 100,
            ...(res.writableFinished ? {} : { aborted: true }),
          },
          'request',
        );
      });
    },
  };
}

function pathOf(target: string): string {
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/** Readiness of the API: Redis answers and the worker has written the trending list. */
export function apiReadiness(redis: Redis, prefix: string): Record<string, ReadinessCheck> {
  const keys = redisKeys(prefix);
  return {
    redis: redisCheck(redis),
    snapshots: async () => {
      // Said in words rather than as the Redis client's error: the redis check names the cause.
      if (redis.status !== 'ready') throw new Error(`snapshots ${READY_SNAPSHOTS.join(', ')} cannot be read while Redis is not answering`);
      const present = await Promise.all(READY_SNAPSHOTS.map((name) => redis.hexists(keys.snapshot(name), 'etag')));
      const missing = READY_SNAPSHOTS.filter((_, i) => present[i] !== 1);
      if (missing.length > 0) throw new Error(`snapshot${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not built yet`);
    },
  };
}

/**
 * Registers the scrape-time collector of `snapshot_age_seconds`: per snapshot family, the seconds
 * since the newest write of any snapshot of it (the writer keeps those times in one hash, so a scrape
 * costs one HGETALL whatever the number of events or users).
 */
export function collectSnapshotAges(metrics: ServiceMetrics<'api'>, redis: Redis, prefix: string, clock: () => number): void {
  const keys = redisKeys(prefix);
  const { snapshotAge } = metrics.metric;
  metrics.beforeScrape('snapshot_age', async () => {
    const builtAt = await redis.hgetall(keys.snapshotBuiltAt);
    for (const family of SNAPSHOT_FAMILIES) {
      const at = Number(builtAt[family]);
      if (builtAt[family] === undefined || !Number.isFinite(at)) snapshotAge.remove({ snapshot: family });
      else snapshotAge.set({ snapshot: family }, Math.max(0, (clock() - at) / 1000));
    }
  });
}

/** Answers /metrics, /healthz and /readyz; any other path goes on down the chain. */
export function opsRoutes(opts: {
  metrics: ServiceMetrics<'api'>;
  readiness: Record<string, ReadinessCheck>;
  logger: Logger;
  /** Which of them this port serves (/metrics moves to its own port in production, README). */
  paths: readonly string[];
}): RequestHandler {
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !opts.paths.includes(req.path)) return next();
    answerOps(req.path, opts).then((answer) => {
      if (!answer) return next();
      res.status(answer.status).setHeader('content-type', answer.contentType);
      res.setHeader('cache-control', 'no-store');
      res.setHeader('x-content-type-options', 'nosniff');
      res.end(req.method === 'HEAD' ? undefined : answer.body);
    }, next);
  };
}
