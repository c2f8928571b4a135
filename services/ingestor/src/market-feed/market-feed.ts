import WebSocket from 'ws';
import { backoffDelay } from '../common/backoff.js';
import type { FeedSocketOptions } from '../common/feed-options.js';
import { closeSocket } from '../common/close-socket.js';

/**
 * Socket management of the market channel (docs/protocol.md §1): tokens are sharded over sockets of at
 * most `maxAssetsPerSocket` (large sockets were reported to freeze silently). Each socket sends the
 * full subscribe on open (a `PING` before it gets the socket closed), later additions with
 * `operation: subscribe`, a text `PING` every 10 s, reconnects with backoff and jitter and resends
 * the full subscribe, and is recycled by a watchdog when it stays open but dead.
 *
 * Liveness (docs/protocol.md §1): real sockets have quiet spells of 40–60 s on quiet assets, so data
 * alone cannot tell a healthy socket from a frozen one. A `PONG` answer counts as life: a socket is
 * recycled when two PINGs in a row went unanswered (within ~3 ping intervals of the last PONG), or
 * after `silenceMs` (120 s) with neither data nor PONG.
 * What the frames mean is the handler's business: this module only delivers their text.
 */

/**
 * `url`: `${CLOB_WS_URL}/ws/market`; connected means every shard open; `silenceMs`: neither data nor
 * PONG for this long, default 120 s.
 */
export interface MarketFeedOptions extends FeedSocketOptions {
  /** Every text frame, in wire order per socket. Must not throw (errors are caught and logged). */
  onFrame: (text: string) => void;
  /** Called for every data frame (not heartbeats). */
  onData?: () => void;
  /** Called for every sign of life: a data frame or a PONG (feed freshness). */
  onAlive?: () => void;
  /**
   * A socket sent its full subscribe for `tokens`; `reconnect` is false on its first open. The
   * books then come from the initial dump, which may lag or miss some (hence the REST resync).
   */
  onSubscribed?: (tokens: string[], reconnect: boolean) => void;
  maxAssetsPerSocket?: number;
  pingIntervalMs?: number;
  /** Recycle after this many PINGs in a row went unanswered; default 2. */
  missedPongs?: number;
}

export interface MarketFeedStats {
  sockets: number;
  open: number;
  reconnects: number;
  /** Recycles for missing PONGs or total silence. */
  watchdogRecycles: number;
  /** PONGs received. */
  pongs: number;
  subscribed: number;
}

export interface MarketFeed {
  subscribe(tokenIds: Iterable<string>): void;
  unsubscribe(tokenIds: Iterable<string>): void;
  isSubscribed(tokenId: string): boolean;
  /** The token's socket is open and showed life (data or PONG) within the last three ping intervals. */
  isLive(tokenId: string): boolean;
  connected(): boolean;
  stats(): MarketFeedStats;
  close(): Promise<void>;
}

/** Heartbeat frames carry no market data. A PONG is life nonetheless (the server answered us). */
const HEARTBEAT_TEXT = new Set(['PONG', 'PING']);

export function createMarketFeed(opts: MarketFeedOptions): MarketFeed {
  const maxPerSocket = opts.maxAssetsPerSocket ?? 200;
  const pingIntervalMs = opts.pingIntervalMs ?? 10_000;
  const silenceMs = opts.silenceMs ?? 120_000;
  const maxMissedPongs = opts.missedPongs ?? 2;
  /** A healthy socket shows life at least once per ping interval (its PONG). */
  const liveWindowMs = pingIntervalMs * 3;
  const reconnectInitialMs = opts.reconnectInitialMs ?? 500;
  const reconnectMaxMs = opts.reconnectMaxMs ?? 10_000;
  const log = opts.logger;

  const shards: Shard[] = [];
  const shardOf = new Map<string, Shard>();
  let reconnects = 0;
  let watchdogRecycles = 0;
  let pongs = 0;
  let closing = false;
  let lastConnected = false;
  let nextShardId = 0;

  function reportConnection() {
    const now = computeConnected();
    if (now !== lastConnected) {
      lastConnected = now;
      opts.onConnectionChange?.(now);
    }
  }

  function computeConnected(): boolean {
    const active = shards.filter((s) => s.tokens.size > 0);
    return active.length > 0 && active.every((s) => s.isOpen());
  }

  class Shard {
    readonly id = nextShardId++;
    readonly tokens = new Set<string>();
    ws: WebSocket | null = null;
    /** The full subscribe has been sent on the current socket. */
    subscribed = false;
    attempt = 0;
    /** Last data frame or PONG (Date.now()). */
    lastLifeAt = 0;
    /** A PING is out and no PONG came since. */
    awaitingPong = false;
    /** PINGs in a row that got no PONG before the next was due. */
    missed = 0;
    /** Times this shard's sockets sent their full subscribe. */
    opens = 0;
    private ping: NodeJS.Timeout | undefined;
    private watchdog: NodeJS.Timeout | undefined;
    private reconnectTimer: NodeJS.Timeout | undefined;

    isOpen(): boolean {
      return this.ws !== null && this.ws.readyState === WebSocket.OPEN && this.subscribed;
    }

    ensureConnected() {
      if (closing || this.ws || this.reconnectTimer || this.tokens.size === 0) return;
      this.connect();
    }

    connect() {
      const ws = new WebSocket(opts.url, { handshakeTimeout: 10_000 });
      this.ws = ws;
      this.subscribed = false;
      ws.on('open', () => {
        if (this.ws !== ws) return;
        if (this.tokens.size === 0) {
          ws.close(1000);
          return;
        }
        this.send({ assets_ids: [...this.tokens], type: 'market', custom_feature_enabled: true, initial_dump: true });
        this.subscribed = true;
        this.lastLifeAt = Date.now();
        this.awaitingPong = false;
        this.missed = 0;
        this.ping = setInterval(() => {
          if (ws.readyState !== WebSocket.OPEN) return;
          if (this.awaitingPong && ++this.missed >= maxMissedPongs) {
            this.recycle(ws, 'market socket missed PONGs; recycling');
            return;
          }
          this.awaitingPong = true;
          ws.send('PING');
        }, pingIntervalMs);
        this.watchdog = setInterval(() => {
          if (Date.now() - this.lastLifeAt > silenceMs) this.recycle(ws, 'market socket silent; recycling');
        }, Math.max(20, Math.min(5_000, Math.floor(silenceMs / 4))));
        log.info({ shard: this.id, assets: this.tokens.size }, 'market socket subscribed');
        reportConnection();
        try {
          opts.onSubscribed?.([...this.tokens], this.opens++ > 0);
        } catch (err) {
          log.error({ err, shard: this.id }, 'onSubscribed failed');
        }
      });
      ws.on('message', (data: WebSocket.RawData) => {
        if (this.ws !== ws) return;
        const text = rawToText(data);
        const heartbeat = text.trim().toUpperCase();
        if (heartbeat === 'PONG') {
          pongs++;
          this.lastLifeAt = Date.now();
          this.awaitingPong = false;
          this.missed = 0;
          opts.onAlive?.();
        } else if (!HEARTBEAT_TEXT.has(heartbeat)) {
          this.lastLifeAt = Date.now();
          // A socket that delivers data is healthy again: the next failure starts from a short delay.
          this.attempt = 0;
          opts.onData?.();
          opts.onAlive?.();
        }
        try {
          opts.onFrame(text);
        } catch (err) {
          log.error({ err, shard: this.id }, 'market frame handler threw');
        }
      });
      ws.on('error', (err) => log.warn({ shard: this.id, err: err.message }, 'market socket error'));
      ws.on('close', (code, reason) => {
        if (this.ws !== ws) return;
        this.clearTimers();
        this.ws = null;
        this.subscribed = false;
        reportConnection();
        if (closing || this.tokens.size === 0) return;
        const delay = backoffDelay(this.attempt++, reconnectInitialMs, reconnectMaxMs);
        log.warn({ shard: this.id, code, reason: reason.toString(), delayMs: delay }, 'market socket closed; reconnecting');
        this.reconnectTimer = setTimeout(() => {
          this.reconnectTimer = undefined;
          if (closing || this.tokens.size === 0) return;
          reconnects++;
          this.connect();
        }, delay);
      });
    }

    recycle(ws: WebSocket, why: string) {
      watchdogRecycles++;
      log.warn({ shard: this.id, quietMs: Date.now() - this.lastLifeAt, missedPongs: this.missed }, why);
      ws.terminate();
    }

    send(msg: unknown) {
      if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
    }

    add(tokens: string[]) {
      for (const t of tokens) this.tokens.add(t);
      // Added to a live socket: incremental subscribe. Connecting or reconnecting: the full
      // subscribe on open already includes them.
      if (this.isOpen()) this.send({ operation: 'subscribe', assets_ids: tokens });
      else this.ensureConnected();
    }

    remove(tokens: string[]) {
      for (const t of tokens) this.tokens.delete(t);
      if (this.isOpen() && this.tokens.size > 0) this.send({ operation: 'unsubscribe', assets_ids: tokens });
      if (this.tokens.size === 0) this.shutdown();
    }

    clearTimers() {
      if (this.ping) clearInterval(this.ping);
      if (this.watchdog) clearInterval(this.watchdog);
      this.ping = undefined;
      this.watchdog = undefined;
    }

    shutdown(): Promise<void> {
      this.clearTimers();
      if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
      this.reconnectTimer = undefined;
      const ws = this.ws;
      this.ws = null;
      this.subscribed = false;
      return closeSocket(ws);
    }
  }

  return {
    subscribe(tokenIds) {
      if (closing) return;
      const fresh = [...new Set(tokenIds)].filter((t) => !shardOf.has(t));
      let i = 0;
      while (i < fresh.length) {
        let shard = shards.find((s) => s.tokens.size < maxPerSocket);
        if (!shard) {
          shard = new Shard();
          shards.push(shard);
        }
        const batch = fresh.slice(i, i + (maxPerSocket - shard.tokens.size));
        i += batch.length;
        for (const t of batch) shardOf.set(t, shard);
        shard.add(batch);
      }
      reportConnection();
    },
    unsubscribe(tokenIds) {
      const byShard = new Map<Shard, string[]>();
      for (const t of tokenIds) {
        const s = shardOf.get(t);
        if (!s) continue;
        shardOf.delete(t);
        byShard.set(s, [...(byShard.get(s) ?? []), t]);
      }
      for (const [s, ts] of byShard) s.remove(ts);
      reportConnection();
    },
    isSubscribed: (tokenId) => shardOf.has(tokenId),
    isLive(tokenId) {
      const s = shardOf.get(tokenId);
      return s !== undefined && s.isOpen() && Date.now() - s.lastLifeAt <= liveWindowMs;
    },
    connected: computeConnected,
    stats() {
      return {
        sockets: shards.filter((s) => s.tokens.size > 0).length,
        open: shards.filter((s) => s.isOpen()).length,
        reconnects,
        watchdogRecycles,
        pongs,
        subscribed: shardOf.size,
      };
    },
    async close() {
      closing = true;
      await Promise.all(shards.map((s) => s.shutdown()));
      reportConnection();
    },
  };
}

function rawToText(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
