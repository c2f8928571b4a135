import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Redis } from 'ioredis';
import { createServiceMetrics, type Config, type Logger, type ServiceMetrics } from '@pm/shared';
import { buildOpenApiDocument, endpoints, type EndpointPath } from '@pm/shared/api';
import { endpointRoute } from './adapter.js';
import { docsPage, DOCS_PATH } from './docs-page.js';
import { ApiError, INTERNAL_MESSAGE } from './errors.js';
import type { HandlerContext } from './handler.js';
import { apiReadiness, collectSnapshotAges, opsRoutes, requestMetrics } from './metrics.js';
import { createRateLimiter } from './rate-limit.js';
import { sendCachedJson, sendError, strongEtag } from './respond.js';
import { handlers } from './routes/index.js';
import { createSnapshotStore } from './snapshot-store.js';

export interface AppDependencies {
  config: Config;
  redis: Redis;
  logger: Logger;
  /** Unix ms; injectable for tests. */
  clock?: () => number;
  /** The API's Prometheus registry (served on /metrics); one is made when not given. */
  metrics?: ServiceMetrics<'api'>;
}

const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';
/** A client's x-request-id is echoed only when it is a short, plain token (it lands in our logs). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const OPENAPI_PATH = '/api/v1/openapi.json';

/**
 * The read API. Order of the middleware matters:
 * request id + access log → CORS (answers preflights) → rate limit (every other request, 429 here)
 * → write verbs refused (405) → endpoints → 404 → error handler.
 */
export function createApp(deps: AppDependencies): express.Application {
  const { config, redis, logger } = deps;
  const clock = deps.clock ?? Date.now;
  const ctx: HandlerContext = {
    snapshots: createSnapshotStore({ redis, prefix: config.REDIS_PREFIX, clock, logger }),
    clock,
    config,
    logger,
  };

  const app = express();
  app.disable('x-powered-by');
  // Our ETags come from snapshot versions (respond.ts), not from hashing every body.
  app.set('etag', false);
  app.set('query parser', 'simple');
  // A hop count: 0 trusts no X-Forwarded-For, so the header cannot dodge the rate limit.
  app.set('trust proxy', config.TRUST_PROXY);

  // Ops paths first: never rate limited or access-logged (see metrics.ts); then every request is timed.
  const metrics = deps.metrics ?? createServiceMetrics('api');
  collectSnapshotAges(metrics, redis, config.REDIS_PREFIX, clock);
  app.use(opsRoutes({ metrics, readiness: apiReadiness(redis, config.REDIS_PREFIX), logger }));
  app.use(requestMetrics(metrics));

  app.use((req: Request, res: Response, next: NextFunction) => {
    const given = req.get('x-request-id');
    const requestId = given && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    res.locals['requestId'] = requestId;
    res.setHeader('x-request-id', requestId);
    const started = process.hrtime.bigint();
    res.once('close', () => {
      logger.info(
        {
          req_id: requestId,
          method: req.method,
          route: (res.locals['route'] as string | undefined) ?? null,
          status: res.statusCode,
          ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        'request',
      );
    });
    next();
  });

  app.use((req, res, next) => {
    if (req.method === 'OPTIONS') res.setHeader('Allow', ALLOWED_METHODS);
    next();
  });
  app.use(
    cors({
      origin: '*',
      methods: ALLOWED_METHODS.split(', '),
      allowedHeaders: ['If-None-Match', 'X-Request-Id'],
      exposedHeaders: ['ETag', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'Retry-After', 'x-request-id'],
      maxAge: 86_400,
      optionsSuccessStatus: 204,
    }),
  );

  app.use(createRateLimiter({ redis, prefix: config.REDIS_PREFIX, limit: config.RATE_LIMIT_PER_MINUTE, logger }));

  app.use((req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return next();
    res.setHeader('Allow', ALLOWED_METHODS);
    sendError(res, 'method_not_allowed', `${req.method} is not allowed: this API is read-only (${ALLOWED_METHODS})`);
  });

  const register = <P extends EndpointPath>(path: P) => {
    const endpoint = endpoints[path];
    app.get(endpoint.expressPath, endpointRoute(endpoint, handlers[path], ctx));
  };
  for (const path of Object.keys(endpoints) as EndpointPath[]) register(path);

  // Static for the life of the process: built once, served with its own ETag.
  const openapiBody = JSON.stringify(buildOpenApiDocument());
  const openapiEtag = strongEtag(openapiBody);
  app.get(OPENAPI_PATH, (req, res) => {
    res.locals['route'] = OPENAPI_PATH;
    sendCachedJson(req, res, { etag: openapiEtag, maxAgeSeconds: 300, serialise: () => openapiBody });
  });
  // The human-readable reference, rendered from the document above.
  app.use(DOCS_PATH, docsPage());

  app.use((_req, res) => {
    sendError(res, 'not_found', `no such endpoint; see /api/v1/docs (or ${OPENAPI_PATH})`);
  });

  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    if (err instanceof ApiError) {
      if (err.code === 'internal') logger.error({ err, req_id: res.locals['requestId'] }, 'request failed');
      sendError(res, err.code, err.message);
      return;
    }
    const status = httpStatusOf(err);
    if (status === 404) {
      sendError(res, 'not_found', `no such endpoint; see /api/v1/docs (or ${OPENAPI_PATH})`);
    } else if (status !== undefined && status >= 400 && status < 500) {
      // Express's own 4xx errors, e.g. a path parameter that is not valid percent-encoding.
      sendError(res, 'bad_request', err instanceof URIError ? 'the request path is not valid percent-encoding' : 'the request is malformed');
    } else {
      logger.error({ err, req_id: res.locals['requestId'], method: req.method, url: req.originalUrl }, 'request failed');
      sendError(res, 'internal', INTERNAL_MESSAGE);
    }
  });

  return app;
}

function httpStatusOf(err: unknown): number | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const { status, statusCode } = err as { status?: unknown; statusCode?: unknown };
  const value = typeof status === 'number' ? status : statusCode;
  return typeof value === 'number' ? value : undefined;
}
