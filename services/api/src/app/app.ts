import express, { type NextFunction, type Request, type Response } from 'express';
import type { Config } from '@pm/shared/config';
import type { Logger } from '@pm/shared/logger';
import { buildOpenApiDocument, endpoints, EXPORT_FILE_EXPRESS_PATH, STREAM_PATH, type EndpointPath } from '@pm/shared/api';
import { endpointRoute } from './adapter.js';
import { docsPage, DOCS_PATH } from '../docs/docs-page.js';
import { chartPage, CHARTS_PATH } from '../charts/chart-page.js';
import { createLiveDocument } from '../docs/live-docs.js';
import { ApiError, INTERNAL_MESSAGE } from '../http/errors.js';
import type { HandlerContext } from './handler.js';
import type { RequestObserver } from '../ops/metrics.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { corsMiddleware } from '../http/cors.js';
import type { ReadyCache } from '../front/ready-cache.js';
import { readyResponse, serveReady } from '../front/ready-response.js';
import { ALLOWED_METHODS, sendError, setBaseHeaders, strongEtag } from '../http/respond.js';
import { handlers } from '../routes/index.js';
import { exportFileRoute } from '../downloads/export-file.js';

export interface AppParts {
  config: Config;
  logger: Logger;
  /** Handler context shared by every request (snapshots, live, clock). */
  ctx: HandlerContext;
  limiter: RateLimiter;
  readyCache: ReadyCache;
  observer: RequestObserver;
  /** /healthz, /readyz and (when it is on the public port) /metrics. */
  ops: express.RequestHandler;
  /** `GET /api/v1/stream` (stream/route.ts). */
  stream: express.RequestHandler;
}

const OPENAPI_PATH = '/api/v1/openapi.json';
const NOT_FOUND = `no such endpoint; see /api/v1/docs (or ${OPENAPI_PATH})`;

/**
 * The Express app: the one place that defines routes, parameters, errors and docs (docs/design.md "The
 * read path"). A request whose ready response is held never reaches it (front/front-handler.ts). Order matters:
 * ops → base headers + request log → CORS (a preflight is answered there) → rate limit (429 here)
 * → malformed percent-encoding (400) → write verbs refused (405) → endpoints → 404 → error handler.
 */
export function createApp(parts: AppParts): express.Application {
  const { config, logger, ctx, limiter, readyCache, observer } = parts;

  const app = express();
  app.disable('x-powered-by');
  // Our ETags come from snapshot versions (adapter.ts), not from hashing every body.
  app.set('etag', false);
  app.set('query parser', 'simple');
  // A hop count: 0 trusts no X-Forwarded-For, so the header cannot dodge the rate limit.
  app.set('trust proxy', config.TRUST_PROXY);

  // Ops paths first: never rate limited or access-logged.
  app.use(parts.ops);

  app.use((req: Request, res: Response, next: NextFunction) => {
    const requestId = setBaseHeaders(req, res);
    res.locals['requestId'] = requestId;
    observer.observe(req, res, requestId, () => res.locals['route'] as string | undefined);
    // An OPTIONS request is answered by cors below (204); the methods this API allows go with it.
    if (req.method === 'OPTIONS') res.setHeader('Allow', ALLOWED_METHODS);
    next();
  });
  app.use(corsMiddleware);
  app.use(limiter.middleware);

  app.use((req, res, next) => {
    if (!wellEncoded(req.originalUrl)) return sendError(res, 'bad_request', 'the request target is not valid percent-encoding');
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    res.setHeader('Allow', ALLOWED_METHODS);
    sendError(res, 'method_not_allowed', `${req.method} is not allowed: this API is read-only (${ALLOWED_METHODS})`);
  });

  const register = <P extends EndpointPath>(path: P) => {
    const endpoint = endpoints[path];
    app.get(endpoint.expressPath, endpointRoute(endpoint, handlers[path], ctx, readyCache));
  };
  for (const path of Object.keys(endpoints) as EndpointPath[]) register(path);
  app.get(STREAM_PATH, parts.stream);
  // The archive's files: bytes, ranges and an ETag that is the file's SHA-256 (downloads/export-file.ts).
  app.get(EXPORT_FILE_EXPRESS_PATH, exportFileRoute(ctx));

  // Static for the life of the process: built once, a ready response of its own (no snapshot behind it).
  const openapiBody = Buffer.from(JSON.stringify(buildOpenApiDocument()));
  const openapi = readyResponse(OPENAPI_PATH, strongEtag(openapiBody.toString()), 'public, max-age=300', openapiBody);
  app.get(OPENAPI_PATH, async (req, res) => {
    res.locals['route'] = OPENAPI_PATH;
    readyCache.remember(req.originalUrl, { ready: openapi, versions: [], live: undefined });
    await serveReady(req, res, openapi);
  });
  // The human-readable reference: the document above, its example requests filled from live data.
  app.use(DOCS_PATH, docsPage(createLiveDocument(ctx)));
  // The same data to look at: the busiest events, live, and their candles (read from the endpoints above).
  app.use(CHARTS_PATH, chartPage());

  app.use((_req, res) => sendError(res, 'not_found', NOT_FOUND));

  app.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    if (err instanceof ApiError) {
      if (err.code === 'internal') logger.error({ err, req_id: res.locals['requestId'] }, 'request failed');
      if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds));
      sendError(res, err.code, err.message);
      return;
    }
    const status = httpStatusOf(err);
    if (status === 404) {
      sendError(res, 'not_found', NOT_FOUND);
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

/**
 * Whether every %-escape of the target is well formed and decodes to UTF-8. Node and Express pass a
 * bad one through (`?q=%E0%A4` would be searched for as typed); docs/api.md makes it a bad parameter.
 */
function wellEncoded(target: string): boolean {
  if (!target.includes('%')) return true;
  try {
    decodeURIComponent(target.replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}

function httpStatusOf(err: unknown): number | undefined {
  if (!err || typeof err !== 'object') return undefined;
  const { status, statusCode } = err as { status?: unknown; statusCode?: unknown };
  const value = typeof status === 'number' ? status : statusCode;
  return typeof value === 'number' ? value : undefined;
}
