import type { Redis } from 'ioredis';
import type { Logger } from '@pm/shared/logger';
import type { Clock } from './clock.js';
import { createCoalescedWrite } from './coalesced-write.js';

/**
 * Feed health in Redis (`keys.feed`), read by the API to say whether prices are `live`:
 * `<channel>_connected` "1"/"0" and `<channel>_last_at` (Unix ms of the last sign of life: a data
 * frame, or on the market channel also a PONG).
 *
 * The whole state is rewritten every `refreshMs` (1 s) from memory, not only when it changes: a
 * write lost to a Redis outage, or a Redis that came back empty (the run line's has no
 * persistence), is repaired within a second of Redis answering again, so `live` follows the feed's
 * real state within seconds of a recovery. One write is in flight at a time; writes are
 * coalesced to the latest state (coalesced-write.ts), so an outage never piles up stale writes.
 */
export interface FeedHealth {
  connected(up: boolean): void;
  data(): void;
  /** Write the latest state now and wait for it (shutdown, tests). */
  flush(): Promise<void>;
  /** Stop the periodic rewrite (after a last flush). */
  close(): Promise<void>;
}

export function createFeedHealth(opts: {
  redis: Redis;
  key: string;
  /** pub/sub channel told of every flip of the connected flag (`redisKeys(prefix).feedAnnounce`). */
  announce: string;
  channel: 'market' | 'sports';
  clock: Clock;
  logger: Logger;
  /** Rewrite the whole state this often; default 1 s. */
  refreshMs?: number;
  /** Least time between two writes caused by data alone; default 1 s. */
  lastAtEveryMs?: number;
}): FeedHealth {
  const refreshMs = opts.refreshMs ?? 1_000;
  const every = opts.lastAtEveryMs ?? 1_000;
  const connectedField = `${opts.channel}_connected`;
  const lastAtField = `${opts.channel}_last_at`;
  /** Unknown until the feed says: nothing is written for it before. */
  let up: boolean | null = null;
  let lastDataAt = 0;
  /** The `last_at` value of the last write begun. */
  let writtenDataAt = 0;
  /** The connected flag of the last write that reached Redis. */
  let writtenUp: boolean | null = null;
  let failing = false;

  function fields(): Record<string, string> {
    const out: Record<string, string> = {};
    if (up !== null) out[connectedField] = up ? '1' : '0';
    if (lastDataAt > 0) out[lastAtField] = String(lastDataAt);
    return out;
  }

  /** Write the current state (whatever it is when the write starts: writes coalesce to the latest). */
  async function write(): Promise<void> {
    const state = fields();
    if (Object.keys(state).length === 0) return;
    writtenDataAt = lastDataAt;
    const flag = up;
    const tx = opts.redis.multi().hset(opts.key, state);
    // A flip is announced with the write, so readers that cache the flag see it at once.
    if (flag !== writtenUp) tx.publish(opts.announce, opts.channel);
    const results = await tx.exec();
    const failed = results?.find(([err]) => err)?.[0];
    if (!results || failed) throw failed ?? new Error('feed health write aborted');
    writtenUp = flag;
    if (failing) opts.logger.info({ channel: opts.channel }, 'feed health written again');
    failing = false;
  }

  const writer = createCoalescedWrite({
    write,
    onError: (err) => {
      // Logged once per outage; retried at most `refreshMs` apart.
      if (!failing) opts.logger.warn({ err, channel: opts.channel }, 'writing feed health failed');
      failing = true;
    },
    maxRetryMs: refreshMs,
  });

  const timer = setInterval(() => writer.request(), refreshMs);
  timer.unref();

  return {
    connected(next) {
      up = next;
      writer.request();
    },
    data() {
      lastDataAt = opts.clock.now();
      if (lastDataAt - writtenDataAt >= every) writer.request();
    },
    async flush() {
      writer.request();
      await writer.flush();
    },
    async close() {
      clearInterval(timer);
      writer.request();
      await writer.flush();
      writer.close();
    },
  };
}
