import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { CANDLE_INTERVALS, STREAM_PATH } from '@pm/shared/api';
import { apiRedis, startApp, type RunningApp } from '../testing/fixtures.js';
import { CHARTS_CSP, CHARTS_PATH } from './chart-page.js';

/**
 * The chart page as the API serves it: the page, its script and stylesheet and the chart library's
 * file from its npm package, each with its content type, the page's Content-Security-Policy and
 * nosniff; nothing else of the package's directory; and the reference page links to it. (That the
 * page draws the API's candles and moves with the stream: test/e2e/chart-page.e2e.test.ts.)
 */

let testRedis: TestRedis;
let redis: Redis;
let api: RunningApp;

beforeAll(async () => {
  testRedis = await createTestRedis('api_charts');
  redis = await apiRedis(testRedis.url);
  api = await startApp({ redis, env: { REDIS_PREFIX: testRedis.prefix, RATE_LIMIT_PER_MINUTE: '100000' } });
});

afterAll(async () => {
  await api?.close();
  redis?.disconnect();
  await testRedis?.cleanup();
});

const get = (p: string) => fetch(`${api.base}${p}`);
const libraryFile = path.join(path.dirname(createRequire(import.meta.url).resolve('lightweight-charts/package.json')), 'dist/lightweight-charts.standalone.production.js');

describe(`the chart page at ${CHARTS_PATH}`, () => {
  it('serves the page as HTML under its policy, loading only files of this origin', async () => {
    for (const target of [CHARTS_PATH, `${CHARTS_PATH}/`]) {
      const res = await get(target);
      expect(res.status, target).toBe(200);
      expect(res.headers.get('content-type'), target).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy'), target).toBe(CHARTS_CSP);
      expect(res.headers.get('x-content-type-options'), target).toBe('nosniff');
      const html = await res.text();
      const loaded = [...html.matchAll(/<(?:script|link)[^>]*(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
      expect(loaded.sort()).toEqual([`${CHARTS_PATH}/charts.css`, `${CHARTS_PATH}/charts.js`, `${CHARTS_PATH}/lightweight-charts.standalone.production.js`]);
      // No inline script or style for the policy to refuse.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html).not.toMatch(/<style|\sstyle=/);
      expect(html).toContain(`data-stream="${STREAM_PATH}"`);
      for (const interval of CANDLE_INTERVALS) expect(html).toContain(`data-interval="${interval}"`);
    }
    expect(CHARTS_CSP).toContain("script-src 'self'");
    expect(CHARTS_CSP).toContain("style-src 'self';");
    expect(CHARTS_CSP).toContain("frame-ancestors 'none'");
  });

  it.each([
    ['charts.js', /^(text|application)\/javascript; charset=utf-8$/],
    ['charts.css', /^text\/css; charset=utf-8$/],
    ['lightweight-charts.standalone.production.js', /^(text|application)\/javascript; charset=utf-8$/],
  ])('serves %s with its content type, the policy and nosniff', async (name, type) => {
    const res = await get(`${CHARTS_PATH}/${name}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(type);
    expect(res.headers.get('content-security-policy')).toBe(CHARTS_CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    expect((await res.text()).length).toBeGreaterThan(0);
  });

  it("serves the chart library's standalone build byte for byte from its npm package", async () => {
    const res = await get(`${CHARTS_PATH}/lightweight-charts.standalone.production.js`);
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(libraryFile))).toBe(true);
  });

  it.each(['lightweight-charts.development.mjs', 'lightweight-charts.standalone.development.js', 'typings.d.ts', 'package.json', 'chart-page.ts', 'static/charts.js', '..%2Fchart-page.ts'])(
    'answers %s with the JSON 404: only the files the page loads are served',
    async (name) => {
      const res = await get(`${CHARTS_PATH}/${name}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/json');
    },
  );

  it('is linked from the reference page', async () => {
    const html = await (await get('/api/v1/docs')).text();
    expect(html).toContain(`<a href="${CHARTS_PATH}">`);
  });
});
