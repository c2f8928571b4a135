import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { JSON_TYPE } from './respond.js';

/**
 * A ready response (DESIGN.md "The read path"): the bytes of one cacheable 200, made once per
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

export interface ReadyResponse {
  /** The endpoint's route template, for metrics and logs. */
  readonly route: string;
  /** ETag of the identity encoding; the encoded ones append their coding (`etagFor`). */
  readonly etag: string;
  readonly cacheControl: string;
  readonly body: Buffer;
  /** Encoded bodies, made on first demand and kept while this response is current. */
  readonly encoded: Map<'gzip' | 'br', Buffer | Promise<Buffer>>;
}

export function readyResponse(route: string, etag: string, cacheControl: string, body: Buffer): ReadyResponse {
  return { route, etag, cacheControl, body, encoded: new Map() };
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
  if (body === undefined) {
    const made = coding === 'br' ? brotli(ready.body, BROTLI_OPTIONS) : gzip(ready.body);
    body = made.then((b) => {
      ready.encoded.set(coding, b);
      return b;
    });
    ready.encoded.set(coding, body);
  }
  return body;
}

/**
 * 200 with the body in the negotiated coding, or 304 with no body (and no encoding made) when
 * If-None-Match matches. Resolves at once unless an encoding is being made for the first time.
 *
 * `leading`: headers to write before the response's own (respond.ts `baseHeaderList`), all in one
 * `writeHead` (the front handler's path). Without it the response's headers are added with
 * `setHeader` to those the caller set (the Express path). Both give the same headers in the same order.
 */
export function serveReady(req: IncomingMessage, res: ServerResponse, ready: ReadyResponse, leading?: string[]): void | Promise<void> {
  const coding = ready.body.length >= COMPRESS_MIN_BYTES ? negotiateCoding(req.headers['accept-encoding']) : 'identity';
  const etag = etagFor(ready, coding);
  if (etagMatches(req.headers['if-none-match'], ready.etag)) {
    send(res, 304, leading, [ready.cacheControl, etag], undefined, undefined);
    return;
  }
  if (coding === 'identity') return send(res, 200, leading, [ready.cacheControl, etag], ready.body, undefined);
  const body = encode(ready, coding);
  if (Buffer.isBuffer(body)) return send(res, 200, leading, [ready.cacheControl, etag], body, coding);
  return body.then((b) => send(res, 200, leading, [ready.cacheControl, etag], b, coding));
}

/** Cache-Control, Vary and ETag, then (with a body) Content-Type, Content-Encoding and Content-Length. */
function send(
  res: ServerResponse,
  status: 200 | 304,
  leading: string[] | undefined,
  [cacheControl, etag]: [string, string],
  body: Buffer | undefined,
  coding: 'gzip' | 'br' | undefined,
): void {
  const headers = leading ?? [];
  headers.push('Cache-Control', cacheControl, 'Vary', 'Accept-Encoding', 'ETag', etag);
  if (body) {
    headers.push('Content-Type', JSON_TYPE);
    if (coding) headers.push('Content-Encoding', coding);
    headers.push('Content-Length', String(body.length));
  }
  if (leading) {
    res.writeHead(status, headers);
  } else {
    res.statusCode = status;
    for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i]!, headers[i + 1]!);
  }
  res.end(body);
}
