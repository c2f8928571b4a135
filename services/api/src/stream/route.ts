import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '@pm/shared/logger';
import { parseStreamParams, STREAM_PATH } from '@pm/shared/api';
import { clientKey } from '../http/rate-limit.js';
import { sendError } from '../http/respond.js';
import type { StreamHub } from './hub.js';
import type { OpenStreams, OpenStreamSlot } from './open-streams.js';

/**
 * `GET /api/v1/stream` in the Express app, after the shared middleware (base and CORS headers,
 * request log, the rate limit — opening a stream is one request — and the read-only rule):
 * parameters (400 naming the bad one, nothing opened), the per-client cap on open streams over every
 * API process (open-streams.ts; 429 with the standard body), then the SSE headers and the hub takes
 * the response.
 */
export function streamRoute(deps: { hub: StreamHub; openStreams: OpenStreams; maxPerIp: number; trustProxy: number; refreshMs: number; logger: Logger }): RequestHandler {
  const { hub, openStreams, maxPerIp, trustProxy, logger } = deps;
  const slots = new Set<OpenStreamSlot>();
  // Open streams keep counting while this process serves them (open-streams.ts).
  setInterval(() => openStreams.refresh(slots), deps.refreshMs).unref();

  return async (req: Request, res: Response) => {
    res.locals['route'] = STREAM_PATH;
    // Express 5's `req.query` is a getter that re-parses; read it once.
    const query: Record<string, unknown> = { ...(req.query as Record<string, unknown>) };
    for (const name of ['topics', 'events', 'markets', 'last_event_id']) {
      if (query[name] !== undefined && typeof query[name] !== 'string') return sendError(res, 'bad_request', `${name} must be given at most once`);
    }
    const header = req.headers['last-event-id'];
    const parsed = parseStreamParams(query as { topics?: string; events?: string; markets?: string; last_event_id?: string }, typeof header === 'string' ? header : undefined);
    if (!parsed.ok) return sendError(res, 'bad_request', parsed.message);

    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    // nginx and similar proxies would otherwise hold the messages back to fill a buffer.
    res.setHeader('X-Accel-Buffering', 'no');
    if (req.method === 'HEAD') {
      res.end();
      return;
    }

    const slot = await openStreams.admit(clientKey(req, trustProxy));
    if (slot === 'full') {
      res.removeHeader('X-Accel-Buffering');
      res.setHeader('Retry-After', '10');
      return sendError(res, 'rate_limited', `too many open streams: at most ${maxPerIp} at once per client; close one first`);
    }
    if (slot !== undefined) {
      slots.add(slot);
      res.once('close', () => {
        slots.delete(slot);
        openStreams.release(slot);
      });
    }
    if (res.destroyed) return;
    res.flushHeaders();
    hub.open(res, parsed.params).catch((err: unknown) => {
      logger.error({ err }, 'stream failed');
      res.destroy();
    });
  };
}
