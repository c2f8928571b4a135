import { isIPv6, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import { rateLimit, type RateLimitInfo } from 'express-rate-limit';
import { redisKeys } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import { RedisRateLimitStore } from './rate-limit-store.js';
import { sendRateLimited, setRateLimitHeaders, type RateLimitState } from './respond.js';

/**
 * 120 requests per minute per client (config.RATE_LIMIT_PER_MINUTE), by express-rate-limit over one
 * Redis store (rate-limit-store.ts) that every API process and replica shares, so the limit is exact
 * across all of them. The Express path runs express-rate-limit's middleware; the front handler, which
 * answers ready responses without Express, calls the same store's `increment` (`count`). Both write
 * the same headers through respond.ts: `x-ratelimit-limit`, `x-ratelimit-remaining`,
 * `x-ratelimit-reset` (Unix seconds when the window resets) on every counted answer, and
 * `Retry-After` on a 429.
 *
 * A request the front handler counted and then hands to Express (its ready response was retired
 * while Redis counted) carries its count as `req.rateLimit`, where express-rate-limit itself puts
 * it, and the middleware skips it: each request is counted once.
 *
 * CORS preflights (OPTIONS) are not counted: a browser sends them on its own, and counting them would
 * halve a web page's budget. A counter that cannot be reached within `timeoutMs` lets the request
 * through uncounted (no headers): the data read then answers 503 on its own if Redis is away.
 */

export interface RateLimiterOptions {
  redis: Redis;
  prefix: string;
  limit: number;
  /** Proxy hops whose X-Forwarded-For is trusted (`clientKey`). */
  trustProxy: number;
  logger: Logger;
  windowMs?: number;
  timeoutMs?: number;
  /** Unix ms; injectable for tests. */
  clock?: () => number;
}

export interface RateLimitDecision extends RateLimitState {
  /** This request's place in its client's count in the window. */
  used: number;
  /** Over the limit: answer 429. */
  limited: boolean;
}

export interface RateLimiter {
  /** express-rate-limit over the shared store, then the headers of the count: for the Express app. */
  middleware: RequestHandler[];
  /**
   * The front handler's count of `req`: the same store's increment, as a callback (a cached read's
   * count allocates its decision and nothing else). `err` when Redis could not count.
   */
  count(req: IncomingMessage, done: (err: Error | undefined, decision: RateLimitDecision) => void): void;
  /** Hands a request counted by `count` to Express with its count, so the middleware does not count it again. */
  handOver(req: IncomingMessage, decision: RateLimitDecision): void;
}

/** express-rate-limit's own request property (its `requestPropertyName` default). */
type Counted = IncomingMessage & { rateLimit?: RateLimitInfo };

export function decisionOf(info: RateLimitInfo): RateLimitDecision {
  return decided(info.limit, info.used, info.resetTime?.getTime() ?? 0);
}

function decided(limit: number, used: number, resetMs: number): RateLimitDecision {
  return { limit, used, remaining: Math.max(0, limit - used), resetMs, limited: used > limit };
}

/** No count: what `count` hands its callback with an error. */
const UNCOUNTED: RateLimitDecision = Object.freeze(decided(0, 0, 0));

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { redis, limit, trustProxy, logger } = options;
  const windowMs = options.windowMs ?? 60_000;
  const clock = options.clock ?? Date.now;
  const store = new RedisRateLimitStore(redis, { prefix: redisKeys(options.prefix).rateLimitPrefix, timeoutMs: options.timeoutMs, clock });
  // Once a second at most: with Redis away every request lands here.
  let lastWarnAt = 0;
  const couldNotCount = (err: unknown) => {
    if (clock() - lastWarnAt < 1_000) return;
    lastWarnAt = clock();
    logger.warn({ err }, 'rate limiter could not count; request let through uncounted');
  };

  const limiter = rateLimit({
    windowMs,
    limit,
    store,
    // The headers are written below, by the same function as on the front path.
    legacyHeaders: false,
    standardHeaders: false,
    keyGenerator: (req) => clientKey(req, trustProxy),
    skip: (req) => req.method === 'OPTIONS' || (req as Counted).rateLimit !== undefined,
    handler: (req, res) => sendRateLimited(res, decisionOf((req as Counted).rateLimit!), clock()),
    passOnStoreError: true,
    logger: { error: couldNotCount, warn: (err, message) => logger.warn({ err }, message ?? 'express-rate-limit') },
  });
  const writeHeaders = (req: Request, res: Response, next: NextFunction) => {
    const info = (req as Counted).rateLimit;
    if (info !== undefined) setRateLimitHeaders(res, decisionOf(info));
    next();
  };

  return {
    middleware: [limiter, writeHeaders],
    count: (req, done) => {
      store.count(clientKey(req, trustProxy), (err, totalHits, resetMs) => {
        if (err) {
          couldNotCount(err);
          return done(err, UNCOUNTED);
        }
        done(undefined, decided(limit, totalHits, resetMs));
      });
    },
    handOver: (req, decision) => {
      (req as Counted).rateLimit = { limit, used: decision.used, remaining: decision.remaining, resetTime: new Date(decision.resetMs), key: clientKey(req, trustProxy) };
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
  // An IPv4 address as it is (the common case, without isIPv6's long regular expression).
  if (!address.includes(':')) return address;
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  const hex = groups.map((g) => g.padStart(4, '0')).join('');
  return `${hex.slice(0, 14)}::/56`;
}
