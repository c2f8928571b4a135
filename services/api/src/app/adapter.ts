import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { SnapshotName } from '@pm/shared/redis';
import { CACHE_MAX_AGE_SECONDS, type EndpointOf, type EndpointPath, type ParamsOf } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { Handler, HandlerContext } from './handler.js';
import type { ReadyCache } from '../front/ready-cache.js';
import { readyResponse, serveReady, type ReadyResponse } from '../front/ready-response.js';
import { strongEtag } from '../http/respond.js';

/**
 * The one adapter between Express and every handler: parameter validation (400 naming the parameter
 * and its rule), the handler call, the response's cache identity, Cache-Control, ETag with 304 on
 * If-None-Match, serialisation and encodings. A handler never touches `req` or `res`.
 *
 * Cache identity (docs/design.md "The read path") is computed here and nowhere else: the endpoint, its
 * canonical parameters (validated, defaults applied), every snapshot the handler read with the
 * version it read, and `live` when the handler asked for it. A body is a function of exactly those,
 * so two requests whose bodies differ cannot share an ETag. The same inputs decide when the ready
 * response made here stops being served from memory (ready-cache.ts).
 */

/**
 * Bump when the API changes how it shapes a body from the same snapshot (a field added or renamed
 * here), so ETags handed out by the previous version stop matching.
 */
const RESPONSE_REVISION = '3';

/** A body that can never change (a closed window of history). */
const IMMUTABLE = 'public, max-age=86400, immutable';

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

/** Validated parameters in one spelling: keys sorted, absent ones left out. */
function canonicalParams(params: object): string {
  const entries = Object.entries(params as Record<string, unknown>).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(entries);
}

/**
 * The identity of a response, as listed above; `body` too when no snapshot was read (a computed
 * answer is its own version) or when part of it came from Postgres (a page past the first).
 */
export function cacheIdentity(
  path: string,
  params: object,
  versions: ReadonlyArray<readonly [SnapshotName, string | null]>,
  live: boolean | undefined,
  body: Buffer,
  fromPostgres = false,
): string {
  const parts = [RESPONSE_REVISION, path, canonicalParams(params)];
  for (const [name, etag] of versions) parts.push(`${name}@${etag ?? 'absent'}`);
  if (live !== undefined) parts.push(`live=${live}`);
  if (versions.length === 0 || fromPostgres) parts.push(createHash('sha1').update(body).digest('base64url'));
  return parts.join('\n');
}

export function endpointRoute<P extends EndpointPath>(
  endpoint: EndpointOf<P>,
  handler: Handler<P>,
  ctx: HandlerContext,
  readyCache: ReadyCache,
): RequestHandler {
  const cacheControl = `public, max-age=${CACHE_MAX_AGE_SECONDS[endpoint.cache]}`;
  return async (req: Request, res: Response) => {
    res.locals['route'] = endpoint.path;
    const target = req.originalUrl;
    // Requests for one target that miss together (a new version just swapped in, 64 clients waiting)
    // share one build instead of each serialising the same body; the front handler answers those
    // that arrive while it is made (ready-cache.ts `share`).
    await serveReady(req, res, await readyCache.share(target, () => build(req, target)));
  };

  async function build(req: Request, target: string): Promise<ReadyResponse> {
    const params = parseParams(endpoint, rawParams(endpoint, req));
    const versions: Array<readonly [SnapshotName, string | null]> = [];
    let live: boolean | undefined;
    // A page read from Postgres has no version to be retired by: it is answered once, never held
    // (unless it can never change: below).
    let fromPostgres = false;
    const pages = ctx.pages;
    const noted: HandlerContext = {
      ...ctx,
      snapshots: {
        async read(name, schema) {
          const snapshot = await ctx.snapshots.read(name, schema);
          versions.push([name, snapshot?.etag ?? null]);
          return snapshot;
        },
      },
      live: () => (live = ctx.live()),
      pages: {
        calls: (q) => ((fromPostgres = true), pages.calls(q)),
        userCalls: (q) => ((fromPostgres = true), pages.userCalls(q)),
        user: (handle) => ((fromPostgres = true), pages.user(handle)),
        call: (id) => ((fromPostgres = true), pages.call(id)),
        combos: (q) => ((fromPostgres = true), pages.combos(q)),
        leaderboard: (q) => ((fromPostgres = true), pages.leaderboard(q)),
        closedEvents: (q) => ((fromPostgres = true), pages.closedEvents(q)),
        keptRank: (q) => ((fromPostgres = true), pages.keptRank(q)),
        board: (q) => ((fromPostgres = true), pages.board(q)),
        userSkill: (q) => ((fromPostgres = true), pages.userSkill(q)),
        close: () => pages.close(),
      },
      candles: { read: (q) => ((fromPostgres = true), ctx.candles.read(q)), close: () => ctx.candles.close() },
      // Another read-only path on the read pool: its answer is from Postgres as well, never held.
      readDb: {
        query: ((...args: unknown[]) => ((fromPostgres = true), (ctx.readDb.query as (...a: unknown[]) => unknown)(...args))) as HandlerContext['readDb']['query'],
        tx: ((...args: unknown[]) => ((fromPostgres = true), (ctx.readDb.tx as (...a: unknown[]) => unknown)(...args))) as HandlerContext['readDb']['tx'],
      },
    };
    const result = await handler(params, noted);
    const { immutable } = result;
    // A body that can never change (a closed window of history) is held like a snapshot's, whatever
    // it was read from, until the cache's bounds push it out: not retired by a new version of a
    // snapshot it read (the event's, for its markets' questions, which a price move renews many times
    // a minute), since every client and shared cache may keep it a day anyway (IMMUTABLE).
    const held = !fromPostgres || immutable === true;
    const json = 'json' in result ? result.json : JSON.stringify({ ok: true, ...result.data });
    const body = Buffer.isBuffer(json) ? json : Buffer.from(json);
    const ready = readyResponse(endpoint.path, strongEtag(cacheIdentity(endpoint.path, params, versions, live, body, fromPostgres)), immutable ? IMMUTABLE : cacheControl, body, fromPostgres);
    if (held) readyCache.remember(target, immutable === true ? { ready, versions: [], live: undefined } : { ready, versions, live });
    return ready;
  }
}
