import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit, type AugmentedRequest, type RateLimitInfo } from 'express-rate-limit';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import type { Redis } from 'ioredis';
import { redisKeys, type Logger } from '@pm/shared';
import { sendError } from './respond.js';

/**
 * 120 requests per minute per client IP (config.RATE_LIMIT_PER_MINUTE), counted in Redis so every
 * API replica shares the counters (DESIGN.md). Headers on every counted response:
 * `x-ratelimit-limit`, `x-ratelimit-remaining`, `x-ratelimit-reset` (Unix seconds when the window
 * resets). express-rate-limit's legacy headers carry the same values, but we write them ourselves so
 * the names, and their presence on the 429, do not depend on the library's header modes.
 *
 * CORS preflights (OPTIONS) are not counted: a browser sends them on its own, and counting them would
 * halve a web page's budget. They are cheap (answered without Redis) and carry no rate-limit headers.
 *
 * The client is `req.ip`, which honours X-Forwarded-For only for `trust proxy` hops (TRUST_PROXY),
 * so a client cannot dodge the limit by sending the header.
 */

export interface RateLimiterOptions {
  redis: Redis;
  prefix: string;
  limit: number;
  logger: Logger;
  windowMs?: number;
  /** A counter round trip slower than this lets the request through uncounted. */
  timeoutMs?: number;
}

const RATE_LIMIT_PROPERTY = 'rateLimit';

function rateLimitInfo(req: Request): RateLimitInfo | undefined {
  return (req as AugmentedRequest)[RATE_LIMIT_PROPERTY];
}

function setRateLimitHeaders(res: Response, info: RateLimitInfo, windowMs: number): void {
  const resetMs = info.resetTime?.getTime() ?? Date.now() + windowMs;
  res.setHeader('x-ratelimit-limit', String(info.limit));
  res.setHeader('x-ratelimit-remaining', String(info.remaining));
  res.setHeader('x-ratelimit-reset', String(Math.ceil(resetMs / 1000)));
}

/**
 * `sendCommand` for rate-limit-redis over ioredis. The store runs its counter as a Lua script: it
 * SCRIPT LOADs it once at start-up and remembers the promise, so a Redis that is down at that moment
 * would leave the limiter failing for the life of the process. Here the SHA is computed locally (no
 * Redis needed at start-up) and a NOSCRIPT reply (fresh Redis, SCRIPT FLUSH) falls back to EVAL,
 * which also loads the script again.
 */
function ioredisSendCommand(redis: Redis, timeoutMs: number) {
  const scripts = new Map<string, string>();

  const call = async (command: string, args: string[]): Promise<RedisReply> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return (await Promise.race([
        redis.call(command, ...args),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`redis ${command} timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ])) as RedisReply;
    } finally {
      clearTimeout(timer);
    }
  };

  return async (...args: string[]): Promise<RedisReply> => {
    const [command = '', ...rest] = args;
    const upper = command.toUpperCase();
    if (upper === 'SCRIPT' && rest[0]?.toUpperCase() === 'LOAD' && rest[1] !== undefined) {
      const sha = createHash('sha1').update(rest[1]).digest('hex');
      scripts.set(sha, rest[1]);
      return sha;
    }
    if (upper === 'EVALSHA' && rest[0] !== undefined) {
      try {
        return await call('EVALSHA', rest);
      } catch (err) {
        const script = scripts.get(rest[0]);
        if (!script || !(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        return call('EVAL', [script, ...rest.slice(1)]);
      }
    }
    return call(command, rest);
  };
}

/** The rate-limit middleware pair: count (or answer 429), then set the headers on the way through. */
export function createRateLimiter(options: RateLimiterOptions): RequestHandler[] {
  const windowMs = options.windowMs ?? 60_000;
  const { logger } = options;
  const limiter = rateLimit({
    windowMs,
    limit: options.limit,
    standardHeaders: false,
    legacyHeaders: false,
    requestPropertyName: RATE_LIMIT_PROPERTY,
    store: new RedisStore({
      sendCommand: ioredisSendCommand(options.redis, options.timeoutMs ?? 500),
      prefix: redisKeys(options.prefix).rateLimitPrefix,
    }),
    // Redis down: serve uncounted rather than fail; the data read then answers 503 on its own.
    passOnStoreError: true,
    skip: (req) => req.method === 'OPTIONS',
    // TRUST_PROXY=0 with a client-sent X-Forwarded-For is exactly the case we mean to ignore.
    validate: { xForwardedForHeader: false },
    logger: {
      error: (err, message) => logger.warn({ err }, message ?? 'rate limiter error'),
      warn: (err, message) => logger.warn({ err }, message ?? 'rate limiter warning'),
    },
    handler: (req, res) => {
      const info = rateLimitInfo(req);
      if (info) setRateLimitHeaders(res, info, windowMs);
      const resetMs = info?.resetTime?.getTime() ?? Date.now() + windowMs;
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil((resetMs - Date.now()) / 1000))));
      sendError(res, 'rate_limited', `too many requests: the limit is ${options.limit} a minute per client; try again later`);
    },
  });
  const headers = (req: Request, res: Response, next: NextFunction) => {
    const info = rateLimitInfo(req);
    if (info) setRateLimitHeaders(res, info, windowMs);
    next();
  };
  return [limiter, headers];
}
