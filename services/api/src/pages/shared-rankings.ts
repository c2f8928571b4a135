import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Logger } from '@pm/shared/logger';
import { redisKeys } from '@pm/shared/redis';
import { withDeadline } from '@pm/shared/wait';

/** A computed board's ranking as an API process made it (board-cache.ts): its people in order, its instant, what it counted, when. */
export interface SharedRanking {
  ranked: readonly number[];
  asOf: Date;
  epoch: string;
  madeAt: number;
}

/**
 * Computed boards' latest rankings, shared between the API processes through Redis (`board-ranking`,
 * docs/redis-keys.md). Each process holds the rankings it uses; without this, each one ranked every
 * board again after every settlement (100–300 ms of Postgres on 50,000 people, once per process).
 * A process that needs a board looks here before it ranks: what it finds is checked as its own held
 * rankings are (board-cache.ts), so a ranking from here is never older than one made there. Redis
 * trouble only costs the sharing: a read gives nothing and a write is dropped, each within
 * REDIS_WAIT_MS, and the process ranks for itself.
 */
export interface SharedRankings {
  get(board: string): Promise<SharedRanking | null>;
  /** Kept for `ttlMs` (the rankings' age bound). */
  put(board: string, ranking: SharedRanking, ttlMs: number): Promise<void>;
}

/** How long a board request waits for Redis before it ranks the board itself. */
const REDIS_WAIT_MS = 250;

const stored = z.object({ asOf: z.number(), epoch: z.string(), madeAt: z.number(), ids: z.string() });

export function createSharedRankings(deps: { redis: Redis; prefix: string; logger: Logger }): SharedRankings {
  const keys = redisKeys(deps.prefix);
  let failing = false;
  const failed = (err: unknown) => {
    // Once per outage: every board request would say it again.
    if (!failing) deps.logger.warn({ err }, 'shared board rankings unavailable; each API process ranks for itself');
    failing = true;
  };
  return {
    async get(board) {
      try {
        const raw = await withDeadline(deps.redis.get(keys.boardRanking(board)), REDIS_WAIT_MS, 'shared board ranking');
        failing = false;
        if (raw === null) return null;
        const s = stored.parse(JSON.parse(raw));
        return { ranked: s.ids === '' ? [] : s.ids.split(',').map(Number), asOf: new Date(s.asOf), epoch: s.epoch, madeAt: s.madeAt };
      } catch (err) {
        failed(err);
        return null;
      }
    },
    async put(board, r, ttlMs) {
      const body = JSON.stringify({ asOf: r.asOf.getTime(), epoch: r.epoch, madeAt: r.madeAt, ids: r.ranked.join(',') });
      try {
        await withDeadline(deps.redis.set(keys.boardRanking(board), body, 'PX', Math.max(1, Math.round(ttlMs))), REDIS_WAIT_MS, 'shared board ranking');
      } catch (err) {
        failed(err);
      }
    },
  };
}
