import WebSocket from 'ws';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { sleep, until } from '@pm/shared/wait';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../src/simulator.js';

/** Test-side client helpers: JSON over HTTP, and a websocket that records every frame. */

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<unknown> {
  const res = await fetch(url, { headers });
  if (!res.ok) throw new Error(`GET ${url} → ${res.status} ${await res.text()}`);
  return res.json();
}

export async function postJson(url: string, body: unknown = {}, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** The simulator's control API (`/_sim/*`) with its token, as the run line's crowd and tests call it. */
export function control(sim: { url: string; controlToken: string | null }) {
  const auth = { authorization: `Bearer ${sim.controlToken ?? ''}` };
  return {
    get: (path: `/_sim/${string}`) => getJson(`${sim.url}${path}`, auth),
    post: (path: `/_sim/${string}`, body: unknown = {}) => postJson(`${sim.url}${path}`, body, auth),
  };
}

const looseMessage = z.looseObject({ event_type: z.string().optional() });
export type Message = z.infer<typeof looseMessage>;

export interface Recorded {
  /** Every frame's text, in arrival order. */
  raw: string[];
  /** JSON frames flattened (an array frame contributes each element). */
  messages: Message[];
  /** Frames that were JSON arrays. */
  arrays: number;
  /** Non-JSON text frames (PONG, ping…). */
  texts: string[];
  /** When each frame of `raw` arrived (Date.now()). */
  rawAt: number[];
}

export class RecordingSocket {
  readonly ws: WebSocket;
  readonly rec: Recorded = { raw: [], messages: [], arrays: 0, texts: [], rawAt: [] };
  closeCode: number | null = null;
  private readonly opened: Promise<void>;
  private readonly closed: Promise<number>;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) => {
      this.ws.once('close', (code) => {
        this.closeCode = code;
        resolve(code);
      });
    });
    this.ws.on('message', (data) => {
      const text = data.toString();
      this.rec.raw.push(text);
      this.rec.rawAt.push(Date.now());
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        this.rec.texts.push(text);
        return;
      }
      if (Array.isArray(parsed)) this.rec.arrays += 1;
      for (const element of Array.isArray(parsed) ? parsed : [parsed]) {
        const m = looseMessage.safeParse(element);
        if (m.success) this.rec.messages.push(m.data);
      }
    });
  }

  open(): Promise<void> {
    return this.opened;
  }

  waitClosed(timeoutMs = 5_000): Promise<number> {
    return Promise.race([this.closed, sleep(timeoutMs).then(() => -1)]);
  }

  send(payload: unknown): void {
    this.ws.send(typeof payload === 'string' ? payload : JSON.stringify(payload));
  }

  /** Resolve once `predicate` holds over what was recorded (polls), or fail after the timeout. */
  async waitFor(predicate: (rec: Recorded) => boolean, timeoutMs = 5_000, what = 'condition'): Promise<void> {
    await until(what, async () => predicate(this.rec), { timeoutMs, everyMs: 20 });
  }

  /**
   * PING, then wait for its PONG. The simulator handles a socket's frames in order and answers on the
   * same socket, so once the PONG is here, everything it sent before handling the PING is here too:
   * a check that "nothing (more) arrived" made after this needs no pause.
   */
  async barrier(timeoutMs = 5_000): Promise<void> {
    const pongs = this.pongs();
    this.send('PING');
    await this.waitFor(() => this.pongs() > pongs, timeoutMs, 'PONG');
  }

  pongs(): number {
    return this.rec.texts.filter((t) => t === 'PONG').length;
  }

  close(): void {
    this.ws.terminate();
  }
}

export const gammaMarket = z.looseObject({
  id: z.string(),
  conditionId: z.string(),
  question: z.string(),
  outcomes: z.string(),
  outcomePrices: z.string(),
  clobTokenIds: z.string(),
  closed: z.boolean(),
  sportsMarketType: z.string().nullable(),
  line: z.number().nullable(),
  umaResolutionStatus: z.string().nullable(),
  groupItemTitle: z.string(),
  volume: z.string(),
});

export const gammaEvent = z.looseObject({
  id: z.string(),
  slug: z.string(),
  title: z.string(),
  closed: z.boolean(),
  active: z.boolean(),
  volume24hr: z.number(),
  tags: z.array(z.looseObject({ id: z.string(), slug: z.string(), label: z.string() })).nullable(),
  markets: z.array(gammaMarket),
  gameId: z.number().optional(),
  score: z.string().optional(),
  live: z.boolean().optional(),
});

export type GammaEventT = z.infer<typeof gammaEvent>;

export async function getEvents(url: string): Promise<GammaEventT[]> {
  return z.array(gammaEvent).parse(await getJson(url));
}

export const strings = (encoded: string): string[] => z.array(z.string()).parse(JSON.parse(encoded));

/** Our category of an event from its tags (docs/design.md's mapping). */
export function family(tags: GammaEventT['tags']): string | null {
  const slugs = new Set((tags ?? []).map((t) => t.slug));
  if (['soccer', 'epl', 'la-liga', 'serie-a', 'bundesliga', 'ucl', 'mls'].some((s) => slugs.has(s))) return 'Football';
  if (slugs.has('sports')) return 'Sport';
  if (slugs.has('crypto')) return 'Crypto';
  if (['politics', 'elections', 'geopolitics'].some((s) => slugs.has(s))) return 'Politics';
  if (['economy', 'fed', 'finance'].some((s) => slugs.has(s))) return 'Economy';
  if (['tech', 'ai', 'science'].some((s) => slugs.has(s))) return 'Tech';
  if (['pop-culture', 'culture', 'entertainment'].some((s) => slugs.has(s))) return 'Culture';
  return null;
}

/** The open events of the simulator's catalog (first page of 500). */
export function openEvents(sim: RunningSimulator): Promise<GammaEventT[]> {
  return getEvents(`${sim.url}/events?active=true&closed=false&limit=500`);
}

/**
 * A simulator for the enclosing describe block (or file): started before its tests, handed to
 * `started` (which keeps it, and may read what the tests share), closed after them. With
 * `{ per: 'test' }`, a new one for each test, for tests that change the simulator's state.
 */
export function useSimulator(
  options: SimulatorOptions,
  started: (sim: RunningSimulator) => void | Promise<void>,
  { per = 'block' }: { per?: 'block' | 'test' } = {},
): void {
  let sim: RunningSimulator | undefined;
  const [before, after] = per === 'test' ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    sim = await startSimulator(options);
    await started(sim);
  });
  after(() => sim?.close());
}
