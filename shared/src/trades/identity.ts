import { hash } from 'node:crypto';
import type { TradePrint } from '../exchange/market-ws.js';

/**
 * A print as the tape stores it (docs/design.md "Trades"): the exchange's time, the price in millionths, the
 * size signed by the taker's side, and the 64-bit identity key that makes a repeat recognisable.
 */
export interface StoredTrade {
  /** Unix ms, the exchange's time of the match. */
  atMs: number;
  /** Price in millionths of a dollar (0 … 1,000,000). */
  px: number;
  /** Shares; positive for a BUY taker, negative for a SELL. */
  sz: number;
  /** The identity key: a signed 64-bit integer in decimal (Postgres bigint). */
  key: string;
}

export const PRICE_UNITS = 1_000_000;

/**
 * The identity key of a print (token implied: keys are unique per series). With a transaction hash:
 * the hash and what it printed (a transaction that fills the same token twice at different prices
 * prints twice, and those are two trades); without one: the time, price, size and side. Either way
 * with the ordinal among identical prints of one websocket message, so identical prints in a message
 * stay distinct while the same message delivered again (a reconnect, a second ingestor) maps onto the
 * same keys. 64 bits of SHA-256: a collision within one token's prints is ~n²/2⁶⁵ (10⁻⁸ at a
 * million prints).
 */
export function tradeKey(p: Pick<TradePrint, 'timestamp' | 'side' | 'transactionHash'>, px: number, size: number, ordinal: number): string {
  const what = `${px}|${size}|${p.side}|${ordinal}`;
  const text = p.transactionHash === null ? `p|${p.timestamp}|${what}` : `h|${p.transactionHash}|${what}`;
  // The one-shot form: a third of createHash's cost, on the ingestor's hot path.
  return hash('sha256', text, 'buffer').readBigInt64BE(0).toString();
}

/** The stored form of a parsed print; `ordinal` counts identical prints before it in its message. */
export function storedTrade(p: TradePrint, ordinal: number): StoredTrade {
  const px = Math.round(Number(p.price) * PRICE_UNITS);
  const size = Number(p.size);
  return { atMs: p.timestamp, px, sz: p.side === 'SELL' ? -size : size, key: tradeKey(p, px, size, ordinal) };
}

/**
 * Ordinals of the prints of one message: for each, how many identical prints (same token, time,
 * price, size, side and transaction hash) came before it in the message.
 */
export function ordinals(prints: ReadonlyArray<{ assetId: string; trade: TradePrint }>): number[] {
  const seen = new Map<string, number>();
  return prints.map(({ assetId, trade: t }) => {
    const k = `${assetId}|${t.timestamp}|${Number(t.price)}|${Number(t.size)}|${t.side}|${t.transactionHash ?? ''}`;
    const n = seen.get(k) ?? 0;
    seen.set(k, n + 1);
    return n;
  });
}
