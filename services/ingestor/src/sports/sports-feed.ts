import WebSocket from 'ws';
import { parseSportsFrame, type SportsUpdate } from '@pm/shared/exchange';
import { backoffDelay } from '../common/backoff.js';
import type { FeedSocketOptions } from '../common/feed-options.js';
import { closeSocket } from '../common/close-socket.js';

/**
 * The sports channel client (docs/protocol.md §2): no subscribe, every client gets every active game.
 * Heartbeats come either as text `ping` (answered `pong`) or as protocol pings (the ws library
 * answers those itself); a socket with no frame at all for `silenceMs` (default 45 s) is recycled.
 */

/** `url`: `${SPORTS_WS_URL}/ws`; `silenceMs` default 45 s. */
export interface SportsFeedOptions extends FeedSocketOptions {
  onUpdate: (update: SportsUpdate) => void;
  /** Every frame (heartbeats included): freshness. */
  onFrame?: () => void;
}

export interface SportsFeed {
  start(): void;
  connected(): boolean;
  stats(): { frames: number; updates: number; malformed: number; reconnects: number };
  close(): Promise<void>;
}

export function createSportsFeed(opts: SportsFeedOptions): SportsFeed {
  const silenceMs = opts.silenceMs ?? 45_000;
  const reconnectInitialMs = opts.reconnectInitialMs ?? 500;
  const reconnectMaxMs = opts.reconnectMaxMs ?? 10_000;
  const log = opts.logger;
  let ws: WebSocket | null = null;
  let attempt = 0;
  let lastFrameAt = 0;
  let watchdog: NodeJS.Timeout | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let closing = false;
  let isOpen = false;
  const stats = { frames: 0, updates: 0, malformed: 0, reconnects: 0 };

  function setOpen(up: boolean) {
    if (up === isOpen) return;
    isOpen = up;
    opts.onConnectionChange?.(up);
  }

  function seen() {
    lastFrameAt = Date.now();
    opts.onFrame?.();
  }

  function connect() {
    const socket = new WebSocket(opts.url, { handshakeTimeout: 10_000 });
    ws = socket;
    socket.on('open', () => {
      if (ws !== socket) return;
      lastFrameAt = Date.now();
      watchdog = setInterval(() => {
        if (Date.now() - lastFrameAt > silenceMs) {
          log.warn({ silentMs: Date.now() - lastFrameAt }, 'sports socket silent; recycling');
          socket.terminate();
        }
      }, Math.max(20, Math.min(5_000, Math.floor(silenceMs / 4))));
      log.info('sports socket open');
      setOpen(true);
    });
    socket.on('ping', () => seen());
    socket.on('message', (data: WebSocket.RawData) => {
      if (ws !== socket) return;
      stats.frames++;
      seen();
      attempt = 0;
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data).toString('utf8');
      const frame = parseSportsFrame(text);
      if (frame.kind === 'text') {
        if (frame.text.toLowerCase() === 'ping' && socket.readyState === WebSocket.OPEN) socket.send('pong');
        return;
      }
      stats.malformed += frame.malformed;
      for (const u of frame.updates) {
        stats.updates++;
        try {
          opts.onUpdate(u);
        } catch (err) {
          log.error({ err, gameId: u.gameId }, 'sports update handler threw');
        }
      }
    });
    socket.on('error', (err) => log.warn({ err: err.message }, 'sports socket error'));
    socket.on('close', (code) => {
      if (ws !== socket) return;
      if (watchdog) clearInterval(watchdog);
      watchdog = undefined;
      ws = null;
      setOpen(false);
      if (closing) return;
      const delay = backoffDelay(attempt++, reconnectInitialMs, reconnectMaxMs);
      log.warn({ code, delayMs: delay }, 'sports socket closed; reconnecting');
      reconnectTimer = setTimeout(() => {
        reconnectTimer = undefined;
        if (closing) return;
        stats.reconnects++;
        connect();
      }, delay);
    });
  }

  return {
    start() {
      if (ws || reconnectTimer || closing) return;
      connect();
    },
    connected: () => isOpen,
    stats: () => ({ ...stats }),
    async close() {
      closing = true;
      if (watchdog) clearInterval(watchdog);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const socket = ws;
      ws = null;
      setOpen(false);
      await closeSocket(socket);
    },
  };
}
