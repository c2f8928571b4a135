import { roundTo } from './rounding.js';

/**
 * An outcome's quotes: the top of book its displayed chance was computed from (display-chance.ts),
 * so a client can check the display rule itself. Null where the book has no such side, or no trade
 * yet. Field names as the API writes them.
 */
export interface Quote {
  best_bid: number | null;
  best_ask: number | null;
  /** best_ask − best_bid (4 decimals); null unless both sides are quoted. */
  spread: number | null;
  last_trade_price: number | null;
}

export const NO_QUOTE: Readonly<Quote> = Object.freeze({ best_bid: null, best_ask: null, spread: null, last_trade_price: null });

const price = (p: number | null): number | null => (p !== null && Number.isFinite(p) && p >= 0 && p <= 1 ? roundTo(p, 4) : null);

/** The quotes of a top of book (each side as shown) and the last trade. */
export function quoteOf(bid: number | null, ask: number | null, lastTrade: number | null): Quote {
  const b = price(bid);
  const a = price(ask);
  return { best_bid: b, best_ask: a, spread: b !== null && a !== null ? roundTo(a - b, 4) : null, last_trade_price: price(lastTrade) };
}

/** As stored in Redis (`keys.quotes`, token → text): `bid|ask|last`, an empty part for null. */
export function formatQuote(q: Quote): string {
  const part = (p: number | null) => (p === null ? '' : String(p));
  return `${part(q.best_bid)}|${part(q.best_ask)}|${part(q.last_trade_price)}`;
}

/** The stored text back; undefined when it is not one (a corrupt value counts as no quote). */
export function parseQuote(raw: string | null | undefined): Quote | undefined {
  if (typeof raw !== 'string') return undefined;
  const parts = raw.split('|');
  if (parts.length !== 3) return undefined;
  const [bid, ask, last] = parts.map((p) => (p === '' ? null : Number(p))) as [number | null, number | null, number | null];
  return quoteOf(bid, ask, last);
}
