import type { Request, RequestHandler, Response } from 'express';
import { CACHE_MAX_AGE_SECONDS, type EndpointOf, type EndpointPath, type ParamsOf } from '@pm/shared/api';
import { ApiError } from './errors.js';
import type { Handler, HandlerContext } from './handler.js';
import { sendCachedJson, strongEtag } from './respond.js';

/**
 * The one adapter between Express and every handler: parameter validation (400 naming the parameter
 * and its rule), the handler call, Cache-Control, a strong ETag with 304 on If-None-Match, and
 * serialisation. A handler never touches `req` or `res`.
 */

/**
 * Bump when the API changes how it shapes a body from the same snapshot (a field added or renamed
 * here), so ETags handed out by the previous version stop matching.
 */
const RESPONSE_REVISION = '1';
/** Serialised bodies kept per endpoint (oldest dropped first); a few versions of each list and item. */
const MAX_CACHED_BODIES = 256;

/** Raw inputs of one request: path parameters and the query parameters the endpoint knows. */
function rawParams(endpoint: { pathParams: readonly string[]; params: { shape: object } }, req: Request): Record<string, string> {
  const raw: Record<string, string> = {};
  // Express 5's `req.query` is a getter that re-parses; read it once into a copy.
  const query: Record<string, unknown> = { ...(req.query as Record<string, unknown>) };
  for (const name of Object.keys(endpoint.params.shape)) {
    if (endpoint.pathParams.includes(name)) {
      const value = req.params[name];
      if (typeof value === 'string') raw[name] = value;
      continue;
    }
    const value = query[name];
    if (value === undefined) continue;
    // `?limit=1&limit=2` arrives as an array: ambiguous, so refused rather than guessed.
    if (typeof value !== 'string') throw new ApiError('bad_request', `${name} must be given at most once`);
    raw[name] = value;
  }
  return raw;
}

export function parseParams<P extends EndpointPath>(endpoint: EndpointOf<P>, raw: Record<string, string>): ParamsOf<P> {
  const parsed = endpoint.params.safeParse(raw);
  if (parsed.success) return parsed.data as ParamsOf<P>;
  const issue = parsed.error.issues[0];
  const name = String(issue?.path[0] ?? 'parameter');
  const message = issue?.message ?? 'is not valid';
  // The table's builders write messages that start with the parameter's name; anything else gets it prefixed.
  throw new ApiError('bad_request', message.startsWith(`${name} `) ? message : `${name}: ${message}`);
}

export function endpointRoute<P extends EndpointPath>(endpoint: EndpointOf<P>, handler: Handler<P>, ctx: HandlerContext): RequestHandler {
  const maxAgeSeconds = CACHE_MAX_AGE_SECONDS[endpoint.cache];
  // A versioned response's bytes depend only on its version, so they are serialised once per
  // version and reused: under load most requests then cost two Redis round trips and a write
  // (bench:api showed JSON.stringify of the 30 KB market list dominating the API's CPU).
  const bodies = new Map<string, Buffer>();
  return async (req: Request, res: Response) => {
    res.locals['route'] = endpoint.path;
    const params = parseParams(endpoint, rawParams(endpoint, req));
    const { data, version } = await handler(params, ctx);
    if (version === undefined) {
      // Small computed answers (/odds): the ETag is a hash of the body itself.
      const text = JSON.stringify({ ok: true, ...data });
      sendCachedJson(req, res, { etag: strongEtag(`${RESPONSE_REVISION}\n${text}`), maxAgeSeconds, serialise: () => text });
      return;
    }
    const etag = strongEtag(`${RESPONSE_REVISION}\n${endpoint.path}\n${version}`);
    const serialise = () => {
      let body = bodies.get(etag);
      if (body === undefined) {
        body = Buffer.from(JSON.stringify({ ok: true, ...data }));
        bodies.set(etag, body);
        if (bodies.size > MAX_CACHED_BODIES) bodies.delete(bodies.keys().next().value as string);
      }
      return body;
    };
    sendCachedJson(req, res, { etag, maxAgeSeconds, serialise });
  };
}
