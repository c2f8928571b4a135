import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { errorBody, ERROR_STATUS, type ErrorCode } from './errors.js';

/**
 * Writing responses. Bodies are serialised once and written with `res.end`, with an explicit
 * Content-Length, so a HEAD request gets exactly the GET's headers (Node drops the body of a HEAD).
 * Express's own ETag and freshness logic is turned off in app.ts: the ETag comes from here.
 */

const JSON_TYPE = 'application/json; charset=utf-8';

/** A strong ETag over `input`: a short digest, quoted. */
export function strongEtag(input: string): string {
  return `"${createHash('sha1').update(input).digest('base64url')}"`;
}

/** RFC 9110 §13.1.2: If-None-Match compares weakly; `*` matches any current representation. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);
  return ifNoneMatch.split(',').some((candidate) => opaque(candidate.trim()) === opaque(etag));
}

/** 200 with the body, or 304 with no body when If-None-Match matches the ETag. */
export function sendCachedJson(
  req: Request,
  res: Response,
  options: { etag: string; maxAgeSeconds: number; serialise: () => string | Buffer },
): void {
  res.setHeader('Cache-Control', `public, max-age=${options.maxAgeSeconds}`);
  res.setHeader('ETag', options.etag);
  if (etagMatches(req.get('if-none-match'), options.etag)) {
    res.status(304).end();
    return;
  }
  writeJson(res, 200, options.serialise());
}

export function writeJson(res: Response, status: number, body: string | Buffer): void {
  res.status(status);
  res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
  res.end(body);
}

/** The error body with its status. Errors are never cached. */
export function sendError(res: Response, code: ErrorCode, message: string): void {
  res.removeHeader('ETag');
  res.setHeader('Cache-Control', 'no-store');
  writeJson(res, ERROR_STATUS[code], JSON.stringify(errorBody(code, message)));
}
