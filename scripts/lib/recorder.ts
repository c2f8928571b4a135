import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { z } from 'zod';
import { sleep } from '@pm/shared/wait';

/**
 * Records a scenario from the exchange in docs/protocol.md §5's format: catalog.json (open events as
 * `GET /events` returns them, paged, busiest first, capped), sports.json (`GET /sports`),
 * history/<tokenId>.json for the first outcome token of the first markets (capped), and feed.jsonl
 * with every frame of the market channel (subscribed to the catalog's open tokens, ≤ 200 per
 * socket) and of the sports channel for the given duration. Used by `npm run record`.
 */

export interface ExchangeUrls {
  GAMMA_URL: string;
  CLOB_URL: string;
  CLOB_WS_URL: string;
  SPORTS_WS_URL: string;
}

export interface RecordOptions {
  urls: ExchangeUrls;
  out: string;
  durationMs: number;
  /** Most events kept in catalog.json. */
  maxEvents: number;
  /** Most history files fetched. */
  maxHistory: number;
  /** One line of progress. */
  say?: (line: string) => void;
  /** Per HTTP request / ws connect timeout (10 s). */
  timeoutMs?: number;
}

export interface RecordSummary {
  events: number;
  tokens: number;
  sockets: number;
  historyFiles: number;
  frames: { market: number; sports: number };
}

/** The exchange (or a part of it) cannot be reached: one line that says what to check. */
export class RecordError extends Error {
  override name = 'RecordError';
}

const PAGE = 100;
const MAX_ASSETS_PER_SOCKET = 200;
const PING_MS = 10_000;
const eventsPageSchema = z.array(z.looseObject({ markets: z.array(z.looseObject({ clobTokenIds: z.unknown().optional(), closed: z.unknown().optional() })).nullish() }));

function unreachable(url: string, envVar: keyof ExchangeUrls, err: unknown): RecordError {
  const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
  return new RecordError(`record: cannot reach ${url} (${cause}): check your internet connection or set ${envVar}`);
}

async function getJson(base: string, envVar: keyof ExchangeUrls, pathAndQuery: string, timeoutMs: number): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${base}${pathAndQuery}`, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw unreachable(base, envVar, err);
  }
  if (!res.ok) throw new RecordError(`record: ${base}${pathAndQuery} answered HTTP ${res.status}: check ${envVar}`);
  try {
    return await res.json();
  } catch {
    throw new RecordError(`record: ${base}${pathAndQuery} did not answer JSON: check ${envVar}`);
  }
}

/** Gamma's JSON-encoded string arrays (`"[\"1\",\"2\"]"`); [] when absent or malformed. */
function tokenIdsOf(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  try {
    const parsed = z.array(z.union([z.string(), z.number()])).safeParse(JSON.parse(value));
    return parsed.success ? parsed.data.map(String) : [];
  } catch {
    return [];
  }
}

async function fetchCatalog(opts: RecordOptions, timeoutMs: number): Promise<unknown[]> {
  const events: unknown[] = [];
  for (let offset = 0; events.length < opts.maxEvents; offset += PAGE) {
    const limit = Math.min(PAGE, opts.maxEvents - events.length);
    const body = await getJson(
      opts.urls.GAMMA_URL,
      'GAMMA_URL',
      `/events?active=true&closed=false&order=volume24hr&ascending=false&limit=${limit}&offset=${offset}`,
      timeoutMs,
    );
    const page = eventsPageSchema.safeParse(body);
    if (!page.success) throw new RecordError(`record: ${opts.urls.GAMMA_URL}/events did not answer a list of events: check GAMMA_URL`);
    // The raw objects, not the parsed ones: catalog.json keeps every field exactly as served.
    events.push(...(body as unknown[]));
    if (page.data.length < limit) break;
  }
  return events.slice(0, opts.maxEvents);
}

/** Open a socket, or fail with the one-line error once it cannot connect. */
function connect(url: string, envVar: keyof ExchangeUrls, timeoutMs: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { handshakeTimeout: timeoutMs });
    ws.once('open', () => resolve(ws));
    ws.once('error', (err) => reject(unreachable(url, envVar, err)));
  });
}

const frameOf = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
};

export async function recordScenario(opts: RecordOptions): Promise<RecordSummary> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const say = opts.say ?? (() => {});

  const events = await fetchCatalog(opts, timeoutMs);
  const sports = await getJson(opts.urls.GAMMA_URL, 'GAMMA_URL', '/sports', timeoutMs);
  const openMarkets = eventsPageSchema.parse(events).flatMap((e) => (e.markets ?? []).filter((m) => m.closed !== true));
  const tokens = [...new Set(openMarkets.flatMap((m) => tokenIdsOf(m.clobTokenIds)))];
  say(`catalog: ${events.length} events, ${openMarkets.length} open markets, ${tokens.length} tokens`);

  mkdirSync(path.join(opts.out, 'history'), { recursive: true });
  writeFileSync(path.join(opts.out, 'catalog.json'), `${JSON.stringify(events, null, 1)}\n`);
  writeFileSync(path.join(opts.out, 'sports.json'), `${JSON.stringify(sports, null, 1)}\n`);

  let historyFiles = 0;
  for (const m of openMarkets) {
    if (historyFiles >= opts.maxHistory) break;
    const first = tokenIdsOf(m.clobTokenIds)[0];
    if (!first || !/^[A-Za-z0-9_-]+$/.test(first)) continue;
    const body = await getJson(opts.urls.CLOB_URL, 'CLOB_URL', `/prices-history?market=${encodeURIComponent(first)}&interval=max&fidelity=60`, timeoutMs);
    writeFileSync(path.join(opts.out, 'history', `${first}.json`), `${JSON.stringify(body)}\n`);
    historyFiles++;
  }
  say(`history: ${historyFiles} files`);

  const feed = createWriteStream(path.join(opts.out, 'feed.jsonl'));
  const frames = { market: 0, sports: 0 };
  const started = performance.now();
  const write = (channel: 'market' | 'sports', text: string) => {
    frames[channel]++;
    feed.write(`${JSON.stringify({ at: Math.round(performance.now() - started), channel, frame: frameOf(text) })}\n`);
  };

  const shards: string[][] = [];
  for (let i = 0; i < tokens.length; i += MAX_ASSETS_PER_SOCKET) shards.push(tokens.slice(i, i + MAX_ASSETS_PER_SOCKET));
  const sockets: WebSocket[] = [];
  const timers: NodeJS.Timeout[] = [];
  let stopping = false;

  /** One market shard; a socket the exchange drops mid-recording is reopened and resubscribed. */
  const openMarket = async (assets: string[]) => {
    const ws = await connect(`${opts.urls.CLOB_WS_URL}/ws/market`, 'CLOB_WS_URL', timeoutMs);
    sockets.push(ws);
    ws.send(JSON.stringify({ assets_ids: assets, type: 'market', custom_feature_enabled: true, initial_dump: true }));
    const ping = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send('PING'), PING_MS);
    timers.push(ping);
    ws.on('message', (data: WebSocket.RawData) => write('market', data.toString()));
    ws.on('error', () => {});
    ws.once('close', () => {
      clearInterval(ping);
      if (stopping) return;
      say('market socket closed; reconnecting');
      timers.push(setTimeout(() => void openMarket(assets).catch((err: unknown) => say(String(err instanceof Error ? err.message : err))), 1_000));
    });
  };
  const openSports = async () => {
    const ws = await connect(`${opts.urls.SPORTS_WS_URL}/ws`, 'SPORTS_WS_URL', timeoutMs);
    sockets.push(ws);
    ws.on('message', (data: WebSocket.RawData) => {
      const text = data.toString();
      write('sports', text);
      if (text.trim() === 'ping') ws.send('pong');
    });
    ws.on('error', () => {});
    ws.once('close', () => {
      if (stopping) return;
      say('sports socket closed; reconnecting');
      timers.push(setTimeout(() => void openSports().catch((err: unknown) => say(String(err instanceof Error ? err.message : err))), 1_000));
    });
  };

  try {
    await Promise.all([...shards.map(openMarket), openSports()]);
    say(`recording ${shards.length} market socket(s) and the sports socket for ${Math.round(opts.durationMs / 1000)} s…`);
    await sleep(opts.durationMs);
  } finally {
    stopping = true;
    for (const t of timers) clearTimeout(t);
    for (const ws of sockets) ws.terminate();
    await new Promise<void>((resolve) => feed.end(() => resolve()));
  }
  return { events: events.length, tokens: tokens.length, sockets: shards.length, historyFiles, frames };
}
