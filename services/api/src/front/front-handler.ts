import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '@pm/shared/logger';
import type { RequestObserver } from '../ops/metrics.js';
import type { RateLimitDecision, RateLimiter } from '../http/rate-limit.js';
import type { ReadyCache } from './ready-cache.js';
import { serveReady } from './ready-response.js';
import { requestIdOf, sendError, sendRateLimited, setBaseHeaders, setCorsHeaders, setRateLimitHeaders } from '../http/respond.js';
import { INTERNAL_MESSAGE } from '../http/errors.js';

/**
 * The request handler in front of Express (docs/design.md "The read path"): a GET or HEAD whose ready
 * response is held and current is answered here — rate limit (the rate limiter's own store, one Redis
 * round trip shared by the requests of that moment: rate-limit-store.ts), the shared headers written at once (node-internals.ts `writeHeadBlock`),
 * conditional request, encoding — without walking Express's router. Everything else (a
 * miss, another method, ops paths, docs, errors) is handed to the Express app unchanged, which makes
 * the ready response for the next time. Both paths write through respond.ts and ready-response.ts.
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
    // Retired during the counter's round trip: Express answers, with this count (not another).
    if (!ready && !decision.limited) {
      limiter.handOver(req, decision);
      return app(req, res);
    }
    const requestId = requestIdOf(req);
    observer.observe(req, res, requestId, ready ? ready.route : () => undefined);
    if (decision.limited || !ready) {
      setBaseHeaders(req, res, requestId);
      setCorsHeaders(res);
      return sendRateLimited(res, decision, Date.now());
    }
    // Every header written at once: the same headers, in the same order, as the Express path sets.
    const written = serveReady(req, res, ready, { requestId, state: decision });
    if (written) written.catch((err: unknown) => fail(req, res, err, requestId, decision));
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
    if ((req.method === 'GET' || req.method === 'HEAD') && readyCache.holds(target)) return answer(req, res, target);
    app(req, res);
  };
}
