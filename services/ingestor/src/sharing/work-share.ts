import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from '@pm/shared/logger';
import { redisKeys } from '@pm/shared/redis';
import { createLeases } from './lease.js';

/**
 * Several ingestors splitting the market feed (docs/design.md "Scale beyond one machine"): the markets
 * are hashed into `partitions` buckets, each bucket is a lease in Redis (lease.ts), and each ingestor
 * holds about its share of them — ceil(partitions / live ingestors). An ingestor subscribes only the
 * tokens of markets in its buckets, so every token has one owner. One more lease, `leader`, picks the
 * ingestor that syncs the catalog (and with it records the resolutions the catalog shows).
 *
 * Every `tickMs` (a quarter of the lease) an ingestor: says it is alive (the `ingestors` hash), renews
 * what it holds, lets go of buckets beyond its share (a newcomer then finds them free), takes free
 * ones up to its share, and tries the leader lease. When an ingestor dies, its leases expire after
 * `ttlMs` and the others take them at their next tick: within ttl + tick (12.5 s by default).
 *
 * An owner that cannot renew (Redis away, the process stalled) stops serving what it held once the
 * lease may have expired (`ttlMs - tickMs` after the last renewal began), before anyone else can
 * have taken it; one that lets go stops serving first and frees the lease after. So no bucket is
 * served by two ingestors for longer than the time a lease needs to expire.
 */

export interface WorkShareState {
  partitions: ReadonlySet<number>;
  leader: boolean;
}

export interface WorkShareOptions {
  redis: Redis;
  prefix: string;
  /** This ingestor's id: stable across restarts on one host (`<host>:<ops port>`), so a restarted one takes its own leases back at once. */
  owner: string;
  logger: Logger;
  partitions?: number;
  ttlMs?: number;
  tickMs?: number;
  /** Called when what this ingestor serves changed (after a tick, or when its leases ran out unrenewed). */
  onChange?: (state: WorkShareState) => void | Promise<void>;
  clock?: () => number;
}

export interface WorkShare {
  /** Takes the first share (waits for one tick), then keeps ticking. */
  start(): Promise<void>;
  ownsMarket(marketId: string): boolean;
  isLeader(): boolean;
  state(): WorkShareState;
  /** Stops ticking, stops serving and frees every lease held (the others take them at their next tick). */
  stop(): Promise<void>;
}

export const DEFAULT_PARTITIONS = 64;
export const DEFAULT_LEASE_MS = 10_000;

/** The bucket of a market: FNV-1a of its id, so every ingestor (any language) computes the same. */
export function partitionOf(marketId: string, partitions: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < marketId.length; i++) {
    h ^= marketId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % partitions;
}

export function defaultOwnerId(opsPort: number): string {
  return `${hostname()}:${opsPort}`;
}

interface Member {
  at: number;
  partitions: number[];
  leader: boolean;
}

export function createWorkShare(opts: WorkShareOptions): WorkShare {
  const total = opts.partitions ?? DEFAULT_PARTITIONS;
  const ttlMs = opts.ttlMs ?? DEFAULT_LEASE_MS;
  const tickMs = opts.tickMs ?? Math.floor(ttlMs / 4);
  const clock = opts.clock ?? Date.now;
  const keys = redisKeys(opts.prefix);
  const leases = createLeases(opts.redis, opts.owner, ttlMs);
  const partKey = (n: number) => keys.ingestorLease(`part:${n}`);
  const leaderKey = keys.ingestorLease('leader');
  const log = opts.logger.child({ part: 'work-share', owner: opts.owner });

  let held = new Set<number>();
  let leader = false;
  /** Until when what is held may be served: the lease may have expired after that. */
  let validUntil = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  async function publish(next: Set<number>, nextLeader: boolean): Promise<void> {
    const changed = nextLeader !== leader || next.size !== held.size || [...next].some((n) => !held.has(n));
    held = next;
    leader = nextLeader;
    if (!changed) return;
    log.info({ partitions: held.size, leader }, 'work share changed');
    await opts.onChange?.({ partitions: held, leader });
  }

  async function liveMembers(now: number): Promise<number> {
    const me: Member = { at: now, partitions: [...held].sort((a, b) => a - b), leader };
    const [, all] = (await opts.redis.multi().hset(keys.ingestors, opts.owner, JSON.stringify(me)).hgetall(keys.ingestors).exec()) ?? [];
    const members = (all?.[1] ?? {}) as Record<string, string>;
    let live = 0;
    const gone: string[] = [];
    for (const [id, text] of Object.entries(members)) {
      let at = 0;
      try {
        at = (JSON.parse(text) as Member).at;
      } catch {
        /* unreadable: treated as gone */
      }
      if (id === opts.owner || now - at < ttlMs) live++;
      else if (now - at > 6 * ttlMs) gone.push(id);
    }
    if (gone.length > 0) await opts.redis.hdel(keys.ingestors, ...gone);
    return Math.max(live, 1);
  }

  async function tick(): Promise<void> {
    const began = clock();
    try {
      const share = Math.ceil(total / (await liveMembers(began)));
      // Keep what is still ours.
      const renewed = await leases.renew([...held].map(partKey));
      let next = new Set([...held].filter((n) => renewed.has(partKey(n))));
      // Beyond our share: stop serving, then free them (a newcomer takes them at its next tick).
      if (next.size > share) {
        const extra = [...next].sort((a, b) => b - a).slice(0, next.size - share);
        next = new Set([...next].filter((n) => !extra.includes(n)));
        await publish(next, leader);
        await leases.release(extra.map(partKey));
      } else if (next.size < share) {
        // Free buckets, from a random place so that ingestors starting together do not collide.
        const start = Math.floor(Math.random() * total);
        const wanted: number[] = [];
        for (let i = 0; i < total; i++) {
          const n = (start + i) % total;
          if (!next.has(n)) wanted.push(n);
        }
        const taken = await leases.take(wanted.map(partKey));
        for (const n of wanted) {
          if (next.size >= share) break;
          if (taken.has(partKey(n))) next.add(n);
        }
        // Taken beyond the share (several were free at once): give those back now.
        const over = wanted.filter((n) => taken.has(partKey(n)) && !next.has(n));
        await leases.release(over.map(partKey));
      }
      const isLeader = (await leases.take([leaderKey])).has(leaderKey);
      validUntil = began + ttlMs - tickMs;
      await publish(next, isLeader);
    } catch (err) {
      // What is held stays served until `validUntil` (the watchdog); the next tick tries again.
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'work share: lease round failed');
    }
  }

  /**
   * Independent of the ticks, which wait as long as Redis does: once the leases may have expired,
   * stop serving them, even while a renewal is still on its way.
   */
  const watchdog = setInterval(() => {
    if (!stopped && clock() >= validUntil && (held.size > 0 || leader)) {
      log.warn('work share: leases not renewed in time; serving nothing until they are');
      void publish(new Set(), false);
    }
  }, Math.max(100, Math.floor(tickMs / 2)));
  watchdog.unref?.();

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = running.then(tick).finally(schedule);
    }, tickMs);
    timer.unref?.();
  }

  return {
    async start() {
      running = tick();
      await running;
      schedule();
    },
    ownsMarket: (marketId) => held.has(partitionOf(marketId, total)),
    isLeader: () => leader,
    state: () => ({ partitions: held, leader }),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      clearInterval(watchdog);
      await running.catch(() => {});
      const mine = [...held].map(partKey);
      const wasLeader = leader;
      await publish(new Set(), false);
      await leases.release(wasLeader ? [...mine, leaderKey] : mine).catch(() => {});
      await opts.redis.hdel(keys.ingestors, opts.owner).catch(() => {});
    },
  };
}
