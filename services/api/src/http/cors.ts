import type { IncomingMessage, ServerResponse } from 'node:http';
import cors, { type CorsOptions } from 'cors';

/**
 * Cross-origin access (docs/api.md: any origin may call the API). The `cors` package writes these
 * headers on the Express path; the front handler writes `CORS_HEADERS`, which is what that same
 * middleware, with these same options, writes on a GET: it is read off the middleware once, here,
 * so the two paths cannot drift apart (http/cors.int.test.ts holds them equal on the wire).
 */

/** Headers a page's script may read from our answers. */
const EXPOSED = ['ETag', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'Retry-After', 'x-request-id'];

export const CORS_OPTIONS: Readonly<CorsOptions> = {
  // One fixed value: the headers then never depend on the request, which is what lets the front
  // handler write them from a block made once.
  origin: '*',
  methods: ['GET', 'HEAD', 'OPTIONS'],
  allowedHeaders: ['If-None-Match', 'X-Request-Id'],
  exposedHeaders: EXPOSED,
  maxAge: 86_400,
  optionsSuccessStatus: 204,
};

export const corsMiddleware = cors(CORS_OPTIONS);

/**
 * The headers `cors(options)` writes on an answer to `method`, as name/value pairs in its order, read
 * by running the middleware against a stand-in request and response. Options whose origin is not
 * one fixed string are refused: their headers differ per request.
 */
export function corsHeadersOf(options: Readonly<CorsOptions>, method: 'GET' | 'OPTIONS'): string[] {
  if (typeof options.origin !== 'string') throw new Error('CORS headers can be made once only for one fixed origin');
  const written: string[] = [];
  const res = {
    statusCode: 200,
    setHeader(name: string, value: string | number | readonly string[]) {
      written.push(name, String(value));
      return this;
    },
    getHeader: () => undefined,
    end() {},
  };
  const req = { method, headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' } };
  let passedOn = false;
  cors(options)(req as unknown as IncomingMessage, res as unknown as ServerResponse, () => (passedOn = true));
  if (method === 'GET' && !passedOn) throw new Error('cors did not pass a GET on at once: its headers cannot be made ahead');
  return written;
}

/** What `corsMiddleware` writes on every GET and HEAD, for the front handler. */
export const CORS_HEADERS: readonly string[] = corsHeadersOf(CORS_OPTIONS, 'GET');
