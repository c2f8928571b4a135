import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { answerOps, redisCheck, redisKeys, type Logger, type ReadinessCheck, type ServiceMetrics, type SnapshotName } from '@pm/shared';
import { endpointList } from '@pm/shared/api';

/**
 * The API's metrics and operations routes (/metrics, /healthz, /readyz).
 *
 * The ops routes sit on the public port, outside /api/v1, ahead of the access log, CORS and the rate
 * limit: a load balancer's probe or a Prometheus scrape must never be refused with a 429 or fill the
 * request log. A deployment that publishes the API routes only `/api/v1/*` to the internet (README).
 */

/** Paths served besides the endpoint table, named as their own route template. */
const EXTRA_ROUTES = ['/api/v1/openapi.json', '/api/v1/docs'];

/** Snapshots whose age is exported: the two every build writes (trending list, search index). */
const AGED_SNAPSHOTS: readonly SnapshotName[] = ['markets:trending', 'markets:search'];

/** The snapshot the market list needs before the API can answer anything useful. */
const READY_SNAPSHOT: SnapshotName = 'markets:trending';

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
 * Observes every request's duration by route template, method and status; a 429 also counts as rate
 * limited. The route is the endpoint table's path (also for requests refused before reaching the
 * endpoint, e.g. a 429 or 405), else `unmatched`, so the label set stays bounded whatever is asked.
 */
export function requestMetrics(metrics: ServiceMetrics<'api'>): RequestHandler {
  const routeOf = templateMatcher();
  const { httpRequestDuration, httpRateLimited } = metrics.metric;
  return (req: Request, res: Response, next: NextFunction) => {
    const end = httpRequestDuration.startTimer();
    res.once('finish', () => {
      const route = (res.locals['route'] as string | undefined) ?? routeOf(req.path);
      end({ route, method: KNOWN_METHODS.has(req.method) ? req.method : 'other', status: String(res.statusCode) });
      if (res.statusCode === 429) httpRateLimited.inc();
    });
    next();
  };
}

/** Readiness of the API: Redis answers and the worker has written the trending list. */
export function apiReadiness(redis: Redis, prefix: string): Record<string, ReadinessCheck> {
  const keys = redisKeys(prefix);
  return {
    redis: redisCheck(redis),
    snapshots: async () => {
      // Said in words rather than as the Redis client's error: the redis check names the cause.
      if (redis.status !== 'ready') throw new Error(`snapshot ${READY_SNAPSHOT} cannot be read while Redis is not answering`);
      const present = await redis.hexists(keys.snapshot(READY_SNAPSHOT), 'etag');
      if (present !== 1) throw new Error(`snapshot ${READY_SNAPSHOT} is not built yet`);
    },
  };
}

/** Registers the scrape-time collector of `snapshot_age_seconds`. */
export function collectSnapshotAges(metrics: ServiceMetrics<'api'>, redis: Redis, prefix: string, clock: () => number): void {
  const keys = redisKeys(prefix);
  const { snapshotAge } = metrics.metric;
  metrics.beforeScrape('snapshot_age', async () => {
    const pipeline = redis.pipeline();
    for (const name of AGED_SNAPSHOTS) pipeline.hget(keys.snapshot(name), 'built_at');
    const results = (await pipeline.exec()) ?? [];
    AGED_SNAPSHOTS.forEach((name, i) => {
      const [err, value] = results[i] ?? [new Error('no reply'), null];
      if (err) throw err;
      const builtAt = Number(value);
      if (value == null || !Number.isFinite(builtAt)) snapshotAge.remove({ snapshot: name });
      else snapshotAge.set({ snapshot: name }, Math.max(0, (clock() - builtAt) / 1000));
    });
  });
}

/** Answers /metrics, /healthz and /readyz; any other path goes on down the chain. */
export function opsRoutes(opts: { metrics: ServiceMetrics<'api'>; readiness: Record<string, ReadinessCheck>; logger: Logger }): RequestHandler {
  return (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !['/metrics', '/healthz', '/readyz'].includes(req.path)) return next();
    answerOps(req.path, opts).then((answer) => {
      if (!answer) return next();
      res.status(answer.status).setHeader('content-type', answer.contentType);
      res.setHeader('cache-control', 'no-store');
      res.end(req.method === 'HEAD' ? undefined : answer.body);
    }, next);
  };
}
