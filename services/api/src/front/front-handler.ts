import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '@pm/shared/logger';
import type { RequestObserver } from '../ops/metrics.js';
import type { RateLimitDecision, RateLimiter } from '../http/rate-limit.js';
import type { ReadyCache } from './ready-cache.js';
import type { ReadyResponse } from './ready-response.js';
import { serveReady } from './ready-response.js';
import { requestIdOf, sendError, sendRateLimited, setBaseHeaders, setCorsHeaders, setRateLimitHeaders } from '../http/respond.js';
import { ApiError, INTERNAL_MESSAGE } from '../http/errors.js';

/**
 * The request handler in front of Express (docs/design.md "The read path"): a GET or HEAD whose ready
 * response is held and current is answered here — rate limit (the rate limiter's own store, one Redis
 * round trip shared by the requests of that moment: rate-limit-store.ts), the shared headers written at once (node-internals.ts `writeHeadBlock`),
 * conditional request, encoding — without walking Express's router. So is one whose response is
 * being made meanwhile for a request Express took: it waits for that build, as Express's would.
 * Everything else (a miss, another method, ops paths, docs, errors) is handed to the Express app
 * unchanged, which makes the ready response for the next time. Both paths write through respond.ts
 * and ready-response.ts.
 */
export function frontHandler(deps: {
  app: RequestListener;
  readyCache: ReadyCache;
  limiter: RateLimiter;
  observer: RequestObserver;
  logger: Logger;
}): RequestListener {
  const { app, readyCache, limiter, observer, logger } = deps;

  const answer = (req: IncomingMessage, res: ServerResponse, target: string) => {
    limiter.count(req, (err, decision) => {
      // Redis could not count: Express takes the request, exactly as it would a miss.
      if (err) return app(req, res);
      try {
        answerCounted(req, res, target, decision);
      } catch (failure) {
        fail(req, res, failure, undefined, decision);
      }
    });
  };

  const answerCounted = (req: IncomingMessage, res: ServerResponse, target: string, decision: RateLimitDecision) => {
    const ready = readyCache.lookup(target);
    if (decision.limited) {
      const requestId = requestIdOf(req);
      observer.observe(req, res, requestId, ready ? ready.route : () => undefined);
      setBaseHeaders(req, res, requestId);
      setCorsHeaders(res);
      return sendRateLimited(res, decision, Date.now());
    }
    if (ready) return serveCounted(req, res, ready, decision);
    // Being made for a request Express took (a new version, or a target not held yet): wait for it
    // here, as that request does, rather than walk the router to the same build.
    const building = readyCache.building(target);
    // A build that failed with an answer for the user (a retired event the worker did not bring back in
    // time: 503 with Retry-After) is that answer for every request that waited on it, as on the Express
    // path; handing them over would start the same build again, once per waiting request.
    if (building) {
      return void building.then(
        (made) => serveCounted(req, res, made, decision),
        (err: unknown) => (err instanceof ApiError ? refuse(req, res, err, decision) : handOver(req, res, decision)),
      );
    }
    // Retired during the counter's round trip, nothing being made: Express answers, with this count.
    handOver(req, res, decision);
  };

  /** The error a shared build failed with, answered as the Express app's error handler answers it. */
  const refuse = (req: IncomingMessage, res: ServerResponse, err: ApiError, decision: RateLimitDecision) => {
    const requestId = requestIdOf(req);
    observer.observe(req, res, requestId, () => undefined);
    setBaseHeaders(req, res, requestId);
    setCorsHeaders(res);
    setRateLimitHeaders(res, decision);
    if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds));
    sendError(res, err.code, err.message);
  };

  /** Express answers a request counted here, with this count (its build failed without an answer: Express says why). */
  const handOver = (req: IncomingMessage, res: ServerResponse, decision: RateLimitDecision) => {
    limiter.handOver(req, decision);
    app(req, res);
  };

  const serveCounted = (req: IncomingMessage, res: ServerResponse, ready: ReadyResponse, decision: RateLimitDecision) => {
    const requestId = requestIdOf(req);
    observer.observe(req, res, requestId, ready.route);
    // Every header written at once: the same headers, in the same order, as the Express path sets.
    try {
      const written = serveReady(req, res, ready, { requestId, state: decision });
      if (written) written.catch((err: unknown) => fail(req, res, err, requestId, decision));
    } catch (err) {
      fail(req, res, err, requestId, decision);
    }
  };

  /** A 500 with the headers every response carries (and the count, when the request was counted). */
  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown, requestId?: string, decision?: RateLimitDecision) => {
    logger.error({ err }, 'ready response failed');
    if (res.headersSent) return void res.destroy();
    if (!res.hasHeader('x-request-id')) {
      setBaseHeaders(req, res, requestId);
      setCorsHeaders(res);
    }
    if (decision) setRateLimitHeaders(res, decision);
    sendError(res, 'internal', INTERNAL_MESSAGE);
  };

  return (req, res) => {
    const target = req.url ?? '/';
    if ((req.method === 'GET' || req.method === 'HEAD') && (readyCache.holds(target) || readyCache.building(target))) return answer(req, res, target);
    app(req, res);
  };
}
