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
 * Places held ahead. A client whose counts follow each other within BUSY_MS (a script, a crawler, a
 * load test: requests faster than a round trip) is also given places ahead of its requests: the count
 * takes up to twice its requests since the previous count, at most a quarter of what is left of the limit, and this process
 * answers the next requests from those places at once, each with its own place, without waiting for
 * Redis; a new count goes out ahead when fewer than half are left. Places unused for IDLE_MS are given
 * back to their window (a script that checks the window's expiry), so another process can use them.
 * Counts that hold places are sent only when no other count of the client is on its way, and the
 * requests that queue meanwhile take the places first, so places still follow arrival order. Places
 * are held only while no other process counts the client (the script compares the counter with how
 * this process left it): a client spread over replicas is counted request by request, each answer
 * continuing the others' count, exactly as without places ahead. Under a
 * live 5,000-event stack every cached read of a busy client waited a rate-limit round trip, and Redis
 * answers late while the machine is busy: /markets served 0.28–0.69 of a bare server without places
 * ahead, 0.52–0.84 with them, in the same minutes (issue 18). A client making one request at a time
 * is never busy and is counted exactly as before.
 *
 * Redis' counter keeps the places handed out and never passes the limit: a refused request takes no
 * place. A client a count has refused is refused in this process without a round trip for
 * LIMITED_RECHECK_MS (or until its window resets, if sooner), then asked about again: places another
 * process held ahead and gave back are free for it. So across processes a client is let through
 * exactly `limit` times per window. What a busy client can see at the moment its requests start
 * going to a second process, while the first still holds places: answers from the two out of order,
 * and near its limit a 429 up to IDLE_MS before the first gives its places back, 200s after.

 * Fixed windows of `windowMs` starting at a client's first request, shared by every process because
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
  /** Clients this process keeps state for now (recently counted, or holding places). */
  tracked(): number;
}

export type Counted = (decision: RateLimitDecision | undefined) => void;

/**
 * KEYS[1] the client's counter; ARGV[1] the window in ms, ARGV[2] how many requests to count,
 * ARGV[3] how many places to hold ahead at most, ARGV[4] the limit, ARGV[5] the counter as this
 * process last left it →
 * {the requests' count (the last one's place), ms until the window resets, places held ahead, the
 * window's expiry, the counter now}. Places are held ahead only when no other process counted the
 * client since this one did (the counter is as it was left): a client whose requests go to several
 * processes is counted request by request, so each answer continues the others' count.
 * The counter keeps the places handed out, never past the limit: a refused request takes none, so
 * places held ahead and given back (below) are free again for any process. Places held ahead are
 * never past the limit either. The expiry (PEXPIRETIME, Redis' clock) names the window, so places
 * given back are taken off that window and no other.
 */
const COUNT_SCRIPT = `
local before = tonumber(redis.call('GET', KEYS[1]) or '0')
local n = tonumber(ARGV[2])
local limit = tonumber(ARGV[4])
local count = redis.call('INCRBY', KEYS[1], math.max(0, math.min(n, limit - before)))
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
local held = 0
local ahead = tonumber(ARGV[3])
if ahead > 0 and before == tonumber(ARGV[5]) then
  held = math.min(ahead, math.floor((limit - count) / 4))
  count = redis.call('INCRBY', KEYS[1], held)
end
return {before + n, ttl, held, redis.call('PEXPIRETIME', KEYS[1]), count}
`;

/** KEYS[1] the client's counter; ARGV[1] places to give back, ARGV[2] the window they were held in. */
const GIVE_BACK_SCRIPT = `
if redis.call('PEXPIRETIME', KEYS[1]) == tonumber(ARGV[2]) then
  return redis.call('DECRBY', KEYS[1], ARGV[1])
end
return false
`;

type CountReply = [count: number, ttl: number, held: number, expiresAt: number, counter: number];
type ReplyTo<T> = (err: Error | null | undefined, reply?: T) => void;

interface WithScripts {
  pmRateLimitCount(key: string, windowMs: number, requests: number, ahead: number, limit: number, expected: number): Promise<CountReply>;
  pmRateLimitGiveBack(key: string, places: number, expiresAt: number): Promise<unknown>;
}

/** The scripts as pipeline commands (ioredis adds defined commands to pipelines): the reply comes to the callback. */
interface PipelineWithScripts {
  pmRateLimitCount(key: string, windowMs: number, requests: number, ahead: number, limit: number, expected: number, callback: ReplyTo<CountReply>): unknown;
  exec(): Promise<unknown>;
}

/** Counts of one client on their way to Redis at once (see above). */
const MAX_IN_FLIGHT = 2;
/** A count sent this soon after the client's previous one asks for places ahead. */
const BUSY_MS = 50;
/** Places held ahead per count at most. */
const MAX_AHEAD = 1_000;
/** Places held this long without use are given back. */
const IDLE_MS = 100;

/** How long a client over the limit is refused without asking Redis again (at most until its window resets). */
const LIMITED_RECHECK_MS = 1_000;
/** Clients over the limit held in memory at most (oldest first out). */
const MAX_LIMITED_CLIENTS = 100_000;

/** Places of one client's window this process holds: [next, last] ranges, in order. */
interface Held {
  ranges: Array<[number, number]>;
  resetMs: number;
  /** The window's expiry in Redis' clock: names the window when places are given back. */
  expiresAt: number;
  /** Places the last count held: a new count is sent ahead when fewer than half of them are left. */
  size: number;
  usedAt: number;
}

interface ClientState {
  /** Requests waiting for a count, in arrival order. */
  waiting: Counted[];
  /** Counts on their way to Redis (at most MAX_IN_FLIGHT). */
  inFlight: number;
  /** A count that holds places ahead is on its way: later requests wait for those places. */
  holding: boolean;
  held: Held | undefined;
  lastSentAt: number;
  /** Requests since the last count was sent: how many places the next one holds ahead. */
  sinceSent: number;
  /** The counter as this process last left it (-1: unknown): another process counted when it differs. */
  counter: number;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { redis, limit, logger } = options;
  const windowMs = options.windowMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 500;
  const clock = options.clock ?? Date.now;
  const keyPrefix = redisKeys(options.prefix).rateLimitPrefix;
  if (!('pmRateLimitCount' in redis)) {
    redis.defineCommand('pmRateLimitCount', { numberOfKeys: 1, lua: COUNT_SCRIPT });
    redis.defineCommand('pmRateLimitGiveBack', { numberOfKeys: 1, lua: GIVE_BACK_SCRIPT });
  }
  const scripted = redis as unknown as WithScripts;
  const pipelined = !isCluster(redis);
  let lastWarnAt = 0;
  const clients = new Map<string, ClientState>();
  /** Clients with requests waiting, or a count ahead due, to send at the end of this turn. */
  const due = new Set<string>();
  let flushScheduled = false;
  /** Clients a count put over the limit: refused here until `recheckAt`, with their window's reset. */
  const limitedUntil = new Map<string, { recheckAt: number; resetMs: number }>();
  let sweep: NodeJS.Timeout | undefined;

  const couldNotCount = (err: unknown) => {
    // Once a second at most: with Redis away every request lands here.
    if (clock() - lastWarnAt > 1_000) {
      lastWarnAt = clock();
      logger.warn({ err }, 'rate limiter could not count; request let through uncounted');
    }
  };

  const tell = (done: Counted, decision: RateLimitDecision | undefined) => {
    try {
      done(decision);
    } catch (err) {
      // One request's failure must not keep the others of the batch from their answer.
      logger.error({ err }, 'rate-limit decision handler failed');
    }
  };

  const stateOf = (client: string): ClientState => {
    let state = clients.get(client);
    if (state === undefined) {
      state = { waiting: [], inFlight: 0, holding: false, held: undefined, lastSentAt: -Infinity, sinceSent: 0, counter: -1 };
      clients.set(client, state);
      // The sweep gives back idle places and forgets idle clients; it stops when none is left.
      if (sweep === undefined) {
        sweep = setInterval(giveBackIdle, IDLE_MS);
        sweep.unref();
      }
    }
    return state;
  };

  const canSend = (state: ClientState) => !state.holding && state.inFlight < MAX_IN_FLIGHT;

  /** The next place this process holds for the client, if any (a request answered without a round trip). */
  const takePlace = (state: ClientState): RateLimitDecision | undefined => {
    const held = state.held;
    if (held === undefined) return undefined;
    const now = clock();
    if (now >= held.resetMs) {
      // The window is over: its places expired with it in Redis.
      state.held = undefined;
      return undefined;
    }
    const range = held.ranges[0];
    if (range === undefined) return undefined;
    const place = range[0]++;
    if (range[0] > range[1]) held.ranges.shift();
    held.usedAt = now;
    return { limit, remaining: limit - place, resetMs: held.resetMs, limited: false };
  };

  const placesLeft = (held: Held) => held.ranges.reduce((sum, [next, last]) => sum + last - next + 1, 0);

  /** A count ahead is due: fewer than half of the held places are left, and no count of the client is on its way. */
  const aheadDue = (state: ClientState) =>
    state.held !== undefined && state.inFlight === 0 && !state.holding && placesLeft(state.held) * 2 < state.held.size;

  const schedule = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    // After the I/O callbacks of this turn: every request of the client parsed in it goes in one call.
    setImmediate(flush);
  };

  /** Sends now, in one write, a count for each of `names` that has requests waiting (or places ahead due) and room in flight. */
  const sendNow = (names: Iterable<string>) => {
    const pipeline = pipelined ? (redis.pipeline() as unknown as PipelineWithScripts) : undefined;
    for (const client of names) {
      const state = clients.get(client);
      due.delete(client);
      if (state === undefined || !canSend(state)) continue;
      if (state.waiting.length === 0 && !aheadDue(state)) continue;
      const waiters = state.waiting;
      state.waiting = [];
      send(client, state, waiters, pipeline);
    }
    // Each call's outcome comes to its own callback (a failed write too); the pipeline's own is not needed.
    pipeline?.exec().catch(() => {});
  };

  const flush = () => {
    flushScheduled = false;
    sendNow([...due]);
  };

  /**
   * One script call for `waiters`, the requests of `client` in arrival order: each gets its own place
   * in the count. A client busy enough that its counts follow each other within BUSY_MS also has places
   * held ahead, as many as twice its requests since the previous count, sent only when no other
   * count of it is on its way (so places are handed out in arrival order).
   */
  const send = (client: string, state: ClientState, waiters: Counted[], pipeline: PipelineWithScripts | undefined) => {
    const n = waiters.length;
    const now = clock();
    // A count with no requests is one sent ahead, while held places run low: busy by definition.
    const busy = n === 0 || now - state.lastSentAt <= BUSY_MS;
    const ahead = state.inFlight === 0 && busy ? Math.min(MAX_AHEAD, 2 * Math.max(state.sinceSent, 1)) : 0;
    state.lastSentAt = now;
    state.sinceSent = 0;
    state.inFlight++;
    if (ahead > 0) state.holding = true;
    let done = false;
    const finish = (decide: (i: number) => RateLimitDecision | undefined, reply?: CountReply) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      state.inFlight--;
      if (ahead > 0) state.holding = false;
      if (reply !== undefined) {
        // The counter as this count left it. Replies come in the order the counts were sent, so once
        // none is on its way (the only time places are asked for) this is how the last one left it.
        state.counter = reply[4];
        if (reply[2] > 0) hold(state, reply);
      }
      // Requests that queued behind this count take the places it held, in arrival order.
      const served: Array<[Counted, RateLimitDecision]> = [];
      while (state.waiting.length > 0) {
        const decision = takePlace(state);
        if (decision === undefined) break;
        served.push([state.waiting.shift()!, decision]);
      }
      // The requests still waiting go out before this batch's are answered: Redis works meanwhile.
      if (state.waiting.length > 0) sendNow([client]);
      for (let i = 0; i < n; i++) tell(waiters[i]!, decide(i));
      for (const [waiter, decision] of served) tell(waiter, decision);
    };
    const timer = setTimeout(() => {
      couldNotCount(new Error(`rate-limit counter timed out after ${timeoutMs} ms`));
      finish(() => undefined);
    }, timeoutMs);
    const counted = (reply: CountReply) => {
      const [count, ttl] = reply;
      const resetMs = clock() + ttl;
      if (count > limit) rememberLimited(client, resetMs);
      // The first request of the batch is count - n + 1.
      const first = count - n + 1;
      finish((i) => ({ limit, remaining: Math.max(0, limit - first - i), resetMs, limited: first + i > limit }), reply);
    };
    const failed = (err: unknown) => {
      couldNotCount(err);
      finish(() => undefined);
    };
    const key = keyPrefix + client;
    const replied: ReplyTo<CountReply> = (err, reply) => (err || !reply ? failed(err ?? new Error('no reply from the counter')) : counted(reply));
    const expected = state.counter;
    if (pipeline) pipeline.pmRateLimitCount(key, windowMs, n, ahead, limit, expected, replied);
    else scripted.pmRateLimitCount(key, windowMs, n, ahead, limit, expected).then((reply) => replied(null, reply), failed);
  };

  /** Keeps the places a count held ahead (after any still held of the same window). */
  const hold = (state: ClientState, [count, ttl, places, expiresAt]: CountReply) => {
    const now = clock();
    const range: [number, number] = [count + 1, count + places];
    if (state.held !== undefined && state.held.expiresAt === expiresAt) {
      state.held.ranges.push(range);
      state.held.size = places;
      state.held.usedAt = now;
    } else {
      state.held = { ranges: [range], resetMs: now + ttl, expiresAt, size: places, usedAt: now };
    }
  };

  /**
   * Places unused for IDLE_MS go back to Redis (to their window only), so another process or a later
   * request can have them; clients with nothing held, waiting or sent for IDLE_MS are forgotten.
   */
  const giveBackIdle = () => {
    const now = clock();
    for (const [client, state] of clients) {
      const held = state.held;
      if (held !== undefined && (now >= held.resetMs || now - held.usedAt > IDLE_MS)) {
        state.held = undefined;
        const left = placesLeft(held);
        if (now < held.resetMs && left > 0) {
          scripted.pmRateLimitGiveBack(keyPrefix + client, left, held.expiresAt).catch(couldNotCount);
          if (state.counter >= 0) state.counter -= left;
        }
      }
      if (state.held === undefined && state.inFlight === 0 && state.waiting.length === 0 && now - state.lastSentAt > IDLE_MS) clients.delete(client);
    }
    if (clients.size === 0) {
      clearInterval(sweep);
      sweep = undefined;
    }
  };

  const rememberLimited = (client: string, resetMs: number) => {
    limitedUntil.delete(client);
    // Not past LIMITED_RECHECK_MS: places another process held and gives back are free again.
    limitedUntil.set(client, { recheckAt: Math.min(resetMs, clock() + LIMITED_RECHECK_MS), resetMs });
    // Oldest first out; an expired entry is dropped when next looked at.
    if (limitedUntil.size > MAX_LIMITED_CLIENTS) limitedUntil.delete(limitedUntil.keys().next().value as string);
  };

  const count = (client: string, done: Counted) => {
    const state = clients.get(client);
    // A place this process holds (always within the limit) first: it was counted already.
    if (state !== undefined && state.waiting.length === 0) {
      const place = takePlace(state);
      if (place !== undefined) {
        state.sinceSent++;
        if (aheadDue(state)) {
          due.add(client);
          schedule();
        }
        return done(place);
      }
    }
    // Refused by a count less than LIMITED_RECHECK_MS ago: refused here again, without a round trip
    // (Redis would refuse it too, unless another process has given places back since).
    const until = limitedUntil.get(client);
    if (until !== undefined) {
      if (clock() < until.recheckAt) return done({ limit, remaining: 0, resetMs: until.resetMs, limited: true });
      limitedUntil.delete(client);
    }
    const counted = state ?? stateOf(client);
    counted.sinceSent++;
    counted.waiting.push(done);
    if (canSend(counted)) {
      due.add(client);
      schedule();
    }
  };

  return {
    count,
    hit: (client) => new Promise((resolve) => count(client, resolve)),
    tracked: () => clients.size,
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
