import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { z } from 'zod';
import { duplicateRedis, FEED_FRESH_MS, redisKeys, snapshotAnnouncementSchema, snapshotEtag, type SnapshotName } from '@pm/shared/redis';
import type { Logger } from '@pm/shared/logger';
import { ApiError } from '../http/errors.js';
import type { SnapshotOverlay } from './live-prices.js';

/** A snapshot whose body is not JSON or not of its schema: what wrote it has a bug. */
class SnapshotInvalid extends Error {}

/**
 * The worker's snapshots (shared/src/snapshots.ts), held in this process (docs/design.md "The read path").
 *
 * A snapshot read once is kept, parsed and validated, until the worker announces another version of
 * it on `snapshotAnnounce` (shared/src/redis/snapshot-announce.ts): a read then costs no Redis round trip.
 * What is held is trusted only while the subscription is up: until it is (start, or after Redis went
 * away and came back, when announcements may have been missed) every read goes to Redis and nothing
 * is kept; once (re)subscribed the store starts empty. What was held when the subscription dropped is
 * kept aside for `staleMs`, and served only when Redis cannot answer for that snapshot (a node
 * failing over, a restart): seconds-old data rather than a 503 while the store cannot know better.
 * So is a version that fails its schema (a bug in what wrote it): the error is logged, and the version
 * before it is served for `staleMs` rather than a 500 on every read of it. A periodic check of the held versions is the
 * safety net behind that. Absent snapshots are held too (version null), so "no such event" is
 * answered from memory and a new one is noticed by its announcement.
 *
 * With an `overlay` (live-prices.ts), what is held and served is the snapshot with the live prices laid
 * over it, versioned by the ETag of that body (the one the worker will write once it builds it): a
 * price that moved makes a new version at once, and the worker's build of the same body is
 * recognised as the version already held.
 *
 * `live` (docs/design.md: the order-book feed is connected and its last message is under 30 s old) comes
 * from the feed-health hash, re-read every `feedRefreshMs` rather than per request.
 */

export interface HeldSnapshot<T> {
  data: T;
  etag: string;
}

export interface SnapshotStore {
  /** The snapshot, or null when the worker has not written it. Redis trouble is a 503 ApiError. */
  read<T>(name: SnapshotName, schema: z.ZodType<T>): Promise<HeldSnapshot<T> | null>;
  /**
   * The version held now: its etag, null when held as absent, undefined when not held (or not
   * trusted). A ready response built from a version stays valid while this returns the same.
   */
  version(name: SnapshotName): string | null | undefined;
  /** Whether prices count as live now. */
  live(): boolean;
  /** Subscribe and start the feed and safety-net timers; does not wait for Redis. */
  start(): void;
  stop(): Promise<void>;
  /** Resolves when the subscription is first up (the store then holds what it reads). */
  subscribed(): Promise<void>;
  /** Resolves once every announcement published before the call has been applied and `live` re-read (tests). */
  sync(): Promise<void>;
}

export interface SnapshotStoreOptions {
  redis: Redis;
  prefix: string;
  clock: () => number;
  logger: Logger;
  /** Snapshots held (least recently read are dropped first). */
  maxEntries?: number;
  /**
   * And at most this many bytes of them, counted as their JSON text (the parsed data takes a few
   * times that). Entries alone did not bound memory: 2,000 snapshots of a busy day's histories,
   * lists and events filled the heap for an hour before the oldest went.
   */
  maxBytes?: number;
  /** A Redis round trip longer than this is treated as Redis being unavailable. */
  timeoutMs?: number;
  feedRefreshMs?: number;
  /** Period of the check of every held version against Redis. */
  verifyMs?: number;
  /** Live values laid over held snapshots (live-prices.ts). */
  overlay?: SnapshotOverlay;
  /** How long a snapshot held when the subscription dropped may be served while Redis cannot be read. */
  staleMs?: number;
  /**
   * The snapshot a snapshot's readers read next (a market list's ranking version, for its cursor): a
   * version becomes current only once that one has been read too, so that a failover starting between
   * the two reads leaves the previous, complete pair in use rather than a list whose ranking cannot be read.
   */
  companion?: (name: SnapshotName, data: unknown) => { name: SnapshotName; schema: z.ZodType<unknown> } | undefined;
}

interface Held {
  /** The version served: the snapshot's own etag, or the overlaid body's. */
  etag: string | null;
  data: unknown;
  /** The snapshot as the worker wrote it, when the overlay changed it (else `etag`/`data` are it). */
  base?: { etag: string; data: unknown };
  /** Kept to re-read the next version as soon as it is announced. */
  schema: z.ZodType<unknown>;
  /** Read by a request since it was loaded: only then is its next version re-read as soon as announced. */
  used: boolean;
  /** What it is counted as against `maxBytes`: its JSON text's length (a fixed few for an absent one). */
  bytes: number;
}

/** What an absent snapshot (held as version null) is counted as. */
const ABSENT_BYTES = 64;

const UNAVAILABLE = 'records are unavailable right now; please try again shortly';

/** What the store holds of a snapshot as the worker wrote it: the overlay laid over it, when one applies. */
function overlaid(overlay: SnapshotOverlay | undefined, name: SnapshotName, etag: string, data: unknown): Pick<Held, 'etag' | 'data' | 'base'> {
  const shown = overlay === undefined ? data : overlay.apply(name, data);
  if (shown === data) return { etag, data };
  return { etag: snapshotEtag(JSON.stringify(shown)), data: shown, base: { etag, data } };
}

export function createSnapshotStore(options: SnapshotStoreOptions): SnapshotStore {
  const { redis, clock, logger } = options;
  const keys = redisKeys(options.prefix);
  const maxEntries = options.maxEntries ?? 2000;
  const maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  const timeoutMs = options.timeoutMs ?? 1000;
  // Least recently read first out. `get` is a read (it moves the entry up); everything else `peek`s.
  const held = new LRUCache<SnapshotName, Held>({ max: maxEntries, maxSize: maxBytes, sizeCalculation: (e) => e.bytes });
  const staleMs = options.staleMs ?? 60_000;
  /**
   * What was held when trust was lost, with when: served only while Redis fails to read that name,
   * dropped once it is read again (or too old). A failover of the node holding the snapshots lasts
   * seconds, during which the subscription may be back already (on another node) while the reads
   * still fail: so this is not emptied on resubscribing.
   */
  const stale = new LRUCache<SnapshotName, { entry: Held; since: number; logged?: boolean }>({ max: maxEntries, maxSize: maxBytes, sizeCalculation: (s) => s.entry.bytes });
  const inFlight = new Map<SnapshotName, Promise<Held>>();
  /** Names announced while their load was in flight: that load may have read the previous version. */
  const announcedInFlight = new Set<SnapshotName>();
  // Bumped whenever what is held stops being trusted, so a load begun before cannot store its result.
  let epoch = 0;
  let trusted = false;
  let feed = { connected: false, lastAtMs: Number.NaN };
  let stopped = false;
  const timers: NodeJS.Timeout[] = [];
  let firstSubscribed: () => void = () => {};
  const subscribed = new Promise<void>((resolve) => (firstSubscribed = resolve));

  const subscriber = duplicateRedis(redis, { autoResubscribe: false, enableOfflineQueue: true, maxRetriesPerRequest: null });

  function distrust(): void {
    if (trusted && !stopped) logger.warn('snapshot announcements interrupted: reading snapshots from Redis until resubscribed');
    trusted = false;
    epoch++;
    setAside();
  }

  /** Everything held moves to `stale`: no longer served as current, still served while reads fail. */
  function setAside(): void {
    for (const [name, entry] of [...held.entries()]) setAsideOne(name, entry);
  }

  /** One held snapshot moves to `stale` (an absent one is dropped: there is nothing to fall back on). */
  function setAsideOne(name: SnapshotName, entry: Held): void {
    held.delete(name);
    if (entry.etag === null) return;
    stale.set(name, { entry, since: clock() });
  }

  subscriber.on('error', (err) => logger.debug({ err }, 'snapshot subscriber error'));
  subscriber.on('close', distrust);
  subscriber.on('ready', () => {
    if (stopped) return;
    subscriber.subscribe(keys.snapshotAnnounce, keys.feedAnnounce).then(
      () => {
        // Anything may have changed while we were not listening: start empty. (A cluster client is
        // ready again after a failover without having closed: what it held is set aside here too.)
        epoch++;
        setAside();
        trusted = true;
        firstSubscribed();
      },
      (err: unknown) => logger.warn({ err }, 'snapshot subscribe failed'),
    );
  });
  subscriber.on('message', (channel: string, message: string) => {
    // A feed's connected flag flipped (services/ingestor/src/common/feed-health.ts): re-read `live` now.
    if (channel === keys.feedAnnounce) {
      refreshFeed().catch(() => {});
      return;
    }
    let batch: Array<{ name: string; etag: string }>;
    try {
      batch = snapshotAnnouncementSchema.parse(JSON.parse(message));
    } catch (err) {
      logger.warn({ err, message: message.slice(0, 500) }, 'malformed snapshot announcement ignored');
      return;
    }
    for (const announced of batch) {
      const name = announced.name as SnapshotName;
      if (inFlight.has(name)) {
        announcedInFlight.add(name);
        continue;
      }
      // A held snapshot that requests read is re-read at once, and the version held until then keeps
      // being served (and its ready responses with it): a request never waits for the swap. One that
      // nobody read since it was loaded is dropped instead and read again on demand: with 5,000 open
      // events the search list is 5 MB that every price change rewrites, and re-parsing it on each
      // announcement for a query that comes once a minute cost more memory and CPU than serving.
      const entry = held.peek(name);
      // The worker built the very body the overlay shows: it is now the snapshot, nothing to re-read.
      if (entry?.base !== undefined && entry.etag === announced.etag) entry.base = undefined;
      if (entry && entry.etag !== announced.etag && entry.base?.etag !== announced.etag) {
        if (!entry.used) {
          // Still the last version this process could serve if Redis stops answering before the next read.
          setAsideOne(name, entry);
          continue;
        }
        fetchOnce(name, entry.schema).catch((err: unknown) => {
          // The new version cannot be read (its node failing over): the one held is what there is.
          // It is set aside like everything held when trust is lost, served only while reads fail.
          if (held.peek(name) === entry) setAsideOne(name, entry);
          logger.warn({ err, snapshot: name }, 'announced snapshot could not be read; the held version is served only while Redis cannot be read');
        });
      }
    }
  });

  // A live price arrived or expired: the held snapshots it concerns show it (a new version) at once.
  options.overlay?.watch((names) => {
    for (const name of names) {
      const entry = held.peek(name);
      if (entry === undefined || entry.etag === null) continue;
      const base = entry.base ?? { etag: entry.etag, data: entry.data };
      const shown = overlaid(options.overlay, name, base.etag, base.data);
      entry.etag = shown.etag;
      entry.data = shown.data;
      entry.base = shown.base;
    }
  });

  /** One load per name at a time: concurrent readers (and an announcement) share it. */
  function fetchOnce(name: SnapshotName, schema: z.ZodType<unknown>): Promise<Held> {
    let flight = inFlight.get(name);
    if (!flight) {
      flight = load(name, schema).finally(() => inFlight.delete(name));
      inFlight.set(name, flight);
    }
    return flight;
  }

  /** Any Redis failure or slowness is the caller's 503, never a 500 and never a hang. */
  async function redisCall<T>(what: string, run: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        run(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`redis ${what} timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      logger.warn({ err, what }, 'redis unavailable');
      throw new ApiError('unavailable', UNAVAILABLE, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  function hold(name: SnapshotName, entry: Held): void {
    held.set(name, entry);
  }

  async function load(name: SnapshotName, schema: z.ZodType<unknown>): Promise<Held> {
    const startedEpoch = epoch;
    const [body, etag] = await redisCall(`snapshot ${name}`, () => redis.hmget(keys.snapshot(name), 'body', 'etag'));
    let entry: Held = { etag: null, data: null, schema, used: false, bytes: ABSENT_BYTES };
    if (body != null && etag != null) {
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch (err) {
        throw new SnapshotInvalid(`snapshot ${name} (etag ${etag}) is not valid JSON`, { cause: err });
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) throw new SnapshotInvalid(`snapshot ${name} (etag ${etag}) does not match its schema: ${parsed.error.message}`);
      entry = { ...overlaid(options.overlay, name, etag, parsed.data), schema, used: false, bytes: body.length + ABSENT_BYTES };
      const companion = options.companion?.(name, parsed.data);
      // Its failure is this load's: the version held before stays in use (or set aside).
      if (companion !== undefined && !(trusted && held.has(companion.name))) await fetchOnce(companion.name, companion.schema);
    }
    // Announced again while this read was on its way: what it read may already be old.
    const announcedMeanwhile = announcedInFlight.delete(name);
    if (trusted && epoch === startedEpoch && !announcedMeanwhile) {
      stale.delete(name);
      hold(name, entry);
    } else {
      // Not trusted as current, yet the newest this process has read: it replaces what was set aside,
      // so a failover whose reads come and go falls back on it rather than on nothing (a 503).
      // (An absent one leaves nothing to fall back on.)
      stale.delete(name);
      setAsideOne(name, entry);
    }
    return entry;
  }

  async function refreshFeed(): Promise<void> {
    const [connected, lastAt] = await redisCall('feed health', () => redis.hmget(keys.feed, 'market_connected', 'market_last_at'));
    feed = { connected: connected === '1', lastAtMs: Number(lastAt) };
  }

  /** The safety net: a version changed in Redis that no announcement told us about is dropped. */
  async function verifyHeld(): Promise<void> {
    if (!trusted || held.size === 0) return;
    const startedEpoch = epoch;
    const names = [...held.keys()];
    // What each name held when its version was read: one replaced meanwhile (a newer version read
    // and held while the check's reply was on its way) is not compared with an older reading.
    const checkedEntries = names.map((name) => held.peek(name));
    const pipeline = redis.pipeline();
    for (const name of names) pipeline.hget(keys.snapshot(name), 'etag');
    const results = await redisCall('snapshot versions', () => pipeline.exec());
    if (epoch !== startedEpoch) return;
    const suspects: Array<[SnapshotName, Held]> = [];
    names.forEach((name, i) => {
      const [err, etag] = results?.[i] ?? [new Error('no reply'), null];
      const entry = held.peek(name);
      // A version that could not be read (its Redis node failing over) says nothing about a change:
      // the held one keeps being served, and the next check looks again.
      if (entry && entry === checkedEntries[i] && !err && (etag ?? null) !== (entry.base?.etag ?? entry.etag)) suspects.push([name, entry]);
    });
    if (suspects.length === 0) return;
    // A version is written and announced in one transaction, so one read here may be announced
    // already and its announcement still on its way, or applied and its new version being read
    // (the held one is served meanwhile). Announcements published before the reply to a PING on
    // the subscriber's connection arrive before it: after it, a version still unannounced was
    // missed (a Redis Cluster client may send the PING to another node: there it only narrows the
    // window). Warned at once, a busy snapshot's ordinary change was reported as missed (~46 a
    // minute in a two-hour soak).
    await redisCall('snapshot announcements', () => subscriber.ping());
    if (epoch !== startedEpoch) return;
    for (const [name, entry] of suspects) {
      if (held.peek(name) !== entry || inFlight.has(name)) continue;
      logger.warn({ snapshot: name }, 'snapshot changed without an announcement; re-reading it');
      setAsideOne(name, entry);
    }
  }

  return {
    async read<T>(name: SnapshotName, schema: z.ZodType<T>): Promise<HeldSnapshot<T> | null> {
      // A read: `get` moves it up, so the least recently read go first.
      let entry = trusted ? held.get(name) : undefined;
      if (!entry) {
        // Concurrent requests after a new version share one fetch and parse.
        try {
          entry = await fetchOnce(name, schema as z.ZodType<unknown>);
        } catch (err) {
          const kept = stale.get(name);
          const unreadable = (err instanceof ApiError && err.code === 'unavailable') || err instanceof SnapshotInvalid;
          if (!unreadable || kept === undefined) throw err;
          if (clock() - kept.since > staleMs) {
            stale.delete(name);
            throw err;
          }
          // Once per version set aside, not once per request of a busy page.
          if (err instanceof SnapshotInvalid && !kept.logged) {
            kept.logged = true;
            logger.error({ err, snapshot: name }, 'snapshot fails its schema; the version before it is served');
          }
          entry = kept.entry;
        }
      }
      entry.used = true;
      return entry.etag === null ? null : { data: entry.data as T, etag: entry.etag };
    },
    version(name) {
      return trusted ? held.peek(name)?.etag : undefined;
    },
    live() {
      return feed.connected && Number.isFinite(feed.lastAtMs) && clock() - feed.lastAtMs < FEED_FRESH_MS;
    },
    start() {
      const every = (ms: number, run: () => Promise<void>) => {
        const timer = setInterval(() => run().catch(() => {}), ms);
        timer.unref();
        timers.push(timer);
      };
      // At once, or as soon as the connection is up: asked before, it only logged a start-up warning.
      if (redis.status === 'ready') refreshFeed().catch(() => {});
      else redis.once('ready', () => refreshFeed().catch(() => {}));
      every(options.feedRefreshMs ?? 1_000, refreshFeed);
      every(options.verifyMs ?? 10_000, verifyHeld);
      // What was set aside is of use for `staleMs` only: forgotten after, read or not.
      every(Math.min(staleMs, 10_000), async () => {
        const now = clock();
        for (const [name, kept] of [...stale.entries()]) if (now - kept.since > staleMs) stale.delete(name);
      });
    },
    async stop() {
      stopped = true;
      for (const timer of timers) clearInterval(timer);
      distrust();
      // A subscriber holds nothing to flush; quit() would wait for a Redis that may never answer.
      subscriber.disconnect();
    },
    subscribed: () => subscribed,
    async sync() {
      if (trusted) await subscriber.ping();
      await Promise.allSettled([...inFlight.values()]);
      await refreshFeed();
    },
  };
}
