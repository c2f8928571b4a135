import { z } from 'zod';
import { getJson } from '../common/http.js';

/**
 * The exchange's price history (docs/protocol.md §4): `GET /prices-history?market=<token id>&interval=…
 * &fidelity=<minutes>` → `{"history":[{"t":<seconds>,"p":<number>}]}`. Points are parsed one by one:
 * a point that is not a finite time and a chance in [0, 1] is dropped (one bad point must not fail
 * the whole backfill, nor reach the table's check constraint and fail the batch insert).
 */

export interface PricePoint {
  /** Unix seconds. */
  t: number;
  chance: number;
}

const num = z.union([z.number(), z.string().trim().min(1).transform(Number)]);
const pointSchema = z.object({ t: num, p: num });
const bodySchema = z.object({ history: z.array(z.unknown()).nullish() });

/** Parse a /prices-history body; a body without a `history` array is an error, bad points are dropped. */
export function parseHistoryBody(body: unknown): PricePoint[] {
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) throw new Error(`prices-history body is not {history: [...]}: ${parsed.error.message}`);
  const points: PricePoint[] = [];
  for (const raw of parsed.data.history ?? []) {
    const r = pointSchema.safeParse(raw);
    if (!r.success) continue;
    const { t, p } = r.data;
    if (Number.isFinite(t) && t > 0 && Number.isFinite(p) && p >= 0 && p <= 1) points.push({ t: Math.floor(t), chance: p });
  }
  return points;
}

export interface HistoryQuery {
  interval: '1d' | '1w' | '1m' | 'max';
  /** Minutes between points. */
  fidelity: number;
}

export type FetchHistory = (tokenId: string, query: HistoryQuery) => Promise<PricePoint[]>;

/** One request, with a deadline; retries are the backfill queue's job (it paces them). */
export function createHistoryClient(opts: { clobUrl: string; timeoutMs?: number }): FetchHistory {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return async (tokenId, query) => {
    const params = new URLSearchParams({ market: tokenId, interval: query.interval, fidelity: String(query.fidelity) });
    const url = `${opts.clobUrl}/prices-history?${params.toString()}`;
    return parseHistoryBody(await getJson(url, { timeoutMs }));
  };
}
