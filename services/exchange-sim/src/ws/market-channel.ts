import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '@pm/shared/logger';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { z } from 'zod';
import type { ExchangeSource, MarketMessage } from '../protocol.js';

/**
 * The CLOB market channel (`/ws/market`, docs/protocol.md §1): subscribe / dynamic (un)subscribe,
 * initial `book` dump, text PING/PONG (a PING before the first subscribe closes with 1008), and each
 * socket streamed only its assets. Some sends are deliberately batched into one JSON array frame,
 * and `silence` keeps sockets open but mute, as the exchange's silent freezes do.
 */
const initialSchema = z.object({
  assets_ids: z.array(z.string()),
  type: z.string().refine((t) => t.toLowerCase() === 'market', 'type must be market'),
  custom_feature_enabled: z.boolean().optional(),
  initial_dump: z.boolean().optional(),
});

const operationSchema = z.object({
  operation: z.enum(['subscribe', 'unsubscribe']),
  assets_ids: z.array(z.string()),
  custom_feature_enabled: z.boolean().optional(),
});

interface Client {
  ws: WebSocket;
  assets: Set<string>;
  subscribed: boolean;
  custom: boolean;
  sends: number;
}

interface Route {
  message: MarketMessage;
  /** null: every socket. */
  assets: readonly string[] | null;
  customOnly: boolean;
}

function route(message: MarketMessage): Route {
  switch (message.event_type) {
    case 'price_change':
      return { message, assets: message.price_changes.map((c) => c.asset_id), customOnly: false };
    case 'best_bid_ask':
      return { message, assets: [message.asset_id], customOnly: true };
    case 'market_resolved':
      return { message, assets: message.assets_ids, customOnly: true };
    case 'new_market':
      return { message, assets: null, customOnly: true };
    default:
      return { message, assets: [message.asset_id], customOnly: false };
  }
}

export class MarketChannel {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly clients = new Set<Client>();
  private silencedUntil = 0;

  constructor(
    private readonly source: ExchangeSource,
    private readonly log: Logger,
  ) {
    this.wss.on('connection', (ws) => this.onConnection(ws));
  }

  get size(): number {
    return this.clients.size;
  }

  /** Distinct assets subscribed, and those subscribed on more than one socket (two ingestors serving one token). */
  subscriptions(): { assets: number; onSeveralSockets: string[] } {
    const sockets = new Map<string, number>();
    for (const client of this.clients) for (const asset of client.assets) sockets.set(asset, (sockets.get(asset) ?? 0) + 1);
    return { assets: sockets.size, onSeveralSockets: [...sockets].filter(([, n]) => n > 1).map(([asset]) => asset) };
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  /** Keep sockets open but send nothing at all (not even PONG) for `ms`. */
  silence(ms: number): number {
    this.silencedUntil = Date.now() + ms;
    return this.silencedUntil;
  }

  private get silent(): boolean {
    return Date.now() < this.silencedUntil;
  }

  /** Abrupt drop of every market socket (no close frame). */
  dropAll(): number {
    const n = this.clients.size;
    for (const c of this.clients) c.ws.terminate();
    this.clients.clear();
    return n;
  }

  close(): void {
    this.dropAll();
    this.wss.close();
  }

  private onConnection(ws: WebSocket): void {
    const client: Client = { ws, assets: new Set(), subscribed: false, custom: false, sends: 0 };
    this.clients.add(client);
    ws.on('message', (data: RawData) => this.onMessage(client, data));
    ws.on('close', () => this.clients.delete(client));
    ws.on('error', (err) => this.log.debug({ err }, 'market socket error'));
  }

  private send(client: Client, text: string): void {
    if (this.silent || client.ws.readyState !== client.ws.OPEN) return;
    client.ws.send(text);
  }

  private onMessage(client: Client, data: RawData): void {
    const text = (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8').trim();
    if (text === 'PING') {
      if (!client.subscribed) {
        client.ws.close(1008, 'subscribe before PING');
        return;
      }
      this.send(client, 'PONG');
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return; // other text frames (PONG…) are ignored, as the exchange does
    }
    const op = operationSchema.safeParse(json);
    if (op.success) {
      if (op.data.custom_feature_enabled !== undefined) client.custom = op.data.custom_feature_enabled;
      if (op.data.operation === 'unsubscribe') {
        for (const a of op.data.assets_ids) client.assets.delete(a);
        return;
      }
      client.subscribed = true;
      this.subscribe(client, op.data.assets_ids, true);
      return;
    }
    const initial = initialSchema.safeParse(json);
    if (initial.success) {
      client.subscribed = true;
      client.custom = initial.data.custom_feature_enabled ?? false;
      this.subscribe(client, initial.data.assets_ids, initial.data.initial_dump ?? true);
      return;
    }
    this.log.debug({ text: text.slice(0, 200) }, 'ignored market socket message');
  }

  private subscribe(client: Client, assets: readonly string[], dump: boolean): void {
    const added = assets.filter((a) => !client.assets.has(a));
    for (const a of added) client.assets.add(a);
    if (!dump) return;
    // The initial dump comes as one array frame of `book` messages, as real captures show.
    const books = added.map((a) => this.source.book(a)).filter((b) => b !== undefined);
    if (books.length) this.send(client, JSON.stringify(books));
  }

  publish(messages: readonly MarketMessage[]): void {
    if (this.silent || !this.clients.size) return;
    const routes = messages.map(route);
    for (const client of this.clients) {
      if (!client.subscribed) continue;
      const mine = routes
        .filter((r) => (!r.customOnly || client.custom) && (r.assets === null || r.assets.some((a) => client.assets.has(a))))
        .map((r) => r.message);
      if (!mine.length) continue;
      client.sends += 1;
      // About one send in ten is batched into a JSON array frame (a one-element array now and then too).
      if ((mine.length > 1 && client.sends % 10 === 3) || client.sends % 25 === 7) {
        this.send(client, JSON.stringify(mine));
      } else {
        for (const m of mine) this.send(client, JSON.stringify(m));
      }
    }
  }

  /** A recorded frame, sent exactly as recorded. */
  publishRaw(frame: unknown, assetId: string | null): void {
    if (this.silent) return;
    const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
    for (const client of this.clients) {
      if (!client.subscribed) continue;
      if (assetId !== null && !client.assets.has(assetId)) continue;
      this.send(client, text);
    }
  }
}
