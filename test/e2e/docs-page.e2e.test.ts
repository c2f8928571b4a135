import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointList } from '@pm/shared/api';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { freePort } from '../support/stack.js';

/**
 * The API reference page, opened in a real browser (Debian's Chromium driven by playwright-core):
 * served by the API itself with nothing from a CDN, it lists every endpoint of the table and shows
 * the table's request examples. The screenshot is kept as test-results/docs-page.png.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let redis: TestRedis;
let api: ChildProcess;
let output = '';
let base: string;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium), as .ci/run does`);
  }
  redis = await createTestRedis('docs_page');
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  api = spawn(process.execPath, ['--import', 'tsx', 'services/api/src/main.ts'], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', PRETTY_LOGS: '0', REDIS_URL: redis.url, REDIS_PREFIX: redis.prefix, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  api.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  api.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!(await fetch(`${base}/healthz`).then((r) => r.ok, () => false))) {
    if (Date.now() > deadline || api.exitCode !== null) throw new Error(`API did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
});

afterAll(async () => {
  await browser?.close();
  if (api && api.exitCode === null) {
    const exited = new Promise((r) => api.once('exit', r));
    api.kill('SIGTERM');
    await exited;
  }
  await redis?.cleanup();
});

describe('API reference at /api/v1/docs', () => {
  it('lists every endpoint of the table, with its request examples, loading nothing from elsewhere', async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    const foreign: string[] = [];
    page.on('request', (req) => {
      if (!req.url().startsWith(base) && !req.url().startsWith('data:')) foreign.push(req.url());
    });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    // The page is served with a Content-Security-Policy: anything it blocks is a failure here.
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content[ -]Security[ -]Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.addInitScript({
      content: "document.addEventListener('securitypolicyviolation', (e) => console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
    });

    const res = await page.goto(`${base}/api/v1/docs`, { waitUntil: 'networkidle' });
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(res?.headers()['x-content-type-options']).toBe('nosniff');
    await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });

    const listed = await page.$$eval('.opblock-summary-path', (els) => els.map((e) => e.getAttribute('data-path') ?? e.textContent ?? ''));
    expect([...listed].sort()).toEqual(endpointList.map((e) => e.path).sort());
    expect(await page.locator('.opblock-get').count()).toBe(endpointList.length);
    expect(await page.textContent('.info .title')).toContain('Prediction market data API');

    // Open one operation: its request examples, from the endpoint table, are shown.
    const odds = endpointList.find((e) => e.path === '/api/v1/odds')!;
    await page.click('.opblock-summary-path[data-path="/api/v1/odds"]');
    await page.waitForSelector('.opblock.is-open .opblock-description-wrapper');
    const description = (await page.textContent('.opblock.is-open .opblock-description-wrapper')) ?? '';
    for (const example of odds.examples) expect(description).toContain(`GET /api/v1/odds?${new URLSearchParams(example.query).toString()}`);

    mkdirSync(path.join(root, 'test-results'), { recursive: true });
    await page.screenshot({ path: path.join(root, 'test-results/docs-page.png'), fullPage: true });

    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  });

  it('serves the renderer from this process, and not the package demo page', async () => {
    const bundle = await fetch(`${base}/api/v1/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${base}/api/v1/docs/index.html`)).status).toBe(404);
    expect((await fetch(`${base}/api/v1/docs/swagger-initializer.js`)).status).toBe(404);
  });
});
