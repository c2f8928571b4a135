import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventSource } from 'eventsource';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { priceMessageSchema } from '@pm/shared/api';
import { freePort, startStack, untilMarketConnected, type Stack } from '../support/stack.js';
import { until } from '@pm/shared/wait';
import { priceTargets, sendChance, type PriceTarget } from '../support/price-bursts.js';

/**
 * through the whole stack (simulator → ingestor → Redis Stream → API), a price
 * change reaches a real EventSource client (the `eventsource` package) and Chromium within 1 s; a
 * client that drops and comes back with its last id — to ANOTHER API process reading the same Redis —
 * receives exactly what a client that never dropped received meanwhile. The simulator's walk is
 * paused: every price change here is one the test made (POST /_sim/book).
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = '/usr/bin/chromium';

let stack: Stack;
let second: ChildProcess | undefined;
let secondUrl: string;
let secondLogs = '';
let browser: Browser | undefined;
let targets: PriceTarget[];
const sources: EventSource[] = [];

/** What the test keeps on the page's global object (this file is compiled without the DOM's types). */
interface InPage {
  EventSource: new (url: string) => { addEventListener(type: string, listener: (e: { data: string }) => void): void };
  prices: Array<{ data: string; at: number }>;
  opened?: boolean;
}

interface Received {
  id: string;
  data: string;
  /** Date.now() on receipt. */
  at: number;
}

/** An EventSource (the `eventsource` package) collecting price messages; `lastEventId` sent as the header when given. */
function listen(url: string, lastEventId?: string): { source: EventSource; got: Received[]; opened: Promise<void> } {
  const got: Received[] = [];
  const source = new EventSource(url, {
    fetch: (input, init) => fetch(input, lastEventId === undefined ? init : { ...init, headers: { ...init?.headers, 'Last-Event-ID': lastEventId } }),
  });
  sources.push(source);
  source.addEventListener('price', (e) => got.push({ id: e.lastEventId, data: e.data, at: Date.now() }));
  const opened = new Promise<void>((resolve) => source.addEventListener('open', () => resolve(), { once: true }));
  return { source, got, opened };
}

const priceOf = (r: { data: string }) => priceMessageSchema.parse(JSON.parse(r.data));
const waitFor = <T>(what: string, check: () => T | undefined | false, timeoutMs = 10_000) =>
  until(what, async () => check(), { timeoutMs, everyMs: 10, context: () => `${stack.logs()}\n${secondLogs}` });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium), as .ci/run does`);
  stack = await startStack({ env: { CROWD: '0', SIM_PAUSED: '1' } });
  await untilMarketConnected(stack);
  targets = await priceTargets(stack, 4);
  expect(targets.length).toBe(4);

  // A second API process on the same Redis (another replica, as far as a client can tell).
  const port = await freePort();
  secondUrl = `http://127.0.0.1:${port}`;
  second = spawn(process.execPath, ['--import', 'tsx', 'services/api/src/main.ts'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', PRETTY_LOGS: '0', REDIS_URL: stack.redisUrl, REDIS_PREFIX: stack.prefix, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  second.stdout?.on('data', (d: Buffer) => (secondLogs += d.toString()));
  second.stderr?.on('data', (d: Buffer) => (secondLogs += d.toString()));
  await until('the second API process', () => fetch(`${secondUrl}/healthz`).then((r) => r.ok), { timeoutMs: 30_000, everyMs: 100, context: () => secondLogs });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
}, 120_000);

afterAll(async () => {
  for (const s of sources) s.close();
  await browser?.close();
  if (second && second.exitCode === null) {
    const exited = new Promise((r) => second!.once('exit', r));
    second.kill('SIGTERM');
    await exited;
  }
  await stack?.stop();
});

let step = 0;
/** A chance for the next change: never the one shown before, in [0.10, 0.89]. */
const nextChance = () => (10 + ((step++ * 37) % 80)) / 100;

describe('GET /api/v1/stream through the stack', () => {
  it('delivers a price change to an EventSource client and to Chromium (the docs page too) within 1 s', async () => {
    const target = targets[0]!;
    const url = `${stack.apiUrl}/api/v1/stream?topics=price&events=${encodeURIComponent(target.slug)}`;
    const node = listen(url);
    await node.opened;

    const page = await browser!.newPage();
    await page.goto(`${stack.apiUrl}/api/v1/docs/`);
    // In the page: its own EventSource (functions, not strings: the docs page's CSP forbids eval).
    await page.evaluate((streamUrl) => {
      const w = globalThis as unknown as InPage;
      w.prices = [];
      const source = new w.EventSource(streamUrl);
      source.addEventListener('open', () => (w.opened = true));
      source.addEventListener('price', (e) => w.prices.push({ data: e.data, at: Date.now() }));
    }, url);
    await page.waitForFunction(() => (globalThis as unknown as InPage).opened === true);
    await page.waitForSelector('#live-stream-state:text("open")');

    let chance = nextChance();
    const change = await sendChance(stack, target, chance);
    const match = (r: { data: string }) => {
      const p = priceOf(r);
      return p.market_id === target.marketId && p.outcome_index === 0 && p.chance === chance;
    };
    const inNode = await waitFor('the EventSource client to get the price', () => node.got.find(match), 5_000);
    const browserGot = await page.waitForFunction(
      ([marketId, c]) =>
        (globalThis as unknown as InPage).prices.find((p) => {
          const d = JSON.parse(p.data) as { market_id: string; chance: number };
          return d.market_id === marketId && d.chance === c;
        }),
      [target.marketId, chance] as const,
      { timeout: 5_000 },
    );
    const seenInBrowser = (await browserGot.jsonValue()) as { data: string; at: number };
    expect(priceOf(inNode)).toMatchObject({ event: target.slug, market_id: target.marketId, outcome: expect.any(String) });
    expect(inNode.at - change.sentAt).toBeLessThanOrEqual(1_000);
    expect(seenInBrowser.at - change.sentAt).toBeLessThanOrEqual(1_000);
    // The docs page's own live panel shows it too.
    chance = nextChance();
    await sendChance(stack, target, chance);
    await page.waitForSelector(`#live-stream-messages li[data-event="price"]:has-text('"chance":${chance}')`, { timeout: 5_000 });
    await page.close();
    node.source.close();
  });

  it('resumes on another API process with exactly what a client that never dropped received meanwhile', async () => {
    const url = (base: string) => `${base}/api/v1/stream?topics=price`;
    const watcher = listen(url(stack.apiUrl));
    const dropping = listen(url(stack.apiUrl));
    await Promise.all([watcher.opened, dropping.opened]);

    await sendChance(stack, targets[1]!, nextChance());
    await waitFor('both clients to get the first change', () => dropping.got.length >= 1 && watcher.got.length >= 1);
    dropping.source.close();
    const lastId = dropping.got[dropping.got.length - 1]!.id;

    // Missed while away: changes on three events.
    for (let i = 0; i < 9; i++) await sendChance(stack, targets[1 + (i % 3)]!, nextChance());
    const missedUntil = await waitFor('the watcher to get them', () => watcher.got.length >= dropping.got.length + 9 && watcher.got.length);

    const back = listen(url(secondUrl), lastId);
    await back.opened;
    // And one after coming back, live.
    const final = nextChance();
    await sendChance(stack, targets[1]!, final);
    const isFinal = (r: Received) => priceOf(r).chance === final && priceOf(r).market_id === targets[1]!.marketId;
    await waitFor('both to get the live change', () => watcher.got.some(isFinal) && back.got.some(isFinal));

    // Up to the live change (the walk is paused, but a later message must not race the comparison).
    const upToFinal = (got: Received[]) => got.slice(0, got.findIndex(isFinal) + 1);
    const after = upToFinal(watcher.got.slice(watcher.got.findIndex((r) => r.id === lastId) + 1));
    expect(after.length).toBeGreaterThanOrEqual(missedUntil - dropping.got.length + 1);
    expect(upToFinal(back.got).map((r) => r.id)).toEqual(after.map((r) => r.id));
    expect(upToFinal(back.got).map((r) => r.data)).toEqual(after.map((r) => r.data));
    watcher.source.close();
    back.source.close();
  });
});
