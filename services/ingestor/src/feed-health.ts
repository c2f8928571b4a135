import type { Redis } from 'ioredis';
import type { Logger } from '@pm/shared';
import type { Clock } from './clock.js';

/**
 * Feed health in Redis (`keys.feed`), read by the API to say whether prices are `live`:
 * `<channel>_connected` "1"/"0" written when it flips, `<channel>_last_at` (Unix ms of the last
 * data frame) written at most once per second.
 */
export interface FeedHealth {
  connected(up: boolean): void;
  data(): void;
  /** Write the latest state now (shutdown). */
  flush(): Promise<void>;
}

export function createFeedHealth(opts: {
  redis: Redis;
  key: string;
  channel: 'market' | 'sports';
  clock: Clock;
  logger: Logger;
  lastAtEveryMs?: number;
}): FeedHealth {
  const every = opts.lastAtEveryMs ?? 1_000;
  const connectedField = `${opts.channel}_connected`;
  const lastAtField = `${opts.channel}_last_at`;
  let lastWrittenAt = 0;
  let lastDataAt = 0;
  let writes: Promise<unknown> = Promise.resolve();

  function write(fields: Record<string, string>) {
    writes = writes
      .then(() => opts.redis.hset(opts.key, fields))
      .catch((err: unknown) => opts.logger.warn({ err, channel: opts.channel }, 'writing feed health failed'));
  }

  return {
    connected(up) {
      write({ [connectedField]: up ? '1' : '0' });
    },
    data() {
      const now = opts.clock.now();
      lastDataAt = now;
      if (now - lastWrittenAt < every) return;
      lastWrittenAt = now;
      write({ [lastAtField]: String(now) });
    },
    async flush() {
      if (lastDataAt > lastWrittenAt) {
        lastWrittenAt = lastDataAt;
        write({ [lastAtField]: String(lastDataAt) });
      }
      await writes;
    },
  };
}
