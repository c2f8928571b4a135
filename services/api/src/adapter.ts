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
  return async (req: Request, res: Response) => {
    res.locals['route'] = endpoint.path;
    const params = parseParams(endpoint, rawParams(endpoint, req));
    const { data, version } = await handler(params, ctx);
    let serialised: string | undefined;
    const serialise = () => (serialised ??= JSON.stringify({ ok: true, ...data }));
    const etag = strongEtag(version !== undefined ? `${RESPONSE_REVISION}\n${endpoint.path}\n${version}` : `${RESPONSE_REVISION}\n${serialise()}`);
    sendCachedJson(req, res, { etag, maxAgeSeconds, serialise });
  };
}
