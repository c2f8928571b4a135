import type { Logger } from '@pm/shared';
import { parseGammaEvents, type GammaEventsPage } from '@pm/shared/exchange';

/**
 * The catalog's REST endpoint (`GET /events`), with a timeout per request and retries with
 * exponential backoff. Bodies are parsed leniently (see shared/src/exchange/gamma.ts).
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
}

export class GammaHttpError extends Error {
  override name = 'GammaHttpError';
  constructor(
    readonly status: number,
    url: string,
  ) {
    super(`GET ${url} answered ${status}`);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function createGammaClient(opts: GammaClientOptions): GammaClient {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const attempts = opts.attempts ?? 4;
  const retryDelayMs = opts.retryDelayMs ?? 500;

  async function getJson(path: string, query: Record<string, string>): Promise<unknown> {
    const url = `${opts.baseUrl}${path}?${new URLSearchParams(query).toString()}`;
    let lastErr: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
        if (!res.ok) {
          await res.body?.cancel();
          throw new GammaHttpError(res.status, url);
        }
        return (await res.json()) as unknown;
      } catch (err) {
        lastErr = err;
        // A 4xx other than throttling will not get better by asking again.
        if (err instanceof GammaHttpError && err.status >= 400 && err.status < 500 && err.status !== 429) break;
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
    const body = await getJson('/events', query);
    if (!Array.isArray(body)) throw new Error('catalog /events did not answer an array');
    return parseGammaEvents(body);
  }

  return {
    events,
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
