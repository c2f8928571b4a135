import type { Redis } from 'ioredis';
import { redisKeys } from '../redis/keys.js';
import { RecordRefused } from './errors.js';
import { withDeadline } from '../wait.js';

/** A price older than this is not live: the write path refuses it (docs/design.md). */
export const MAX_PRICE_AGE_MS = 60_000;

const DECIMAL = /^(0(\.\d+)?|1(\.0+)?)$/;

/**
 * The chance the API shows for an outcome at this instant, exactly as the ingestor wrote it
 * (a decimal string, stored as numeric without passing through a float), or a refusal when it is
 * missing, older than 60 s by `now`, or not strictly between 0 and 1 (a call needs a price).
 */
/** How long the live price is waited for before the call is refused as an error. */
const LIVE_CHANCE_DEADLINE_MS = 3_000;

export async function readLiveChance(
  redis: Redis,
  prefix: string,
  token: { tokenId: string; label: string },
  now: number,
): Promise<{ text: string; value: number }> {
  const keys = redisKeys(prefix);
  // Read inside the call's transaction: a Redis that stops answering must not hold it open.
  const [[, text], [, at]] = (await withDeadline(
    redis.multi().hget(keys.chances, token.tokenId).hget(keys.chanceAt, token.tokenId).exec(),
    LIVE_CHANCE_DEADLINE_MS,
    `reading the live price of ${token.label}`,
  )) as [[Error | null, string | null], [Error | null, string | null]];
  const atMs = at === null ? NaN : Number(at);
  if (text === null || !Number.isFinite(atMs)) {
    throw new RecordRefused('stale_price', `no live price for ${token.label}`);
  }
  const age = now - atMs;
  if (age > MAX_PRICE_AGE_MS) {
    throw new RecordRefused('stale_price', `the price of ${token.label} is ${Math.ceil(age / 1000)} s old (the limit is ${MAX_PRICE_AGE_MS / 1000} s)`);
  }
  const value = Number(text);
  if (!DECIMAL.test(text) || !(value > 0 && value < 1)) {
    throw new RecordRefused('bad_input', `the live chance of ${token.label} is ${text}; a call needs a chance strictly between 0 and 1`);
  }
  return { text, value };
}
