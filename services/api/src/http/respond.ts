import { createHash, randomUUID } from 'node:crypto';
import { validateHeaderName, validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http';
import { errorBody, ERROR_STATUS, type ErrorCode } from './errors.js';
import { CORS_HEADERS } from './cors.js';

/**
 * The one header and error module of both request paths (docs/design.md "The read path"): the ready
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

/** A strong ETag over `input`: a short digest, quoted. */
export function strongEtag(input: string): string {
  return `"${createHash('sha1').update(input).digest('base64url')}"`;
}

/** No content sniffing, on every response besides the request id. */
const NOSNIFF = ['X-Content-Type-Options', 'nosniff'] as const;

/** What the front handler writes after the request id: nosniff, then what the cors middleware writes on the Express path (cors.ts). */
const BASE_HEADER_LIST: readonly string[] = [...NOSNIFF, ...CORS_HEADERS];

/** Echoed or made per request (`requestIdOf`); the first header of every response. */
const REQUEST_ID_HEADER = 'x-request-id';

/** The request id: the client's own when it is sane, else a new one. It is returned so a user can quote it. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Sets the request id (`requestIdOf`) and nosniff; returns the id. The CORS headers come after them (the cors middleware, or `setCorsHeaders`). */
export function setBaseHeaders(req: IncomingMessage, res: ServerResponse, requestId = requestIdOf(req)): string {
  res.setHeader(REQUEST_ID_HEADER, requestId);
  res.setHeader(NOSNIFF[0], NOSNIFF[1]);
  return requestId;
}

/** The cors middleware's headers, on an answer the front handler makes without Express. */
export function setCorsHeaders(res: ServerResponse): void {
  for (let i = 0; i < CORS_HEADERS.length; i += 2) res.setHeader(CORS_HEADERS[i]!, CORS_HEADERS[i + 1]!);
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
 * The same lines as `baseHeaderList`, as one header block (node-internals.ts `writeHeadBlock`). Every value
 * is safe by construction: the request id is a sane client token or a UUID (`requestIdOf`), the rest
 * are constants and integers.
 */
export function baseHeaderBlock(requestId: string, state: RateLimitState): string {
  // One template, no intermediate list: this runs once per cached read.
  return (
    `${REQUEST_ID_HEADER}: ${requestId}\r\n${BASE_HEADER_BLOCK}x-ratelimit-limit: ${state.limit}\r\nx-ratelimit-remaining: ${state.remaining}\r\n` +
    `x-ratelimit-reset: ${Math.ceil(state.resetMs / 1000)}\r\n`
  );
}

/** What the rate limiter decided for one request (rate-limit.ts). */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix ms when the window resets. */
  resetMs: number;
}

/** docs/api.md "Limits": on every counted response; `x-ratelimit-reset` is Unix seconds. */
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

/** The error body with its status (the code's own, or another 4xx it stands for: 416 is a `bad_request`). Errors are never cached. */
export function sendError(res: ServerResponse, code: ErrorCode, message: string, status = ERROR_STATUS[code]): void {
  res.removeHeader('ETag');
  res.removeHeader('Vary');
  res.removeHeader('Content-Encoding');
  res.setHeader('Cache-Control', 'no-store');
  writeJson(res, status, JSON.stringify(errorBody(code, message)));
}

/** Whole seconds until the window resets, at least 1: a client told 0 would ask again at once. */
export function retryAfterSeconds(resetMs: number, now: number): number {
  return Math.max(1, Math.ceil((resetMs - now) / 1000));
}

/** 429 with the rate-limit headers and Retry-After. */
export function sendRateLimited(res: ServerResponse, state: RateLimitState, now: number): void {
  setRateLimitHeaders(res, state);
  res.setHeader('Retry-After', String(retryAfterSeconds(state.resetMs, now)));
  sendError(res, 'rate_limited', `too many requests: the limit is ${state.limit} a minute per client; try again later`);
}
