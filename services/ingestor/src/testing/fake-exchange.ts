import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, WebSocket } from 'ws';
import { until } from '@pm/shared/wait';

/**
 * A tiny in-process stand-in for the exchange's interfaces, for the ingestor's integration tests:
 * `GET /events` (open list paged by offset/limit, or `id=`/`slug=` lookups), the market channel at
 * `/ws/market` and the sports channel at `/ws`. Tests drive it directly: set the catalog, push
 * frames, drop or silence sockets, and read what clients sent.
 */

export interface FakeMarketSocket {
  ws: WebSocket;
  /** Every text frame the client sent, JSON-decoded when it was JSON. */
  received: unknown[];
  send(frame: unknown): void;
}

export interface FakeExchange {
  httpUrl: string;
  wsUrl: string;
  /** Every event the catalog knows (open and closed); `GET /events?closed=false` lists the open ones. */
  events: Array<Record<string, unknown>>;
  /** Ids of events the list queries (`GET /events…`, `id=` included) no longer show; `GET /events/:id` still does. */
  unlisted: Set<string>;
  /** The body of `GET /sports` (404 when null). */
  sports: unknown[] | null;
  /** Requests seen, as path + query. */
  requests: string[];
  /** Answer the next n `/events` requests with HTTP 500. */
  failNext(n: number): void;
  /** Market sockets in connection order (closed ones included). */
  marketSockets: FakeMarketSocket[];
  sportsSockets: FakeMarketSocket[];
  /** When set, market sockets never answer anything (not even PONG): a frozen socket. */
  silent: boolean;
  /** Books sent on subscribe (the `initial_dump`), by token. */
  initialBooks: Map<string, unknown>;
  /** Bodies of `GET /book?token_id=` by token (404 when absent). */
  restBooks: Map<string, unknown>;
  /** Send a frame to every open market socket. */
  broadcastMarket(frame: unknown): void;
  broadcastSports(frame: unknown): void;
  close(): Promise<void>;
}

export async function startFakeExchange(): Promise<FakeExchange> {
  const wssMarket = new WebSocketServer({ noServer: true });
  const wssSports = new WebSocketServer({ noServer: true });
  let failures = 0;

  const fake: FakeExchange = {
    httpUrl: '',
    wsUrl: '',
    events: [],
    unlisted: new Set(),
    sports: null,
    requests: [],
    failNext(n) {
      failures = n;
    },
    marketSockets: [],
    sportsSockets: [],
    silent: false,
    initialBooks: new Map(),
    restBooks: new Map(),
    broadcastMarket(frame) {
      for (const s of fake.marketSockets) if (s.ws.readyState === WebSocket.OPEN) s.send(frame);
    },
    broadcastSports(frame) {
      for (const s of fake.sportsSockets) if (s.ws.readyState === WebSocket.OPEN) s.send(frame);
    },
    async close() {
      for (const c of [...wssMarket.clients, ...wssSports.clients]) c.terminate();
      await new Promise<void>((r) => wssMarket.close(() => r()));
      await new Promise<void>((r) => wssSports.close(() => r()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    fake.requests.push(`${url.pathname}${url.search}`);
    if (url.pathname === '/book') {
      const body = fake.restBooks.get(url.searchParams.get('token_id') ?? '');
      if (body === undefined) res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"No orderbook exists for the requested token id"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (url.pathname === '/sports' && fake.sports !== null) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(fake.sports));
      return;
    }
    const byId = /^\/events\/([^/]+)$/.exec(url.pathname);
    if (byId) {
      const event = fake.events.find((e) => String(e.id) === decodeURIComponent(byId[1]!));
      if (event) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(event));
      else res.writeHead(404, { 'content-type': 'application/json' }).end('{"type":"not found error","error":"id not found"}');
      return;
    }
    if (url.pathname !== '/events') {
      res.writeHead(404).end();
      return;
    }
    if (failures > 0) {
      failures--;
      res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
      return;
    }
    let list = fake.events.filter((e) => !fake.unlisted.has(String(e.id)));
    const id = url.searchParams.get('id');
    const slug = url.searchParams.get('slug');
    if (id !== null) list = list.filter((e) => String(e.id) === id);
    else if (slug !== null) list = list.filter((e) => e.slug === slug);
    else {
      if (url.searchParams.get('closed') === 'false') list = list.filter((e) => e.closed !== true);
      const offset = Number(url.searchParams.get('offset') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 100);
      list = list.slice(offset, offset + limit);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(list));
  });

  const wrap = (ws: WebSocket): FakeMarketSocket => {
    const s: FakeMarketSocket = {
      ws,
      received: [],
      send(frame) {
        ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
      },
    };
    return s;
  };

  wssMarket.on('connection', (ws) => {
    const s = wrap(ws);
    fake.marketSockets.push(s);
    ws.on('message', (data) => {
      const text = data.toString();
      let msg: unknown = text;
      try {
        msg = JSON.parse(text);
      } catch {
        // heartbeat text
      }
      s.received.push(msg);
      if (fake.silent) return;
      if (text === 'PING') {
        ws.send('PONG');
        return;
      }
      if (typeof msg === 'object' && msg !== null && Array.isArray((msg as { assets_ids?: unknown }).assets_ids)) {
        const books = (msg as { assets_ids: string[] }).assets_ids.map((a) => fake.initialBooks.get(a)).filter((b) => b !== undefined);
        if (books.length > 0) ws.send(JSON.stringify(books));
      }
    });
  });
  wssSports.on('connection', (ws) => {
    const s = wrap(ws);
    fake.sportsSockets.push(s);
    ws.on('message', (data) => s.received.push(data.toString()));
  });

  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const wss = path === '/ws/market' ? wssMarket : path === '/ws' ? wssSports : null;
    if (!wss) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  fake.httpUrl = `http://127.0.0.1:${port}`;
  fake.wsUrl = `ws://127.0.0.1:${port}`;
  return fake;
}

/**
 * `until` (shared/testing) with the check first, as the ingestor's tests read it: resolves with the
 * first truthy value `check` gives (a check that throws counts as "not yet"), fails after `timeoutMs`.
 */
export function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 5_000, label = 'condition'): Promise<NonNullable<T>> {
  return until(label, async () => (await check()) || undefined, { timeoutMs, everyMs: 20 }) as Promise<NonNullable<T>>;
}

/** A catalog event in the exchange's shape, with Yes/No markets whose token ids are given. */
export function gammaEvent(
  id: string,
  markets: Array<{ id: string; tokens: [string, string]; prices?: [string, string]; closed?: boolean; uma?: string }>,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id,
    slug: `event-${id}`,
    title: `Event ${id}`,
    description: 'd',
    startDate: '2026-04-05T14:00:00Z',
    endDate: '2026-04-05 16:00:00+00',
    active: true,
    closed: false,
    volume: 1000,
    volume24hr: 100,
    liquidity: 50,
    tags: [{ id: '21', label: 'Crypto', slug: 'crypto' }],
    markets: markets.map((m) => ({
      id: m.id,
      conditionId: `0x${m.id}`,
      question: `Market ${m.id}?`,
      slug: `market-${m.id}`,
      groupItemTitle: `M${m.id}`,
      outcomes: '["Yes", "No"]',
      outcomePrices: JSON.stringify(m.prices ?? ['0.5', '0.5']),
      clobTokenIds: JSON.stringify(m.tokens),
      endDate: '2026-04-05T16:00:00Z',
      closed: m.closed ?? false,
      active: true,
      acceptingOrders: !(m.closed ?? false),
      volume: '10',
      volumeNum: 10,
      umaResolutionStatus: m.uma ?? null,
    })),
    ...over,
  };
}
