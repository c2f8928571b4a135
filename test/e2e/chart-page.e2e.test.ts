import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANDLE_INTERVALS, candlesResponseSchema, marketListResponseSchema, STEP_SECONDS, type CandleInterval } from '@pm/shared/api';
import { until } from '@pm/shared/wait';
import { startStack, untilMarketConnected, type Stack } from '../support/stack.js';
import { launchChromium, watchPage } from '../support/chromium.js';
import { priceTarget, sendChance } from '../support/price-bursts.js';

/**
 * The chart page (/api/v1/charts) in Chromium against the whole stack: reached from the reference
 * page's link, it lists the API's busiest events and loads nothing from elsewhere under its
 * Content-Security-Policy; the candles each chart draws are the ones the candles endpoint answers
 * for that market and interval, for every interval of the picker, with volume bars under them that
 * are the endpoint's volume, and a chance axis that stays within 0-100 % next to a near-certainty;
 * and a price message on the stream moves the chance the page shows. The simulator's random walk is paused and the demo crowd off, so
 * every price change is one this test makes (POST /_sim/book). The screenshot is kept as
 * test-results/chart-page.png.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHARTS = '/api/v1/charts';

let stack: Stack;
let base: string;
let browser: Browser | undefined;

/** What the page's charts hold (its `window.chartPage.drawn()`); this file is compiled without the DOM's types. */
interface Drawn {
  market_id: string;
  interval: CandleInterval;
  start: number;
  end: number;
  candles: Array<{ t: number; open: number; high: number; low: number; close: number }>;
  /** The volume pane's bars: per candle with a volume figure, its shares. */
  volume: Array<{ t: number; volume: number | null }>;
  /** The chance axis's visible range. */
  axis: { from: number; to: number } | null;
}
const drawnOn = (page: Page) => page.evaluate(() => (globalThis as unknown as { chartPage: { drawn(): unknown } }).chartPage.drawn()) as Promise<Drawn[]>;

const chanceOf = (page: Page, selector: string) => page.$eval(selector, (node) => (node as unknown as { dataset: { chance: string } }).dataset.chance);

beforeAll(async () => {
  // The page and its charts are read many times over; the 120-a-minute limit is not what this tests.
  stack = await startStack({ env: { CROWD: '0', SIM_PAUSED: '1', RATE_LIMIT_PER_MINUTE: '100000' } });
  base = stack.apiUrl;
  await untilMarketConnected(stack);
  // A market's past is fetched from the exchange on first sight, a few seconds after the stack is up:
  // until it lands, the busiest event's charts would be empty.
  await until(
    "the busiest event's hourly candles",
    async () => {
      const list = marketListResponseSchema.parse(await (await fetch(`${base}/api/v1/markets?limit=1`)).json());
      const slug = list.events[0]?.slug;
      if (slug === undefined) return false;
      const candles = candlesResponseSchema.parse(await (await fetch(`${base}/api/v1/markets/${encodeURIComponent(slug)}/candles?interval=1h`)).json());
      return candles.markets.some((m) => m.candles.length > 0);
    },
    { timeoutMs: 60_000, everyMs: 500, context: () => stack.logs() },
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A new page on the chart page, its first event drawn. */
async function openCharts(hash = ''): Promise<Page> {
  const page = await browser!.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`${base}${CHARTS}${hash}`);
  await page.waitForSelector('#charts[data-state="drawn"]', { timeout: 20_000 });
  return page;
}

describe('the chart page', () => {
  it('is linked from the reference page, lists the busiest events and loads nothing from elsewhere', async () => {
    const page = await browser!.newPage({ viewport: { width: 1400, height: 1000 } });
    const { foreign, errors, violations } = await watchPage(page, base);
    await page.goto(`${base}/api/v1/docs`);
    const [res] = await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === CHARTS), page.click(`#chart-page-link a[href="${CHARTS}"]`)]);
    expect(res.status()).toBe(200);
    expect(res.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers()['content-security-policy']).toContain("style-src 'self';");
    await page.waitForSelector('#charts[data-state="drawn"]', { timeout: 20_000 });

    // The busiest events, in the API's order, each with its markets' chances as the API shows them.
    const list = marketListResponseSchema.parse(await (await fetch(`${base}/api/v1/markets?limit=24`)).json());
    expect(list.events.length).toBeGreaterThan(0);
    const listed = await page.$$eval('#events .event-card', (cards) => cards.map((c) => (c as unknown as { dataset: { slug: string } }).dataset.slug));
    expect(listed).toEqual(list.events.map((e) => e.slug));
    const first = list.events[0]!;
    const shown = await page.$$eval(`#events .event-card[data-slug="${first.slug}"] .chance`, (nodes) =>
      nodes.map((n) => {
        const d = (n as unknown as { dataset: Record<string, string> }).dataset;
        return { market: d['marketId'], outcome: Number(d['outcomeIndex']), chance: Number(d['chance']) };
      }),
    );
    expect(shown).toEqual(first.markets.flatMap((m) => m.outcomes.map((o, i) => ({ market: m.id, outcome: i, chance: o.chance }))));

    // With no event asked for, the first one is shown, a chart per market, and the address says so.
    expect(await page.getAttribute(`#events .event-card[data-slug="${first.slug}"]`, 'aria-current')).toBe('true');
    expect(new URL(page.url()).hash).toBe(`#event=${encodeURIComponent(first.slug)}&interval=1h`);
    expect(await page.locator('#charts .market-chart canvas').count()).toBeGreaterThan(0);
    expect(await page.textContent('#event-title')).toBe(first.title);

    mkdirSync(path.join(root, 'test-results'), { recursive: true });
    // What a visitor sees first (the list runs on below).
    await page.screenshot({ path: path.join(root, 'test-results/chart-page.png') });
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  });

  it("draws the API's candles, for every interval the picker offers", async () => {
    const page = await openCharts();
    const slug = new URLSearchParams(new URL(page.url()).hash.slice(1)).get('event')!;
    for (const interval of CANDLE_INTERVALS) {
      await page.click(`.intervals button[data-interval="${interval}"]`);
      expect(await page.getAttribute(`.intervals button[data-interval="${interval}"]`, 'aria-pressed')).toBe('true');
      let mismatch = '';
      // The history is still being filled meanwhile (a minute's first point, a backfill landing): a
      // window read before differs from one read after, so a difference, or charts with nothing to
      // compare yet, has the page read its candles again (a reload) until the two agree on candles.
      const compared = await until(
        `the page's ${interval} candles to equal the API's`,
        async () => {
          await page.waitForSelector(`#charts[data-state="drawn"][data-interval="${interval}"]`, { timeout: 20_000 });
          const drawn = await drawnOn(page);
          expect(drawn.length).toBeGreaterThan(0);
          const problems: string[] = [];
          for (const chart of drawn) {
            // The chart's window as the page read it, asked for again, this market alone.
            expect(chart.interval).toBe(interval);
            // The chance's candles alone: what the candlestick series draws (the volume has a test of its own).
            const query = new URLSearchParams({ market: chart.market_id, interval, start: String(chart.start), end: String(chart.end), fields: 'ohlc' });
            const res = await fetch(`${base}/api/v1/markets/${encodeURIComponent(slug)}/candles?${query.toString()}`);
            expect(res.status).toBe(200);
            const api = candlesResponseSchema.parse(await res.json());
            expect(api.markets.map((m) => m.market_id)).toEqual([chart.market_id]);
            if (JSON.stringify(chart.candles) !== JSON.stringify(api.markets[0]!.candles)) problems.push(`${chart.market_id}: drew ${chart.candles.length} candles, the API answers ${api.markets[0]!.candles.length}`);
          }
          if (drawn.every((c) => c.candles.length === 0)) problems.push('no candles drawn yet');
          mismatch = problems.join('; ');
          if (problems.length === 0) return drawn;
          await page.reload();
          return undefined;
        },
        { timeoutMs: 60_000, everyMs: 500, context: () => mismatch },
      );
      // The window is the latest one: it reaches the bucket holding now.
      const now = Math.floor(Date.now() / 1000);
      for (const chart of compared) expect(chart.end).toBeGreaterThanOrEqual(now - STEP_SECONDS[interval]);
      // The address keeps the interval: a reload shows the same.
      expect(new URL(page.url()).hash).toContain(`interval=${interval}`);
    }
    await page.close();
  });

  it("draws volume bars under the candles from /candles' volume; the chance axis stays within 0-100 % near a certainty", async () => {
    const list = marketListResponseSchema.parse(await (await fetch(`${base}/api/v1/markets?limit=1`)).json());
    const event = list.events[0]!;
    // One market of the event stands at a near-certainty (its book 97-99 %): the axis must not run past 100 %.
    const target = await priceTarget(stack, event.slug, event.markets[0]!.id);
    await sendChance(stack, target, 0.98);
    // Matches print as the simulator walks its books: walk until the event's minutes hold trades.
    await until(
      `trades in the minute candles of ${event.slug}`,
      async () => {
        await stack.simControl('/_sim/step', { ticks: 20 });
        const res = await fetch(`${base}/api/v1/markets/${encodeURIComponent(event.slug)}/candles?interval=1m`);
        const candles = candlesResponseSchema.parse(await res.json());
        return candles.markets.some((m) => m.candles.some((c) => (c.volume ?? 0) > 0));
      },
      { timeoutMs: 60_000, everyMs: 500, context: () => stack.logs().slice(-2000) },
    );
    // The near-certainty in the API's minute candles first (its point is recorded within a flush).
    const marketId = event.markets[0]!.id;
    await until(
      `a candle at 98 % for market ${marketId}`,
      async () => {
        await sendChance(stack, target, 0.98);
        const query = new URLSearchParams({ market: marketId, interval: '1m', fields: 'ohlc' });
        const api = candlesResponseSchema.parse(await (await fetch(`${base}/api/v1/markets/${encodeURIComponent(event.slug)}/candles?${query.toString()}`)).json());
        return api.markets[0]!.candles.some((c) => (c.high ?? 0) >= 0.97);
      },
      { timeoutMs: 60_000, everyMs: 1_000, context: () => stack.logs().slice(-2000) },
    );
    const page = await openCharts(`#event=${encodeURIComponent(event.slug)}&interval=1m`);
    let mismatch = '';
    const drawn = await until(
      "the page's volume bars to equal the API's volume, the near-certain candle among them",
      async () => {
        await page.waitForSelector('#charts[data-state="drawn"][data-interval="1m"]', { timeout: 20_000 });
        const charts = await drawnOn(page);
        const problems: string[] = [];
        for (const chart of charts) {
          const query = new URLSearchParams({ market: chart.market_id, interval: '1m', start: String(chart.start), end: String(chart.end) });
          const api = candlesResponseSchema.parse(await (await fetch(`${base}/api/v1/markets/${encodeURIComponent(event.slug)}/candles?${query.toString()}`)).json());
          // A bar for every candle with a volume figure; none before the market's trade data begins.
          const want = api.markets[0]!.candles.filter((c) => c.volume !== null && c.volume !== undefined).map((c) => ({ t: c.t, volume: c.volume }));
          if (JSON.stringify(chart.volume) !== JSON.stringify(want)) problems.push(`${chart.market_id}: drew ${JSON.stringify(chart.volume.slice(-3))}, the API answers ${JSON.stringify(want.slice(-3))}`);
        }
        if (!charts.some((c) => c.volume.some((v) => (v.volume ?? 0) > 0))) problems.push('no bar with volume drawn yet');
        if (!charts.some((c) => c.market_id === marketId && c.candles.some((k) => k.high >= 0.97))) problems.push('the near-certain candle is not drawn yet');
        mismatch = problems.join('; ');
        if (problems.length === 0) return charts;
        await page.reload();
        return undefined;
      },
      { timeoutMs: 60_000, everyMs: 500, context: () => mismatch },
    );
    for (const chart of drawn) {
      const times = new Set(chart.candles.map((c) => c.t));
      expect(chart.volume.every((v) => times.has(v.t))).toBe(true);
      if (chart.axis === null) continue;
      expect(chart.axis.from, chart.market_id).toBeGreaterThanOrEqual(0);
      expect(chart.axis.to, chart.market_id).toBeLessThanOrEqual(1);
    }
    const certain = drawn.find((c) => c.market_id === marketId)!;
    expect(certain.axis!.to).toBeGreaterThanOrEqual(0.97);
    await page.close();
  });

  it('moves the chance it shows when a price message arrives on the stream', async () => {
    const list = marketListResponseSchema.parse(await (await fetch(`${base}/api/v1/markets?limit=24`)).json());
    // An event down the list (not the one shown first), so that choosing it is part of the path.
    const event = list.events[Math.min(2, list.events.length - 1)]!;
    const market = event.markets[0]!;
    const target = await priceTarget(stack, event.slug, market.id);
    const page = await openCharts();
    await page.click(`#events .event-card[data-slug="${event.slug}"] a`);
    await page.waitForSelector(`#charts[data-state="drawn"] .market-chart[data-market-id="${market.id}"]`, { timeout: 20_000 });
    await page.waitForSelector('#stream-state[data-state="open"]', { timeout: 10_000 });

    const inList = `#events .event-card[data-slug="${event.slug}"] .chance[data-market-id="${market.id}"][data-outcome-index="0"]`;
    const inChart = `#charts .market-chart[data-market-id="${market.id}"] .chance[data-outcome-index="0"]`;
    const before = Number(await chanceOf(page, inList));
    expect(Number(await chanceOf(page, inChart))).toBe(before);

    // From here on the page may read nothing but the stream: the move must come from a price message.
    const reads: string[] = [];
    page.on('request', (req) => {
      if (!req.url().includes('/api/v1/stream')) reads.push(req.url());
    });
    for (const chance of before >= 0.5 ? [0.23, 0.41] : [0.77, 0.59]) {
      const change = await sendChance(stack, target, chance);
      let shown: string[] = [];
      const at = await until(
        `the page to show ${chance} for market ${market.id}`,
        async () => {
          shown = [await chanceOf(page, inList), await chanceOf(page, inChart)];
          return shown.every((c) => Number(c) === chance) ? Date.now() : undefined;
        },
        { timeoutMs: 5_000, everyMs: 20, context: () => `shown ${shown.join(', ')} (was ${before})\n${stack.logs().slice(-2000)}` },
      );
      expect(at - change.sentAt).toBeLessThanOrEqual(5_000);
      expect(await page.textContent(`${inList} b`)).toBe(`${Math.round(chance * 100)}%`);
    }
    expect(reads).toEqual([]);
    await page.close();
  });
});
