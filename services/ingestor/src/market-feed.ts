import WebSocket from 'ws';
import type { Logger } from '@pm/shared';
import { backoffDelay } from './backoff.js';

/**
 * Socket management of the market channel (PROTOCOL.md §1): tokens are sharded over sockets of at
 * most `maxAssetsPerSocket` (large sockets were reported to freeze silently). Each socket sends the
 * full subscribe on open (a `PING` before it gets the socket closed), later additions with
 * `operation: subscribe`, a text `PING` every 10 s, reconnects with backoff and jitter and resends
 * the full subscribe, and is recycled by a data-inactivity watchdog when it stays open but silent.
 * What the frames mean is the handler's business: this module only delivers their text.
 */

export interface MarketFeedOptions {
  /** Full URL of the channel, `${CLOB_WS_URL}/ws/market`. */
  url: string;
  logger: Logger;
  /** Every text frame, in wire order per socket. Must not throw (errors are caught and logged). */
  onFrame: (text: string) => void;
  /** Called when the feed as a whole goes up (every shard open) or down. */
  onConnectionChange?: (connected: boolean) => void;
  /** Called for every data frame (not heartbeats): feed freshness. */
  onData?: () => void;
  /**
   * A socket sent its full subscribe for `tokens`; `reconnect` is false on its first open. The
   * books then come from the initial dump, which may lag or miss some (hence the REST resync).
   */
  onSubscribed?: (tokens: string[], reconnect: boolean) => void;
  maxAssetsPerSocket?: number;
  pingIntervalMs?: number;
  /** Recycle a socket open but without data for this long; default 30 s. */
  inactivityMs?: number;
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
}

export interface MarketFeedStats {
  sockets: number;
  open: number;
  reconnects: number;
  watchdogRecycles: number;
  subscribed: number;
}

export interface MarketFeed {
  subscribe(tokenIds: Iterable<string>): void;
  unsubscribe(tokenIds: Iterable<string>): void;
  isSubscribed(tokenId: string): boolean;
  /** The token's socket is open and has delivered data within the inactivity window. */
  isLive(tokenId: string): boolean;
  connected(): boolean;
  stats(): MarketFeedStats;
  close(): Promise<void>;
}

/** Heartbeat answers carry no market data: they must not keep a frozen socket "alive". */
const HEARTBEAT_TEXT = new Set(['PONG', 'PING']);

export function createMarketFeed(opts: MarketFeedOptions): MarketFeed {
  const maxPerSocket = opts.maxAssetsPerSocket ?? 200;
  const pingIntervalMs = opts.pingIntervalMs ?? 10_000;
  const inactivityMs = opts.inactivityMs ?? 30_000;
  const reconnectInitialMs = opts.reconnectInitialMs ?? 500;
  const reconnectMaxMs = opts.reconnectMaxMs ?? 10_000;
  const log = opts.logger;

  const shards: Shard[] = [];
  const shardOf = new Map<string, Shard>();
  let reconnects = 0;
  let watchdogRecycles = 0;
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
    lastDataAt = 0;
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
        this.lastDataAt = Date.now();
        this.ping = setInterval(() => {
          if (ws.readyState === WebSocket.OPEN) ws.send('PING');
        }, pingIntervalMs);
        this.watchdog = setInterval(() => {
          if (Date.now() - this.lastDataAt > inactivityMs) {
            watchdogRecycles++;
            log.warn({ shard: this.id, silentMs: Date.now() - this.lastDataAt }, 'market socket silent; recycling');
            ws.terminate();
          }
        }, Math.max(20, Math.min(5_000, Math.floor(inactivityMs / 4))));
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
        if (!HEARTBEAT_TEXT.has(text.trim().toUpperCase())) {
          this.lastDataAt = Date.now();
          // A socket that delivers data is healthy again: the next failure starts from a short delay.
          this.attempt = 0;
          opts.onData?.();
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
      if (!ws || ws.readyState === WebSocket.CLOSED) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = setTimeout(() => {
          ws.terminate();
          resolve();
        }, 1_000);
        ws.once('close', () => {
          clearTimeout(done);
          resolve();
        });
        if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
        else ws.close(1000);
      });
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
      return s !== undefined && s.isOpen() && Date.now() - s.lastDataAt <= inactivityMs;
    },
    connected: computeConnected,
    stats() {
      return {
        sockets: shards.filter((s) => s.tokens.size > 0).length,
        open: shards.filter((s) => s.isOpen()).length,
        reconnects,
        watchdogRecycles,
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
