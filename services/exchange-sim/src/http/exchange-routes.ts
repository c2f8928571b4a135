import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { parseEventsQuery, queryEvents } from '../catalog-query.js';
import { HistoryRangeError, isKnownInterval } from '../history-range.js';
import type { ExchangeSource } from '../protocol.js';
import { sendJson } from './respond.js';

/**
 * The exchange's public REST routes: Gamma (`/events`, `/events/:id`, `/sports`, `/tags`) and CLOB
 * (`/prices-history`, `/book`). Returns false when the path is not one of them.
 */
const historySchema = z.object({
  market: z.string().min(1, 'market is required'),
  interval: z.string().refine(isKnownInterval, 'interval must be 1h, 6h, 1d, 1w, 1m or max').optional(),
  fidelity: z.coerce.number().int().min(1).optional(),
  startTs: z.coerce.number().int().min(0).optional(),
  endTs: z.coerce.number().int().min(0).optional(),
});

export function handleExchangeRoute(source: ExchangeSource, method: string, url: URL, res: ServerResponse): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const params = url.searchParams;

  if (path === '/events') {
    const parsed = parseEventsQuery(params);
    if (!parsed.ok) sendJson(res, 400, { error: parsed.error });
    else {
      const hidden = source.unlisted();
      const listing = source.listing();
      const listed = hidden.size === 0 ? listing : listing.filter((e) => !hidden.has(String(e.fields.id)));
      sendJson(res, 200, queryEvents(listed, parsed.query, (e) => e.fields).map((e) => e.render()));
    }
    return true;
  }
  const one = /^\/events\/(\d+)$/.exec(path);
  if (one) {
    const event = source.listing().find((e) => String(e.fields.id) === one[1]);
    if (event) sendJson(res, 200, event.render());
    else sendJson(res, 404, { error: 'event not found' });
    return true;
  }
  if (path === '/sports') {
    sendJson(res, 200, source.sports());
    return true;
  }
  if (path === '/tags') {
    sendJson(res, 200, source.tags());
    return true;
  }
  if (path === '/prices-history') {
    const parsed = historySchema.safeParse(Object.fromEntries(params));
    if (!parsed.success) {
      sendJson(res, 400, { error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') });
      return true;
    }
    const { market, ...query } = parsed.data;
    try {
      sendJson(res, 200, { history: source.history(market, query) ?? [] });
    } catch (err) {
      if (!(err instanceof HistoryRangeError)) throw err;
      sendJson(res, 400, { error: err.message });
    }
    return true;
  }
  if (path === '/book') {
    const token = params.get('token_id');
    if (!token) {
      sendJson(res, 400, { error: 'token_id is required' });
      return true;
    }
    const book = source.book(token);
    if (book) sendJson(res, 200, book);
    else sendJson(res, 404, { error: 'No orderbook exists for the requested token id' });
    return true;
  }
  return false;
}
