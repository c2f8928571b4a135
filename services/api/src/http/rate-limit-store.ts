import type { Redis } from 'ioredis';
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import { isCluster } from '@pm/shared/redis';

/**
 * express-rate-limit's Store over Redis: every API process and replica counts in the same Redis key
 * per client, so the limit is exact across all of them (fixed windows of `windowMs` from a client's
 * first request; Redis' INCRBY and PTTL are the count and the reset).
 *
 * The increments of one event-loop turn go to Redis together: the turn's requests of one client are
 * ONE script call (INCRBY n), each request still getting its own place in the count in arrival order
 * (exactly what n calls would have said), and the calls of every client go in one pipeline written
 * at the end of the turn. Under load that is one Redis command per client per turn instead of one
 * per request; a request on its own waits one round trip, as with any Redis store.
 *
 * An increment that Redis does not answer within `timeoutMs` is rejected: express-rate-limit lets
 * the request through uncounted (`passOnStoreError`), and so does the front handler.
 */

/** KEYS[1] the client's counter; ARGV[1] the window in ms, ARGV[2] how many requests → {count after them, ms until the window resets}. */
const INCREMENT_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

type Reply = [count: number, ttl: number];
type ReplyTo = (err: Error | null | undefined, reply?: Reply) => void;

interface WithScript {
  pmRateLimitIncrement(key: string, windowMs: number, requests: number): Promise<Reply>;
}

/** The script as a pipeline command (ioredis adds defined commands to pipelines): the reply comes to the callback. */
interface PipelineWithScript {
  pmRateLimitIncrement(key: string, windowMs: number, requests: number, callback: ReplyTo): unknown;
  exec(): Promise<unknown>;
}

/**
 * Told one request's place in its client's count (`totalHits`) and when the window resets (Unix ms),
 * or why it could not be counted. A plain callback: the front handler's count of a cached read is
 * one call, without the promises and info objects of express-rate-limit's `increment`.
 */
export type Counted = (err: Error | undefined, totalHits: number, resetMs: number) => void;

export interface RedisStoreOptions {
  /** Prepended to every client key (the deployment's Redis prefix and what the keys are). */
  prefix: string;
  /** How long an increment may wait for Redis before the request goes through uncounted. */
  timeoutMs?: number;
  /** Unix ms; injectable for tests. */
  clock?: () => number;
}

export class RedisRateLimitStore implements Store {
  /** The counts live in Redis, shared by every process: express-rate-limit must not treat them as this process's. */
  readonly localKeys = false;
  readonly prefix: string;
  private windowMs = 60_000;
  private readonly timeoutMs: number;
  private readonly clock: () => number;
  private readonly pipelined: boolean;
  private pending = new Map<string, Counted[]>();
  private scheduled = false;

  constructor(
    private readonly redis: Redis,
    options: RedisStoreOptions,
  ) {
    this.prefix = options.prefix;
    this.timeoutMs = options.timeoutMs ?? 500;
    this.clock = options.clock ?? Date.now;
    // A Redis Cluster client auto-pipelines per node; one pipeline would have to hold one slot.
    this.pipelined = !isCluster(redis);
    if (!('pmRateLimitIncrement' in redis)) redis.defineCommand('pmRateLimitIncrement', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  }

  /** Called by express-rate-limit with its options; the front handler's store is given the same window (`rateLimiter`). */
  init(options: Pick<Options, 'windowMs'>): void {
    this.windowMs = options.windowMs;
  }

  increment(key: string): Promise<ClientRateLimitInfo> {
    return new Promise((resolve, reject) => {
      this.count(key, (err, totalHits, resetMs) => (err ? reject(err) : resolve({ totalHits, resetTime: new Date(resetMs) })));
    });
  }

  /** `increment` as a callback (the front handler's path). */
  count(key: string, done: Counted): void {
    const waiting = this.pending.get(key);
    if (waiting) waiting.push(done);
    else this.pending.set(key, [done]);
    if (!this.scheduled) {
      this.scheduled = true;
      // After the I/O callbacks of this turn: every request parsed in it goes in the same write.
      setImmediate(this.flush);
    }
  }

  async decrement(key: string): Promise<void> {
    await this.redis.decr(this.prefix + key);
  }

  async resetKey(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = new Map();
    // One client this turn (the usual case under load from one address, and every case behind a
    // proxy whose hops are not trusted): the one command goes as it is, without building a pipeline.
    const pipeline = this.pipelined && batch.size > 1 ? (this.redis.pipeline() as unknown as PipelineWithScript) : undefined;
    let open = batch.size;
    const timer = setTimeout(() => {
      const err = new Error(`rate-limit counter did not answer within ${this.timeoutMs} ms`);
      for (const waiters of batch.values()) for (const w of waiters) w(err, 0, 0);
      batch.clear();
    }, this.timeoutMs);
    for (const [key, waiters] of batch) {
      const replied: ReplyTo = (err, reply) => {
        // Answered after the timeout: those requests went through uncounted already.
        if (!batch.delete(key)) return;
        if (--open === 0) clearTimeout(timer);
        if (err || !reply) {
          const failure = err ?? new Error('no reply from the rate-limit counter');
          for (const w of waiters) w(failure, 0, 0);
          return;
        }
        const [count, ttl] = reply;
        const resetMs = this.clock() + ttl;
        // The first request of the batch holds place count - n + 1, the next one after it, and so on.
        const first = count - waiters.length + 1;
        for (let i = 0; i < waiters.length; i++) waiters[i]!(undefined, first + i, resetMs);
      };
      const n = waiters.length;
      if (pipeline) pipeline.pmRateLimitIncrement(this.prefix + key, this.windowMs, n, replied);
      else
        (this.redis as unknown as WithScript).pmRateLimitIncrement(this.prefix + key, this.windowMs, n).then(
          (reply) => replied(null, reply),
          (err: Error) => replied(err),
        );
    }
    // Each call's outcome comes to its own callback (a failed write too).
    pipeline?.exec().catch(() => {});
  };
}
