import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ExchangeSource } from '../protocol.js';
import type { MarketChannel } from '../ws/market-channel.js';
import type { SportsChannel } from '../ws/sports-channel.js';
import { refuseControl } from './control-guard.js';
import { readJsonBody, sendJson } from './respond.js';

/**
 * Test controls, all under `/_sim/` (never part of the exchange's interface): force a book, resolve
 * a market now, drop or silence market sockets, pause/resume/step the synthetic walk, read state.
 * Only from loopback with the simulator's token (control-guard.ts).
 */
const decimal = z.union([z.number(), z.string().regex(/^\d*\.?\d+$/)]).transform(Number);
const level = z.object({ price: decimal.refine((p) => p > 0 && p < 1, 'price must be in (0, 1)'), size: decimal });

const bookBody = z.object({
  token_id: z.string().min(1),
  bids: z.array(level).default([]),
  asks: z.array(level).default([]),
});

const resolveBody = z.object({
  market_id: z.union([z.string().min(1), z.number()]).transform(String),
  winning_outcome_index: z.number().int().min(0).max(1).nullable(),
  announce: z.boolean().default(true),
});

const silenceBody = z.object({ ms: z.number().int().min(0).max(3_600_000) });
const vanishBody = z.object({ event_id: z.union([z.string().min(1), z.number()]).transform(String) });
const stepBody = z.object({ ticks: z.number().int().min(1).max(100_000).default(1) });

export interface ControlDeps {
  source: ExchangeSource;
  market: MarketChannel;
  sports: SportsChannel;
  /** The bearer token the controls require; null = the controls are off. */
  controlToken: string | null;
}

/** Answers 400 naming the bad fields; true = handled. */
function invalid(res: ServerResponse, error: z.ZodError): true {
  sendJson(res, 400, { error: error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') });
  return true;
}

export async function handleControlRoute(
  deps: ControlDeps,
  req: IncomingMessage,
  url: URL,
  res: ServerResponse,
): Promise<boolean> {
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.startsWith('/_sim/')) return false;
  const refusal = refuseControl(req, deps.controlToken);
  if (refusal) {
    if (refusal.status === 401) res.setHeader('www-authenticate', 'Bearer');
    sendJson(res, refusal.status, { error: refusal.error });
    return true;
  }
  const { source, market, sports } = deps;
  const method = req.method ?? 'GET';

  if (method === 'GET' && path === '/_sim/state') {
    const events = source.listing();
    sendJson(res, 200, {
      events: events.length,
      openEvents: events.filter((e) => e.fields.closed !== true).length,
      sockets: { market: market.size, sports: sports.size },
      subscriptions: market.subscriptions(),
      tick: source.tick,
      mode: source.mode,
      paused: source.paused,
      /** The runtime it runs on, so a test can tell the project's pinned Node from the machine's. */
      node: process.version,
    });
    return true;
  }
  if (method !== 'POST') {
    sendJson(res, 404, { error: `no control ${method} ${path}` });
    return true;
  }
  const body = await readJsonBody(req);
  switch (path) {
    case '/_sim/book': {
      const parsed = bookBody.safeParse(body);
      if (!parsed.success) return invalid(res, parsed.error);
      const books = source.setBook(parsed.data.token_id, parsed.data.bids, parsed.data.asks);
      if (!books?.[0]) sendJson(res, 404, { error: `no token ${parsed.data.token_id}` });
      else sendJson(res, 200, books[0]);
      return true;
    }
    case '/_sim/resolve': {
      const parsed = resolveBody.safeParse(body);
      if (!parsed.success) return invalid(res, parsed.error);
      const result = source.resolve(parsed.data.market_id, parsed.data.winning_outcome_index, parsed.data.announce);
      if (result.ok) sendJson(res, 200, { ok: true, market: result.market });
      else sendJson(res, result.status, { error: result.error });
      return true;
    }
    case '/_sim/drop-market-sockets':
      sendJson(res, 200, { dropped: market.dropAll() });
      return true;
    case '/_sim/silence': {
      const parsed = silenceBody.safeParse(body);
      if (!parsed.success) return invalid(res, parsed.error);
      sendJson(res, 200, { silencedUntil: market.silence(parsed.data.ms) });
      return true;
    }
    case '/_sim/quiet': {
      const parsed = silenceBody.safeParse(body);
      if (!parsed.success) return invalid(res, parsed.error);
      sendJson(res, 200, { quietUntil: source.quiet(parsed.data.ms) });
      return true;
    }
    case '/_sim/vanish': {
      const parsed = vanishBody.safeParse(body);
      if (!parsed.success) return invalid(res, parsed.error);
      if (source.vanish(parsed.data.event_id)) sendJson(res, 200, { vanished: parsed.data.event_id });
      else sendJson(res, 404, { error: 'no such event' });
      return true;
    }
    case '/_sim/pause':
      source.pause();
      sendJson(res, 200, { paused: true, tick: source.tick });
      return true;
    case '/_sim/resume':
      source.resume();
      sendJson(res, 200, { paused: false, tick: source.tick });
      return true;
    case '/_sim/step': {
      const parsed = stepBody.safeParse(body);
      if (!parsed.success) return invalid(res, parsed.error);
      source.step(parsed.data.ticks);
      sendJson(res, 200, { tick: source.tick });
      return true;
    }
    case '/_sim/replay/restart':
      if (!source.restart) sendJson(res, 409, { error: 'not replaying a scenario' });
      else {
        source.restart();
        sendJson(res, 200, { restarted: true });
      }
      return true;
    default:
      sendJson(res, 404, { error: `no control ${path}` });
      return true;
  }
}
