import { isIPv6, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Redis } from 'ioredis';
import { redisKeys } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import type { RateLimitState } from './respond.js';

/**
 * 120 requests per minute per client (config.RATE_LIMIT_PER_MINUTE), counted in Redis so every API
 * process and replica shares the counters (DESIGN.md), in ONE round trip per request: a Lua script
 * counts and reads the window in one step (ioredis sends EVALSHA and falls back to EVAL after a
 * SCRIPT FLUSH or on a fresh Redis), and auto-pipelining batches the scripts of concurrent requests.
 *
 * Fixed windows of `windowMs` starting at a client's first request, exact across processes because
 * the count is Redis' own INCR. Headers on every counted response (respond.ts): `x-ratelimit-limit`,
 * `x-ratelimit-remaining`, `x-ratelimit-reset` (Unix seconds when the window resets).
 *
 * CORS preflights (OPTIONS) are not counted: a browser sends them on its own, and counting them would
 * halve a web page's budget. A counter that cannot be reached within `timeoutMs` lets the request
 * through uncounted (no headers): the data read then answers 503 on its own if Redis is away.
 */

export interface RateLimiterOptions {
  redis: Redis;
  prefix: string;
  limit: number;
  logger: Logger;
  windowMs?: number;
  timeoutMs?: number;
  /** Unix ms; injectable for tests. */
  clock?: () => number;
}

export interface RateLimitDecision extends RateLimitState {
  /** Over the limit: answer 429. */
  limited: boolean;
}

/** Requests the front handler counted before handing them to Express (front.ts), with their decision. */
export const countedAlready = new WeakMap<IncomingMessage, RateLimitDecision>();

export interface RateLimiter {
  /** Counts one request of `client`; undefined when Redis could not count it. */
  hit(client: string): Promise<RateLimitDecision | undefined>;
}

/** KEYS[1] the client's counter, ARGV[1] the window in ms → {count in this window, ms until it resets}. */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

interface WithHitScript {
  pmRateLimitHit(key: string, windowMs: number): Promise<[number, number]>;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { redis, limit, logger } = options;
  const windowMs = options.windowMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 500;
  const clock = options.clock ?? Date.now;
  const keyPrefix = redisKeys(options.prefix).rateLimitPrefix;
  if (!('pmRateLimitHit' in redis)) redis.defineCommand('pmRateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  const scripted = redis as unknown as WithHitScript;
  let lastWarnAt = 0;

  return {
    async hit(client) {
      let timer: NodeJS.Timeout | undefined;
      try {
        const [count, ttl] = await Promise.race([
          scripted.pmRateLimitHit(keyPrefix + client, windowMs),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`rate-limit counter timed out after ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        return { limit, remaining: Math.max(0, limit - count), resetMs: clock() + ttl, limited: count > limit };
      } catch (err) {
        // Once a second at most: with Redis away every request lands here.
        if (clock() - lastWarnAt > 1_000) {
          lastWarnAt = clock();
          logger.warn({ err }, 'rate limiter could not count; request let through uncounted');
        }
        return undefined;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * The client a request is counted against: the socket's address, or with TRUST_PROXY = n hops the
 * address n entries from the right of X-Forwarded-For (what Express's `req.ip` gives for a numeric
 * `trust proxy`), so a client cannot dodge the limit by sending the header itself. IPv6 clients are
 * counted per /56, the block one subscriber usually holds.
 */
export function clientKey(req: IncomingMessage, trustProxy: number): string {
  let address = (req.socket as Socket).remoteAddress ?? '';
  if (trustProxy > 0) {
    const header = req.headers['x-forwarded-for'];
    if (typeof header === 'string' && header !== '') {
      const forwarded = header.split(',').map((a) => a.trim()).reverse();
      const chain = [address, ...forwarded];
      address = chain[Math.min(trustProxy, chain.length - 1)] ?? address;
    }
  }
  return subscriberKey(address);
}

function subscriberKey(address: string): string {
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  const hex = groups.map((g) => g.padStart(4, '0')).join('');
  return `${hex.slice(0, 14)}::/56`;
}
