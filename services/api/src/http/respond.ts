import { createHash, randomUUID } from 'node:crypto';
import { validateHeaderName, validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http';
import { errorBody, ERROR_STATUS, type ErrorCode } from './errors.js';

/**
 * The one header and error module of both request paths (DESIGN.md "The read path"): the ready
 * responses answered in front of Express (front/front-handler.ts) and the Express app itself write every header
 * and every error body through these functions, on plain node:http objects, so a client cannot tell
 * which path answered.
 *
 * Bodies are written with `res.end` and an explicit Content-Length, so a HEAD request gets exactly
 * the GET's headers (Node drops the body of a HEAD). Express's own ETag and freshness logic is off.
 */

export const JSON_TYPE = 'application/json; charset=utf-8';
export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';
/** A client's x-request-id is echoed only when it is a short, plain token (it lands in our logs). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const EXPOSED_HEADERS = ['ETag', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'Retry-After', 'x-request-id'].join(',');

/** A strong ETag over `input`: a short digest, quoted. */
export function strongEtag(input: string): string {
  return `"${createHash('sha1').update(input).digest('base64url')}"`;
}

/** Headers every response carries, besides the request id (SPEC.md "Authentication" 2: any origin may call the API; issue 9: no content sniffing). */
const BASE_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
];

const BASE_HEADER_LIST: readonly string[] = BASE_HEADERS.flat();

/** Echoed or made per request (`requestIdOf`); the first header of every response. */
const REQUEST_ID_HEADER = 'x-request-id';

/** The request id: the client's own when it is sane, else a new one. It is returned so a user can quote it. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Sets the headers every response carries and the request id (`requestIdOf`); returns the id. */
export function setBaseHeaders(req: IncomingMessage, res: ServerResponse, requestId = requestIdOf(req)): string {
  res.setHeader(REQUEST_ID_HEADER, requestId);
  for (const [name, value] of BASE_HEADERS) res.setHeader(name, value);
  return requestId;
}

/**
 * The same headers as `setBaseHeaders` and `setRateLimitHeaders`, in the same order, as a flat
 * name/value list for `res.writeHead` (ready-response.ts): the hot path writes its headers in one
 * call instead of a dozen `setHeader`s.
 */
export function baseHeaderList(requestId: string, state: RateLimitState): string[] {
  return [REQUEST_ID_HEADER, requestId, ...BASE_HEADER_LIST, ...rateLimitHeaderList(state)];
}

/**
 * `headers` (name/value pairs) as header lines, `Name: value\r\n` each, checked once by Node's own
 * validators (a bad name or value throws here, when the block is made, never on a request).
 */
export function headerBlock(headers: readonly string[]): string {
  for (let i = 0; i < headers.length; i += 2) {
    validateHeaderName(headers[i]!);
    validateHeaderValue(headers[i]!, headers[i + 1]!);
  }
  return headerLines(headers);
}

/** Name/value pairs as header lines, unchecked: only for values safe by construction. */
function headerLines(headers: readonly string[]): string {
  let lines = '';
  for (let i = 0; i < headers.length; i += 2) lines += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return lines;
}

const BASE_HEADER_BLOCK = headerBlock(BASE_HEADER_LIST);

/**
 * The same lines as `baseHeaderList`, as one header block (ready-response.ts `writeBlock`). Every value
 * is safe by construction: the request id is a sane client token or a UUID (`requestIdOf`), the rest
 * are constants and integers.
 */
export function baseHeaderBlock(requestId: string, state: RateLimitState): string {
  return `${REQUEST_ID_HEADER}: ${requestId}\r\n${BASE_HEADER_BLOCK}${headerLines(rateLimitHeaderList(state))}`;
}

/** A CORS preflight (or plain OPTIONS): 204 with the methods and the headers a page may send. */
export function answerPreflight(res: ServerResponse): void {
  res.setHeader('Allow', ALLOWED_METHODS);
  res.setHeader('Access-Control-Allow-Methods', 'GET,HEAD,OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', 'If-None-Match,X-Request-Id');
  res.setHeader('Access-Control-Max-Age', '86400');
  res.setHeader('Content-Length', '0');
  res.statusCode = 204;
  res.end();
}

/** What the rate limiter decided for one request (rate-limit.ts). */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix ms when the window resets. */
  resetMs: number;
}

/** SPEC.md "Limits": on every counted response; `x-ratelimit-reset` is Unix seconds. */
function rateLimitHeaderList(state: RateLimitState): string[] {
  return ['x-ratelimit-limit', String(state.limit), 'x-ratelimit-remaining', String(state.remaining), 'x-ratelimit-reset', String(Math.ceil(state.resetMs / 1000))];
}

export function setRateLimitHeaders(res: ServerResponse, state: RateLimitState): void {
  const list = rateLimitHeaderList(state);
  for (let i = 0; i < list.length; i += 2) res.setHeader(list[i]!, list[i + 1]!);
}

export function writeJson(res: ServerResponse, status: number, body: string | Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
  res.end(body);
}

/** The error body with its status. Errors are never cached. */
export function sendError(res: ServerResponse, code: ErrorCode, message: string): void {
  res.removeHeader('ETag');
  res.removeHeader('Vary');
  res.removeHeader('Content-Encoding');
  res.setHeader('Cache-Control', 'no-store');
  writeJson(res, ERROR_STATUS[code], JSON.stringify(errorBody(code, message)));
}

/** 429 with Retry-After (seconds until the window resets). */
export function sendRateLimited(res: ServerResponse, state: RateLimitState, now: number): void {
  setRateLimitHeaders(res, state);
  res.setHeader('Retry-After', String(Math.max(1, Math.ceil((state.resetMs - now) / 1000))));
  sendError(res, 'rate_limited', `too many requests: the limit is ${state.limit} a minute per client; try again later`);
}
