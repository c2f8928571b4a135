import type { Logger } from '@pm/shared/logger';
import { getJson, HttpStatusError } from '../common/http.js';
import { parseGammaEvents, parseGammaSports, type GammaEventsPage, type GammaSport } from '@pm/shared/exchange';
import { sleep } from '@pm/shared/wait';

/**
 * The catalog's REST endpoints (`GET /events`, `/events/:id`, `/sports`), with a timeout per
 * request and retries with exponential backoff. Bodies are parsed leniently (see
 * shared/src/exchange/gamma.ts).
 */
export interface GammaClientOptions {
  baseUrl: string;
  logger: Logger;
  /** Per request; default 10 s. */
  timeoutMs?: number;
  /** Attempts per request including the first; default 4. */
  attempts?: number;
  /** First retry delay; doubles each time. Default 500 ms. */
  retryDelayMs?: number;
}

export interface GammaClient {
  /** One page of open events, busiest first. */
  openEventsPage(offset: number, limit: number): Promise<GammaEventsPage>;
  /** Events by query, e.g. `{ id }` or `{ slug }`, whatever their state. */
  events(query: Record<string, string>): Promise<GammaEventsPage>;
  /**
   * One event by id (`GET /events/:id`), which answers for events the list queries no longer
   * show. Null when the catalog answers 404: it does not know the event at all.
   */
  eventById(id: string): Promise<GammaEventsPage | null>;
  /** The exchange's leagues (`GET /sports`). */
  sports(): Promise<GammaSport[]>;
}


export function createGammaClient(opts: GammaClientOptions): GammaClient {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const attempts = opts.attempts ?? 4;
  const retryDelayMs = opts.retryDelayMs ?? 500;

  async function getCatalog(path: string, query: Record<string, string>): Promise<unknown> {
    const search = new URLSearchParams(query).toString();
    const url = `${opts.baseUrl}${path}${search ? `?${search}` : ''}`;
    let lastErr: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        return await getJson(url, { timeoutMs });
      } catch (err) {
        lastErr = err;
        if (err instanceof HttpStatusError && err.final) break;
        if (attempt < attempts) {
          const delay = retryDelayMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5);
          opts.logger.warn({ url, attempt, err: String(err) }, 'catalog request failed; retrying');
          await sleep(delay);
        }
      }
    }
    throw lastErr;
  }

  async function events(query: Record<string, string>): Promise<GammaEventsPage> {
    const body = await getCatalog('/events', query);
    if (!Array.isArray(body)) throw new Error('catalog /events did not answer an array');
    return parseGammaEvents(body);
  }

  return {
    events,
    async eventById(id) {
      try {
        return parseGammaEvents([await getCatalog(`/events/${encodeURIComponent(id)}`, {})]);
      } catch (err) {
        if (err instanceof HttpStatusError && err.status === 404) return null;
        throw err;
      }
    },
    async sports() {
      const body = await getCatalog('/sports', {});
      if (!Array.isArray(body)) throw new Error('catalog /sports did not answer an array');
      return parseGammaSports(body);
    },
    openEventsPage(offset, limit) {
      return events({
        active: 'true',
        closed: 'false',
        order: 'volume24hr',
        ascending: 'false',
        limit: String(limit),
        offset: String(offset),
      });
    },
  };
}
