import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointList, EXPORT_FILE_PATH, marketListResponseSchema, STREAM_PATH } from '@pm/shared/api';
import { startStack, type Stack } from '../support/stack.js';
import { launchChromium, watchPage } from '../support/chromium.js';
import { until } from '@pm/shared/wait';

/**
 * The API reference page and the typed client, against the whole stack (simulator, demo crowd,
 * ingestor, worker, API): the page is opened in a real browser (Debian's Chromium driven by
 * playwright-core), served by the API itself with nothing from a CDN; it lists every endpoint of the
 * table, and every example request it offers answers 200 — run through "Try it out" and as listed
 * in each operation's description. The client's README example runs as written. The screenshot is
 * kept as test-results/docs-page.png.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let stack: Stack;
let base: string;
let browser: Browser | undefined;

beforeAll(async () => {
  // Every example is requested several times over; the 120-a-minute limit is not what this tests.
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  base = stack.apiUrl;
  browser = await launchChromium();
  // The docs page fills its examples from the first call listed: wait for the crowd's first one.
  await until('a call listed', async () => {
    const res = await fetch(`${base}/api/v1/calls?limit=1`);
    return res.status === 200 && ((await res.json()) as { count: number }).count > 0;
  }, { timeoutMs: 60_000, everyMs: 500, context: () => stack.logs() });
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('API reference at /api/v1/docs', () => {
  it('lists every endpoint of the table, with its request examples, loading nothing from elsewhere', async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    // The page is served with a Content-Security-Policy: anything it blocks is a failure here.
    const { foreign, errors, violations } = await watchPage(page, base);

    const res = await page.goto(`${base}/api/v1/docs`, { waitUntil: 'networkidle' });
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(res?.headers()['x-content-type-options']).toBe('nosniff');
    await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });

    const listed = await page.$$eval('.opblock-summary-path', (els) => els.map((e) => e.getAttribute('data-path') ?? e.textContent ?? ''));
    // Every endpoint of the table, the event stream and the archive's file route (described beside
    // it: neither has a JSON body).
    expect([...listed].sort()).toEqual([...endpointList.map((e) => e.path), STREAM_PATH, EXPORT_FILE_PATH].sort());
    expect(await page.locator('.opblock-get').count()).toBe(endpointList.length + 2);
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

  it('answers 200 to every example request the page offers', async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${base}/api/v1/docs`, { waitUntil: 'networkidle' });
    await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });

    // The example requests listed in every operation's description, from the document the page
    // loaded (Swagger UI's own copy). A person's record follows their first call by a moment, so
    // this waits for the data to settle.
    // The archive's file route is left out: its example names a day, which a stack started a minute
    // ago has not written (a 404 until then); the archive's own tests download real files.
    const requests = await page.evaluate((skip) => {
      const spec = (globalThis as unknown as { ui: { specSelectors: { specJson(): { toJS(): unknown } } } }).ui.specSelectors.specJson().toJS();
      const paths = (spec as { paths: Record<string, { get: { 'x-examples': Array<{ request: string }> } }> }).paths;
      return Object.entries(paths)
        .filter(([p]) => p !== skip)
        .flatMap(([, p]) => p.get['x-examples'].map((e) => e.request.replace(/^GET /, '')));
    }, EXPORT_FILE_PATH);
    expect(requests.length).toBe(endpointList.reduce((n, e) => n + e.examples.length, 0));
    // The status is all that is asked: the body is dropped at once (a stream's never ends).
    const statusOf = async (r: string) => {
      const controller = new AbortController();
      const res = await fetch(base + r, { signal: controller.signal });
      controller.abort();
      return `${res.status} ${r}`;
    };
    const statuses = () => Promise.all(requests.map(statusOf));
    let failing: string[] = [];
    const answered = await until('every listed example answers 200', async () => {
      const all = await statuses();
      failing = all.filter((s) => !s.startsWith('200 '));
      return failing.length === 0 ? all : undefined;
    }, { timeoutMs: 30_000, everyMs: 1000, context: () => failing.join('\n') });
    expect(answered).toHaveLength(requests.length);

    // "Try it out" → Execute on every operation, with the parameters the page fills in. An operation
    // whose answer is an event stream is left out: Swagger UI shows a response only once it ends.
    const streams = await page.evaluate(() => {
      const spec = (globalThis as unknown as { ui: { specSelectors: { specJson(): { toJS(): unknown } } } }).ui.specSelectors.specJson().toJS();
      const paths = (spec as { paths: Record<string, { get: { operationId: string; responses: Record<string, { content?: Record<string, unknown> }> } }> }).paths;
      return Object.values(paths)
        .filter((p) => Object.keys(p.get.responses['200']?.content ?? {}).some((type) => type.startsWith('text/event-stream')))
        .map((p) => p.get.operationId);
    });
    const operations = (await page.$$eval('.opblock', (blocks) => blocks.map((b) => b.getAttribute('id') ?? '')))
      .filter(Boolean)
      .filter((id) => !streams.some((operationId) => id.endsWith(`-${operationId}`)))
      // The archive's file route: a file, of a day this fresh stack may not have written (see above).
      .filter((id) => !id.endsWith('-getExportFile'));
    const executed: string[] = [];
    for (const id of operations) {
      await page.click(`#${id} .opblock-summary`);
      await page.click(`#${id} .try-out__btn`);
      await page.click(`#${id} .execute`);
      const status = page.locator(`#${id} .live-responses-table tbody .response-col_status`).first();
      await status.waitFor({ timeout: 10_000 });
      const url = (await page.textContent(`#${id} .request-url pre`)) ?? '';
      executed.push(`${(await status.textContent())?.trim()} ${url.replace(base, '')}`);
      // Closed again: Swagger UI re-renders every open operation (and its highlighted body) on each click.
      await page.click(`#${id} .opblock-summary`);
    }
    expect(executed.filter((line) => !line.startsWith('200 '))).toEqual([]);
    // The stream is described beside the table (STREAM_PATH), not in it.
    expect(executed).toHaveLength(endpointList.length + 1 - streams.length);
    await page.close();
  });

  it("runs the typed client's README example as written", async () => {
    const readme = readFileSync(path.join(root, 'clients/typescript/README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(example).toContain("createClient('http://localhost:3000')");
    // The same code, pointed at this stack instead of `npm start`'s port; inside the workspace so `@pm/client` resolves.
    const file = path.join(root, 'clients/typescript/examples', `.readme-run-${process.pid}.ts`);
    writeFileSync(file, example.replace('http://localhost:3000', base));
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: root, encoding: 'utf8', timeout: 30_000 });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const football = marketListResponseSchema.parse(await (await fetch(`${base}/api/v1/markets?category=Football&limit=5`)).json());
      expect(football.events.length).toBeGreaterThan(0);
      for (const event of football.events) expect(run.stdout).toContain(event.title);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('serves the renderer from this process, and not the package demo page', async () => {
    const bundle = await fetch(`${base}/api/v1/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${base}/api/v1/docs/index.html`)).status).toBe(404);
    expect((await fetch(`${base}/api/v1/docs/swagger-initializer.js`)).status).toBe(404);
  });
});
