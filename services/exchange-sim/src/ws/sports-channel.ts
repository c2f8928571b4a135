import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '@pm/shared/logger';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ExchangeSource } from '../protocol.js';

/**
 * The sports channel (`/ws`, docs/protocol.md §2): no subscribe; every socket gets every game in play,
 * each game re-sent about every 2 s whether or not it changed, plus frames pushed on changes.
 * Heartbeats both ways the real one was seen to do: text `ping` every 10 s (clients answer `pong`)
 * and protocol-level pings every 15 s.
 */
const RESEND_SLOTS = 8;
const SLOT_MS = 250;
const TEXT_PING_MS = 10_000;
const PROTOCOL_PING_MS = 15_000;

export class SportsChannel {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly clients = new Set<WebSocket>();
  private readonly timers: NodeJS.Timeout[] = [];
  private slot = 0;

  constructor(
    private readonly source: ExchangeSource,
    private readonly log: Logger,
  ) {
    this.wss.on('connection', (ws) => this.onConnection(ws));
    this.timers.push(
      setInterval(() => this.resendSlot(), SLOT_MS),
      setInterval(() => this.broadcastText('ping'), TEXT_PING_MS),
      setInterval(() => {
        for (const ws of this.clients) if (ws.readyState === ws.OPEN) ws.ping();
      }, PROTOCOL_PING_MS),
    );
  }

  get size(): number {
    return this.clients.size;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  private onConnection(ws: WebSocket): void {
    this.clients.add(ws);
    ws.on('close', () => this.clients.delete(ws));
    ws.on('error', (err) => this.log.debug({ err }, 'sports socket error'));
    // Client `pong` answers (and anything else) need no reply.
    ws.on('message', () => undefined);
    for (const frame of this.source.activeGames()) ws.send(JSON.stringify(frame));
  }

  private broadcastText(text: string): void {
    for (const ws of this.clients) if (ws.readyState === ws.OPEN) ws.send(text);
  }

  /** Frames are sent as recorded: strings as text, anything else as JSON. */
  publish(frame: unknown): void {
    this.broadcastText(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  private resendSlot(): void {
    this.slot = (this.slot + 1) % RESEND_SLOTS;
    if (!this.clients.size) return;
    for (const frame of this.source.activeGames()) {
      if (frame.gameId % RESEND_SLOTS === this.slot) this.publish(frame);
    }
  }

  close(): void {
    for (const t of this.timers) clearInterval(t);
    for (const ws of this.clients) ws.terminate();
    this.clients.clear();
    this.wss.close();
  }
}
