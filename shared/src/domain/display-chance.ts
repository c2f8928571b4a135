import { shownChance } from './odds.js';
import { roundTo } from './rounding.js';

/** Spread above which the midpoint is not trusted and the last trade is shown (the exchange's rule). */
export const WIDE_SPREAD = 0.1;

/**
 * Float slack on the spread comparison: 0.55 − 0.45 is 0.10000000000000003 in doubles, and a
 * spread of exactly 0.10 must count as NOT wider. Far below the exchange's smallest tick (0.001).
 */
const SPREAD_EPSILON = 1e-9;

/** What is known about one outcome's price. Every field is optional information (null). */
export interface DisplayChanceInput {
  bestBid: number | null;
  bestAsk: number | null;
  lastTrade: number | null;
  /** The catalog's (Gamma) `outcomePrices` entry for this outcome. */
  catalogPrice: number | null;
}

/**
 * The chance shown for an outcome — the exchange's own display rule (docs/protocol.md):
 * - both sides quoted, spread 0 to 0.10: the midpoint of best bid and best ask;
 * - spread wider than 0.10: the last trade; with no trade yet the catalog price, then the midpoint;
 * - one-sided or empty book: the catalog price, then the last trade;
 * - crossed (bid at or above ask): never its midpoint (docs/protocol.md §1) — the last trade, then the
 *   catalog price. The ingestor shows the exchange's own top instead where it has one; this is the
 *   rule for a top nobody vouches for.
 *
 * The result is rounded to 4 decimals (so float noise like 0.5249999 never reaches a client or
 * makes a price look "moved") and is a chance the service can show (odds.ts `shownChance`: 0, 1, or
 * within the exchange's extreme ticks 0.001–0.999). Null when nothing is known. Non-finite
 * inputs count as unknown.
 */
export function displayChance(input: DisplayChanceInput): number | null {
  const bid = known(input.bestBid);
  const ask = known(input.bestAsk);
  const trade = known(input.lastTrade);
  const catalog = known(input.catalogPrice);

  let chance: number | null;
  if (bid !== null && ask !== null && bid >= ask) {
    chance = trade ?? catalog;
  } else if (bid !== null && ask !== null) {
    const midpoint = (bid + ask) / 2;
    chance = ask - bid > WIDE_SPREAD + SPREAD_EPSILON ? (trade ?? catalog ?? midpoint) : midpoint;
  } else {
    chance = catalog ?? trade;
  }
  if (chance === null) return null;
  return shownChance(roundTo(chance, 4));
}

function known(value: number | null): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/**
 * A chance's change since an earlier one (`change_24h`: now minus 24 h ago), rounded to 4 decimals;
 * never `-0`, so an unchanged market does not print "-0". The worker's event pages and the API's
 * live-price overlay both use it, so a page shows the same figure whichever made it.
 */
export function chanceChange(now: number, then: number): number {
  return Math.round((now - then) * 10_000) / 10_000 + 0;
}
