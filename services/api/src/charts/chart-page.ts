import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Router } from 'express';
import { pageCsp, pageRouter } from '../docs/page-router.js';
import { CANDLE_INTERVALS, DEFAULT_CANDLE_INTERVAL, STREAM_PATH } from '@pm/shared/api';

/**
 * The chart page at /api/v1/charts: the busiest open events with their chances kept live from
 * `GET /api/v1/stream`, and for the event chosen a candle chart per market
 * (`/markets/{slug}/candles`) with an interval picker. It reads only the public endpoints, as any
 * client would. The charts are drawn by TradingView's Lightweight Charts, its standalone build
 * served from the npm package by this process (no CDN), as the reference page serves Swagger UI.
 *
 * The page's script and stylesheet are plain files (static/), found through this package's own
 * directory rather than beside this module: the bundle (scripts/lib/build.ts) runs from dist/.
 */

export const CHARTS_PATH = '/api/v1/charts';
/** The reference page, linked from the chart page's top bar. */
const REFERENCE_PATH = '/api/v1/docs';

const require = createRequire(import.meta.url);
const chartLibrary = path.join(path.dirname(require.resolve('lightweight-charts/package.json')), 'dist');
const ownFiles = path.join(path.dirname(require.resolve('@pm/api/package.json')), 'src/charts/static');

/** The library's file the page loads: the standalone build defines `window.LightweightCharts`. */
const LIBRARY_FILE = 'lightweight-charts.standalone.production.js';
const OWN_FILES = new Set(['charts.js', 'charts.css']);

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The picker's buttons, one per candle interval of the API, the default pressed. */
const intervalButtons = CANDLE_INTERVALS.map(
  (i) => `<button type="button" data-interval="${i}" aria-pressed="${i === DEFAULT_CANDLE_INTERVAL}">${i}</button>`,
).join('');

/**
 * The page: its structure only; charts.js fills it. What the script needs of the API's vocabulary
 * (the stream's path, the default interval) comes from the shared definitions through data attributes.
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Prediction markets — live charts</title>
  <link rel="stylesheet" href="${CHARTS_PATH}/charts.css">
</head>
<body data-stream="${escapeHtml(STREAM_PATH)}" data-default-interval="${DEFAULT_CANDLE_INTERVAL}">
  <header class="top">
    <h1>Prediction markets <span>live charts</span></h1>
    <p class="stream-state" id="stream-state" data-state="connecting"><span class="dot"></span><span id="stream-state-text">connecting…</span></p>
    <nav><a href="${REFERENCE_PATH}">API reference</a> <a href="/api/v1/markets">JSON</a></nav>
  </header>
  <main>
    <section class="events" aria-labelledby="events-title">
      <h2 id="events-title">Busiest events</h2>
      <ol id="events" aria-busy="true"></ol>
    </section>
    <section class="event" id="event" aria-live="polite">
      <header class="event-head">
        <div>
          <h2 id="event-title">…</h2>
          <p id="event-meta" class="meta"></p>
        </div>
        <div class="intervals" role="group" aria-label="Candle interval">${intervalButtons}</div>
      </header>
      <p id="event-note" class="meta"></p>
      <div id="charts" class="charts" data-state="empty"></div>
    </section>
  </main>
  <footer>
    <p>Chances are the displayed chance of each outcome (0–100 %); candles follow a market's first outcome, times in UTC.
    Read from <code>/api/v1/markets</code>, <code>/api/v1/markets/{slug}/candles</code> and <code>${escapeHtml(STREAM_PATH)}</code>.</p>
    <p>Charts drawn with TradingView Lightweight Charts™, Copyright (c) TradingView, Inc.,
    <a href="https://www.tradingview.com/">https://www.tradingview.com/</a> (Apache License 2.0).</p>
  </footer>
  <script src="${CHARTS_PATH}/${LIBRARY_FILE}"></script>
  <script type="module" src="${CHARTS_PATH}/charts.js"></script>
</body>
</html>
`;

/**
 * The page's Content-Security-Policy: everything from this origin only, no inline script and no
 * inline style (the chart library sets element styles from script, which a policy allows; its
 * attribution logo would add a <style> element, so the page turns the logo off and credits the
 * library in its footer instead), no framing.
 */
export const CHARTS_CSP = pageCsp({ inlineStyles: false });

/** The chart page, its script and stylesheet, and the chart library's file, all under CHARTS_PATH. */
export function chartPage(): Router {
  const router = pageRouter(CHARTS_PATH, CHARTS_CSP, PAGE);
  // Only the named files: the directories hold others (the library's other builds, its typings).
  const own = express.static(ownFiles, { index: false, maxAge: '5m', fallthrough: true });
  const library = express.static(chartLibrary, { index: false, maxAge: '1d', fallthrough: true });
  router.use((req, res, next) => {
    const name = req.path.slice(1);
    if (OWN_FILES.has(name)) return own(req, res, next);
    if (name === LIBRARY_FILE) return library(req, res, next);
    next();
  });
  return router;
}
