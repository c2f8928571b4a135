import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '@pm/shared/logger';
import { redisKeys } from '@pm/shared/redis';

/**
 * The cap on open streams per client (STREAM_MAX_PER_IP), counted in Redis so that it holds across
 * every API process and replica, like the rate limit. Each open stream is a member of its client's
 * sorted set, scored with the time until which it counts; the hub's heartbeat extends the open ones
 * (refresh), a closed one is removed at once, and one whose process died stops counting once its
 * time runs out (three heartbeats). One script, one round trip, per stream opened. Redis away: the
 * stream is let through uncounted, as the rate limiter lets a request through (the read then fails on its own).
 */

/** KEYS[1] the client's set; ARGV now, until, max, member → 1 admitted, 0 refused. */
const ADMIT_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[2])
return 1
`;

interface WithAdmitScript {
  pmStreamAdmit(key: string, now: number, until: number, max: number, member: string): Promise<number>;
}

export interface OpenStreamSlot {
  key: string;
  member: string;
}

export interface OpenStreams {
  /** A slot for one more stream of `client`, or 'full' past the cap; undefined when Redis could not count (let through). */
  admit(client: string): Promise<OpenStreamSlot | 'full' | undefined>;
  release(slot: OpenStreamSlot): void;
  /** Extends every open slot (called with each heartbeat). */
  refresh(slots: Iterable<OpenStreamSlot>): void;
}

export function createOpenStreams(opts: { redis: Redis; prefix: string; max: number; holdMs: number; logger: Logger }): OpenStreams {
  const { redis, max, holdMs, logger } = opts;
  const keys = redisKeys(opts.prefix);
  if (!('pmStreamAdmit' in redis)) redis.defineCommand('pmStreamAdmit', { numberOfKeys: 1, lua: ADMIT_SCRIPT });
  const scripted = redis as unknown as WithAdmitScript;
  const warn = (err: unknown, what: string) => logger.warn({ err }, what);

  return {
    async admit(client) {
      const slot = { key: keys.streamClients(client), member: randomUUID() };
      const now = Date.now();
      try {
        return (await scripted.pmStreamAdmit(slot.key, now, now + holdMs, max, slot.member)) === 1 ? slot : 'full';
      } catch (err) {
        warn(err, 'open-stream count unavailable; stream let through uncounted');
        return undefined;
      }
    },
    release(slot) {
      redis.zrem(slot.key, slot.member).catch((err: unknown) => warn(err, 'releasing an open-stream slot failed; it lapses by itself'));
    },
    refresh(slots) {
      const until = Date.now() + holdMs;
      const pipe = redis.pipeline();
      let n = 0;
      for (const slot of slots) {
        pipe.zadd(slot.key, 'XX', until, slot.member);
        pipe.pexpireat(slot.key, until);
        n++;
      }
      if (n > 0) pipe.exec().catch((err: unknown) => warn(err, 'refreshing open-stream slots failed'));
    },
  };
}
