import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { baseHeaderBlock, baseHeaderList, headerBlock, JSON_TYPE, type RateLimitState } from '../http/respond.js';
import { canWriteHeadBlock, writeHeadBlock } from '../http/node-internals.js';

/**
 * A ready response (docs/design.md "The read path"): the bytes of one cacheable 200, made once per
 * version and then written as they are — body Buffer, its gzip and brotli encodings (made once, on
 * first demand), ETag, length and caching headers. Both request paths write it with `serveReady`.
 */

export type ContentCoding = 'identity' | 'gzip' | 'br';

/** Bodies smaller than this are sent as they are: compressing them saves less than a packet. */
const COMPRESS_MIN_BYTES = 1024;
const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);
/** Quality 5 keeps a 30 KB list at a few ms of one thread-pool thread per version, near 6's ratio. */
const BROTLI_OPTIONS = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } };
/**
 * A body read from Postgres is made for its request: never held, or (a closed window of candles)
 * held but seldom asked again. Its encoding time is all latency, so past ONE_OFF_FAST_BYTES it gets
 * the fast levels, on the spot. On
 * a 1 MB body of candles (ten markets, a day of minutes) brotli 5 took 11–17 ms of a thread-pool
 * thread and gzip 6 9–24 ms; brotli 1 takes 1–3 ms for a body 1.5–2× brotli 5's (still a fifth of the
 * JSON or less), gzip 1 2–5 ms. The thread pool's two round trips (compress, finish) cost another
 * ~1.5 ms on a 2-core VM, and 20 ms when a wake-up is late, for ~3 ms of this thread per MB that the
 * request holds it anyway (it has just written the body).
 */
const ONE_OFF_FAST_BYTES = 64 * 1024;
const FAST_BROTLI_OPTIONS = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } };
const FAST_GZIP_OPTIONS = { level: 1 };

export interface ReadyResponse {
  /** The endpoint's route template, for metrics and logs. */
  readonly route: string;
  /** ETag of the identity encoding; the encoded ones append their coding (`etagFor`). */
  readonly etag: string;
  readonly cacheControl: string;
  readonly body: Buffer;
  /** Encoded bodies, made on first demand and kept while this response is current. */
  readonly encoded: Map<'gzip' | 'br', Buffer | Promise<Buffer>>;
  /** The response's own header lines of a 200 per coding (`ownHeaders` as a `headerBlock`), made on first demand. */
  readonly blocks: Map<ContentCoding, string>;
  /** Encoded at the fast levels, on the spot: a large body made for the request at hand. */
  readonly fast: boolean;
}

/** `oneOff`: the body was made for the request at hand (read from Postgres), not once per snapshot version. */
export function readyResponse(route: string, etag: string, cacheControl: string, body: Buffer, oneOff = false): ReadyResponse {
  return { route, etag, cacheControl, body: ownBytes(body), encoded: new Map(), blocks: new Map(), fast: oneOff && body.length >= ONE_OFF_FAST_BYTES };
}

/**
 * `b`, or a copy of it that owns exactly its bytes when it is a view on a larger allocation. A body
 * read from Redis is a slice of the socket read it arrived in (64 KB), and a compressor's output a
 * slice of its output chunk: a held view keeps that whole allocation alive. Held as views, a soak's
 * API kept ~150 MB of ArrayBuffers for bodies counted as ~24 MB (about 65 KB behind each).
 */
export function ownBytes(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength) return b;
  // allocUnsafeSlow: a pooled Buffer (under 4 KB) would be a view on the shared 8 KB pool again.
  const own = Buffer.allocUnsafeSlow(b.length);
  b.copy(own);
  return own;
}

/** What the front handler writes before a ready response's own headers (respond.ts `baseHeaderList`). */
export interface Lead {
  requestId: string;
  state: RateLimitState;
}

/**
 * A strong ETag per representation (RFC 9110 §8.8.3: strong validators differ across content
 * codings): `"<version>"`, `"<version>-gzip"`, `"<version>-br"`.
 */
function etagFor(ready: ReadyResponse, coding: ContentCoding): string {
  return coding === 'identity' ? ready.etag : `${ready.etag.slice(0, -1)}-${coding}"`;
}

/** RFC 9110 §13.1.2: If-None-Match compares weakly; `*` matches. Any coding of the current version matches. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const version = etag.slice(0, -1);
  return ifNoneMatch.split(',').some((candidate) => {
    let tag = candidate.trim();
    if (tag.startsWith('W/')) tag = tag.slice(2);
    return tag === etag || tag === `${version}-gzip"` || tag === `${version}-br"`;
  });
}

const codingMemo = new Map<string, ContentCoding>();

/** The coding to answer with: br, else gzip, when the client accepts it (q > 0); identity otherwise. */
export function negotiateCoding(acceptEncoding: string | undefined): ContentCoding {
  if (!acceptEncoding) return 'identity';
  const memo = codingMemo.get(acceptEncoding);
  if (memo) return memo;
  const accepted = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [token = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    accepted.set(token.trim(), q ? Number(q.slice(2)) : 1);
  }
  const ok = (coding: string) => {
    const q = accepted.get(coding) ?? accepted.get('*');
    return q !== undefined && q > 0;
  };
  const coding: ContentCoding = ok('br') ? 'br' : ok('gzip') ? 'gzip' : 'identity';
  // Clients send a handful of distinct values; the bound keeps odd ones from growing the memo.
  if (codingMemo.size < 256) codingMemo.set(acceptEncoding, coding);
  return coding;
}

function encode(ready: ReadyResponse, coding: 'gzip' | 'br'): Buffer | Promise<Buffer> {
  let body = ready.encoded.get(coding);
  if (body === undefined && ready.fast) {
    // Made for this one request, and quick at the fast levels: on the spot (see ONE_OFF_FAST_BYTES).
    body = ownBytes(coding === 'br' ? zlib.brotliCompressSync(ready.body, FAST_BROTLI_OPTIONS) : zlib.gzipSync(ready.body, FAST_GZIP_OPTIONS));
    ready.encoded.set(coding, body);
  }
  if (body === undefined) {
    const made = coding === 'br' ? brotli(ready.body, BROTLI_OPTIONS) : gzip(ready.body);
    body = made.then((b) => {
      const own = ownBytes(b);
      ready.encoded.set(coding, own);
      return own;
    });
    ready.encoded.set(coding, body);
  }
  return body;
}

/**
 * 200 with the body in the negotiated coding, or 304 with no body (and no encoding made) when
 * If-None-Match matches. Resolves at once unless an encoding is being made for the first time.
 *
 * `lead`: the request id and rate-limit count whose headers come first (respond.ts), all written at
 * once (the front handler's path: `writeHeadBlock` for a 200, one `writeHead` otherwise). Without it the
 * response's headers are added with `setHeader` to those the caller set (the Express path). All give
 * the same headers in the same order.
 */
export function serveReady(req: IncomingMessage, res: ServerResponse, ready: ReadyResponse, lead?: Lead): void | Promise<void> {
  const coding = ready.body.length >= COMPRESS_MIN_BYTES ? negotiateCoding(req.headers['accept-encoding']) : 'identity';
  if (etagMatches(req.headers['if-none-match'], ready.etag)) {
    send(req, res, 304, lead, ready, coding, undefined);
    return;
  }
  if (coding === 'identity') return send(req, res, 200, lead, ready, coding, ready.body);
  const body = encode(ready, coding);
  if (Buffer.isBuffer(body)) return send(req, res, 200, lead, ready, coding, body);
  return body.then((b) => send(req, res, 200, lead, ready, coding, b));
}

/** Cache-Control, Vary and ETag, then (with a body) Content-Type and Content-Encoding; Content-Length comes after them. */
function ownHeaders(ready: ReadyResponse, coding: ContentCoding, withBody: boolean): string[] {
  const headers = ['Cache-Control', ready.cacheControl, 'Vary', 'Accept-Encoding', 'ETag', etagFor(ready, coding)];
  if (withBody) {
    headers.push('Content-Type', JSON_TYPE);
    if (coding !== 'identity') headers.push('Content-Encoding', coding);
  }
  return headers;
}

function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: 200 | 304,
  lead: Lead | undefined,
  ready: ReadyResponse,
  coding: ContentCoding,
  body: Buffer | undefined,
): void {
  if (lead && body && canWriteHeadBlock(req)) {
    let own = ready.blocks.get(coding);
    if (own === undefined) ready.blocks.set(coding, (own = headerBlock(ownHeaders(ready, coding, true))));
    writeHeadBlock(res, baseHeaderBlock(lead.requestId, lead.state) + own, body.length);
    res.end(body);
    return;
  }
  const headers = ownHeaders(ready, coding, body !== undefined);
  if (body) headers.push('Content-Length', String(body.length));
  if (lead) {
    res.writeHead(status, [...baseHeaderList(lead.requestId, lead.state), ...headers]);
  } else {
    res.statusCode = status;
    for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i]!, headers[i + 1]!);
  }
  res.end(body);
}
