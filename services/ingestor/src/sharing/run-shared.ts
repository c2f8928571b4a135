import type { Redis } from 'ioredis';
import type { Logger } from '@pm/shared/logger';
import { redisKeys } from '@pm/shared/redis';
import type { Ingestor } from '../ingestor.js';
import type { WorkShare } from './work-share.js';

/**
 * What an ingestor does beside its feed when it shares the work (work-share.ts), all driven by the
 * leases: follow every change of its share (subscribe what it gained, drop what it lost); on the
 * leader, sync the catalog every `syncMs` (and at once on becoming leader); elsewhere, learn the
 * catalog the leader wrote to Postgres whenever the catalog version in Redis moves, and every
 * `syncMs` in any case.
 */

export interface SharedLoopOptions {
  ingestor: Ingestor;
  share: WorkShare;
  redis: Redis;
  prefix: string;
  syncMs: number;
  logger: Logger;
  /** How often a follower looks at the catalog version (2 s). */
  versionPollMs?: number;
}

export interface SharedLoop {
  /** Call from the share's onChange (after `ingestor.reassign()`). */
  changed(): void;
  stop(): Promise<void>;
}

export function startSharedLoop(opts: SharedLoopOptions): SharedLoop {
  const { ingestor, share } = opts;
  const versionKey = redisKeys(opts.prefix).catalogVersion;
  const pollMs = opts.versionPollMs ?? 2_000;
  let stopped = false;
  let wasLeader = share.isLeader();
  let lastSyncAt = Date.now();
  let seenVersion: string | null | undefined;
  let timer: NodeJS.Timeout | undefined;
  let busy: Promise<void> = Promise.resolve();

  async function round(): Promise<void> {
    const now = Date.now();
    const due = now - lastSyncAt >= opts.syncMs;
    if (share.isLeader()) {
      if (due || !wasLeader) {
        lastSyncAt = now;
        await ingestor.syncCatalog();
      }
    } else {
      const version = await opts.redis.get(versionKey);
      if (due || version !== seenVersion) {
        lastSyncAt = now;
        seenVersion = version;
        await ingestor.reloadOutcomes();
      }
    }
    wasLeader = share.isLeader();
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      busy = round()
        .catch((err: unknown) => opts.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'shared ingestor: catalog round failed; next round retries'))
        .finally(schedule);
    }, pollMs);
    timer.unref?.();
  }
  schedule();

  return {
    changed() {
      // A new leader syncs at its next round rather than waiting out the interval.
      if (share.isLeader() && !wasLeader) lastSyncAt = 0;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await busy;
    },
  };
}
