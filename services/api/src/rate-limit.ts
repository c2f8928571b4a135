import { isIPv6, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Redis } from 'ioredis';
import { isCluster, redisKeys } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import type { RateLimitState } from './respond.js';

/**
 * 120 requests per minute per client (config.RATE_LIMIT_PER_MINUTE), counted in Redis so every API
 * process and replica shares the counters (DESIGN.md). A Lua script counts and reads the window in
 * one step (ioredis sends EVALSHA and falls back to EVAL after a SCRIPT FLUSH or on a fresh Redis),
 * and the requests of one client that arrive in the same event-loop turn are counted by ONE script
 * call (INCRBY n): each still gets its own place in Redis' count, in arrival order, so the limit and
 * `x-ratelimit-remaining` are exactly what n calls would have given. The turn's calls of every client
 * go in one pipeline, written at once at the end of the turn: auto-pipelining would hold them for
 * another turn of the event loop (a Redis Cluster client is the exception: its calls are
 * auto-pipelined, one write per node). A client's requests that arrive while its count is on its way
 * go out as a second count at once (Redis runs one connection's commands in the order they were
 * sent, so each reply is still the exact count after its own requests); further ones wait and go
 * together as soon as one of the two is answered. One count at a time made one busy client wait a
 * round trip per batch, the API idle meanwhile (42 % idle in a CPU profile under wrk, issue 18); a
 * count per turn, unbounded, sent ten times the script calls, and their ioredis commands, pipelines
 * and timers living a round trip each were promoted by the young-generation GC: peak RSS 230–240 MB
 * against 128–144 MB (bench harness, 23k requests/s). Two in flight keeps both: Redis counts one
 * batch while the API answers the other.
 *
 * A client a count has put over the limit is refused in this process, without a round trip, until
 * its window resets: Redis' count is already past the limit, so no process would let it through.
 *
 * Fixed windows of `windowMs` starting at a client's first request, exact across processes because
 * the count is Redis' own INCRBY. Headers on every counted response (respond.ts): `x-ratelimit-limit`,
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
  /** `hit` with a callback (the front handler's hot path: no promise per request); `done` may be called at once. */
  count(client: string, done: Counted): void;
}

export type Counted = (decision: RateLimitDecision | undefined) => void;

/**
 * KEYS[1] the client's counter, ARGV[1] the window in ms, ARGV[2] how many requests to count →
 * {count in this window after them, ms until it resets}.
 */
const HIT_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

type HitReply = [number, number];

interface WithHitScript {
  pmRateLimitHitBy(key: string, windowMs: number, requests: number): Promise<HitReply>;
}

/** The script as a pipeline command (ioredis adds defined commands to pipelines): the reply comes to `callback`. */
interface PipelineWithHitScript {
  pmRateLimitHitBy(key: string, windowMs: number, requests: number, callback: (err: Error | null | undefined, reply?: HitReply) => void): unknown;
  exec(): Promise<unknown>;
}

/** Counts of one client on their way to Redis at once (see above). */
const MAX_IN_FLIGHT = 2;

/** Clients over the limit held in memory at most (oldest first out). */
const MAX_LIMITED_CLIENTS = 100_000;

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { redis, limit, logger } = options;
  const windowMs = options.windowMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 500;
  const clock = options.clock ?? Date.now;
  const keyPrefix = redisKeys(options.prefix).rateLimitPrefix;
  if (!('pmRateLimitHitBy' in redis)) redis.defineCommand('pmRateLimitHitBy', { numberOfKeys: 1, lua: HIT_SCRIPT });
  const scripted = redis as unknown as WithHitScript;
  const pipelined = !isCluster(redis);
  let lastWarnAt = 0;
  /** Requests waiting to be counted, by client, in arrival order. */
  const waiting = new Map<string, Counted[]>();
  /** Counts on their way to Redis, by client (at most MAX_IN_FLIGHT). */
  const inFlight = new Map<string, number>();
  let flushScheduled = false;
  /** Client → Unix ms when its window resets, for clients a count put over the limit. */
  const limitedUntil = new Map<string, number>();

  const couldNotCount = (err: unknown) => {
    // Once a second at most: with Redis away every request lands here.
    if (clock() - lastWarnAt > 1_000) {
      lastWarnAt = clock();
      logger.warn({ err }, 'rate limiter could not count; request let through uncounted');
    }
  };

  /** Sends now, in one write, a count for each of `clients` that has requests waiting and room in flight. */
  const sendNow = (clients: Iterable<string>) => {
    const pipeline = pipelined ? (redis.pipeline() as unknown as PipelineWithHitScript) : undefined;
    for (const client of clients) {
      const waiters = waiting.get(client);
      if (waiters === undefined || (inFlight.get(client) ?? 0) >= MAX_IN_FLIGHT) continue;
      waiting.delete(client);
      send(client, waiters, pipeline);
    }
    // Each call's outcome comes to its own callback (a failed write too); the pipeline's own is not needed.
    pipeline?.exec().catch(() => {});
  };

  const flush = () => {
    flushScheduled = false;
    sendNow(waiting.keys());
  };

  /** One script call for `waiters`, the requests of `client` in arrival order: each gets its own place in the count. */
  const send = (client: string, waiters: Counted[], pipeline: PipelineWithHitScript | undefined) => {
    const n = waiters.length;
    inFlight.set(client, (inFlight.get(client) ?? 0) + 1);
    let done = false;
    const finish = (decide: (i: number) => RateLimitDecision | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const left = (inFlight.get(client) ?? 1) - 1;
      if (left > 0) inFlight.set(client, left);
      else inFlight.delete(client);
      // The requests that waited go out before this batch's are answered: Redis works meanwhile.
      if (waiting.has(client)) sendNow([client]);
      for (let i = 0; i < n; i++) {
        try {
          waiters[i]!(decide(i));
        } catch (err) {
          // One request's failure must not keep the others of the batch from their answer.
          logger.error({ err }, 'rate-limit decision handler failed');
        }
      }
    };
    const timer = setTimeout(() => {
      couldNotCount(new Error(`rate-limit counter timed out after ${timeoutMs} ms`));
      finish(() => undefined);
    }, timeoutMs);
    const counted = ([count, ttl]: HitReply) => {
      const resetMs = clock() + ttl;
      if (count > limit) rememberLimited(client, resetMs);
      // The first request of the batch is count - n + 1.
      const first = count - n + 1;
      finish((i) => ({ limit, remaining: Math.max(0, limit - first - i), resetMs, limited: first + i > limit }));
    };
    const failed = (err: unknown) => {
      couldNotCount(err);
      finish(() => undefined);
    };
    const key = keyPrefix + client;
    if (pipeline) pipeline.pmRateLimitHitBy(key, windowMs, n, (err, reply) => (err || !reply ? failed(err ?? new Error('no reply from the counter')) : counted(reply)));
    else scripted.pmRateLimitHitBy(key, windowMs, n).then(counted, failed);
  };

  const rememberLimited = (client: string, resetMs: number) => {
    limitedUntil.delete(client);
    limitedUntil.set(client, resetMs);
    // Oldest first out; an expired entry is dropped when next looked at.
    if (limitedUntil.size > MAX_LIMITED_CLIENTS) limitedUntil.delete(limitedUntil.keys().next().value as string);
  };

  const count = (client: string, done: Counted) => {
    // Over the limit until the window resets: answered here, without a Redis round trip. The count
    // in Redis is past the limit already, so every process refuses this client until then anyway.
    const until = limitedUntil.get(client);
    if (until !== undefined) {
      if (clock() < until) return done({ limit, remaining: 0, resetMs: until, limited: true });
      limitedUntil.delete(client);
    }
    const queue = waiting.get(client);
    if (queue) queue.push(done);
    else waiting.set(client, [done]);
    if (!flushScheduled && (inFlight.get(client) ?? 0) < MAX_IN_FLIGHT) {
      flushScheduled = true;
      // After the I/O callbacks of this turn: every request of the client parsed in it goes in one call.
      setImmediate(flush);
    }
  };

  return {
    count,
    hit: (client) => new Promise((resolve) => count(client, resolve)),
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
