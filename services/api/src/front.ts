import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '@pm/shared/logger';
import type { RequestObserver } from './metrics.js';
import { clientKey, countedAlready, type RateLimitDecision, type RateLimiter } from './rate-limit.js';
import type { ReadyCache } from './ready-cache.js';
import { serveReady } from './ready-response.js';
import { sendError, sendRateLimited, setBaseHeaders, setRateLimitHeaders } from './respond.js';
import { INTERNAL_MESSAGE } from './errors.js';

/**
 * The request handler in front of Express (DESIGN.md "The read path"): a GET or HEAD whose ready
 * response is held and current is answered here — rate limit (one Redis round trip), the shared
 * headers, conditional request, encoding — without walking Express's router. Everything else (a
 * miss, another method, ops paths, docs, errors) is handed to the Express app unchanged, which makes
 * the ready response for the next time. Both paths write through respond.ts and ready-response.ts.
 */
export function frontHandler(deps: {
  app: RequestListener;
  readyCache: ReadyCache;
  limiter: RateLimiter;
  observer: RequestObserver;
  trustProxy: number;
  logger: Logger;
}): RequestListener {
  const { app, readyCache, limiter, observer, trustProxy, logger } = deps;

  const answer = (req: IncomingMessage, res: ServerResponse, target: string) => {
    limiter.hit(clientKey(req, trustProxy)).then(
      (decision) => {
        // Redis could not count: Express takes the request, exactly as it would a miss.
        if (decision === undefined) return app(req, res);
        const ready = readyCache.lookup(target);
        if (!ready) return handOverCounted(req, res, decision);
        const requestId = setBaseHeaders(req, res);
        observer.observe(req, res, requestId, () => ready.route);
        if (decision.limited) return sendRateLimited(res, decision, Date.now());
        setRateLimitHeaders(res, decision);
        const written = serveReady(req, res, ready);
        if (written) written.catch((err: unknown) => fail(res, err));
      },
      (err: unknown) => fail(res, err),
    );
  };

  /** A response retired during the counter round trip: Express answers, with this count (not another). */
  const handOverCounted = (req: IncomingMessage, res: ServerResponse, decision: RateLimitDecision) => {
    countedAlready.set(req, decision);
    app(req, res);
  };

  const fail = (res: ServerResponse, err: unknown) => {
    logger.error({ err }, 'ready response failed');
    if (!res.headersSent) sendError(res, 'internal', INTERNAL_MESSAGE);
    else res.destroy();
  };

  return (req, res) => {
    const target = req.url ?? '/';
    if ((req.method === 'GET' || req.method === 'HEAD') && readyCache.lookup(target)) return answer(req, res, target);
    app(req, res);
  };
}
