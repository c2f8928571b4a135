import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Router } from 'express';
import { STREAM_PATH, STREAM_TOPICS } from '@pm/shared/api';
import { CHARTS_PATH } from '../charts/chart-page.js';
import { pageCsp, pageRouter } from './page-router.js';

/**
 * The API reference at /api/v1/docs: Swagger UI (swagger-ui-dist, served from this process, no CDN)
 * rendering the document generated from the endpoint table, with its example requests filled from
 * the data being served (live-docs.ts, at DOCS_PATH/openapi.json), so "Try it out" answers 200,
 * under a small live panel showing `GET /api/v1/stream` as it happens, and a link to the chart page
 * (charts/chart-page.ts).
 *
 * The page and its start-up script are ours rather than the package's index.html, which points at
 * a demo document on the internet. The script is a file, not inline, so a Content-Security-Policy
 * of `script-src 'self'` in front of the API still lets it run.
 */

export const DOCS_PATH = '/api/v1/docs';
/** The docs page's copy of /api/v1/openapi.json, with live example requests. */
const OPENAPI_URL = `${DOCS_PATH}/openapi.json`;

const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);
const assetsDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Prediction market data API — reference</title>
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png">
</head>
<body>
  <p id="chart-page-link" style="font-family: sans-serif; max-width: 1460px; margin: 12px auto 0; padding: 0 20px; font-size: 14px;">The same data to look at: <a href="${CHARTS_PATH}">live charts</a> of the busiest events, their chances moving with the stream and a candle chart per market.</p>
  <section id="live-stream" aria-live="polite" style="font-family: sans-serif; max-width: 1460px; margin: 16px auto 0; padding: 0 20px;">
    <h2 style="font-size: 18px; margin: 0 0 6px;">Live: <code>GET ${STREAM_PATH}</code> <small id="live-stream-state" style="font-weight: normal; color: #666;">connecting…</small></h2>
    <ol id="live-stream-messages" reversed style="font-family: monospace; font-size: 12px; max-height: 180px; overflow-y: auto; margin: 0; padding-left: 28px; background: #f7f7f7;"></ol>
  </section>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;

/**
 * The live panel: the page's own EventSource on the stream, the newest messages first (at most
 * 30), one line each — `event`, then the data's JSON. Text only (textContent), never HTML.
 */
const LIVE = `(function () {
  var list = document.getElementById('live-stream-messages');
  var state = document.getElementById('live-stream-state');
  if (!list || !state || typeof EventSource === 'undefined') return;
  var source = new EventSource(${JSON.stringify(STREAM_PATH)});
  source.onopen = function () { state.textContent = 'open: newest first'; };
  source.onerror = function () { state.textContent = 'reconnecting…'; };
  function show(e) {
    var item = document.createElement('li');
    item.className = 'live-stream-message';
    item.dataset.event = e.type;
    item.textContent = e.type + ' ' + e.data;
    list.insertBefore(item, list.firstChild);
    while (list.children.length > 30) list.removeChild(list.lastChild);
  }
  ${JSON.stringify([...STREAM_TOPICS, 'reset'])}.forEach(function (t) { source.addEventListener(t, show); });
})();
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_URL)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
});
${LIVE}`;

/**
 * The page's Content-Security-Policy: everything from this origin only, no inline script, no
 * framing. Swagger UI sets element styles from script (hence 'unsafe-inline' for styles only) and
 * draws some icons as data: images.
 */
export const DOCS_CSP = pageCsp({ inlineStyles: true });

/** The reference page, its start-up script, its document and Swagger UI's files, all under DOCS_PATH. */
export function docsPage(liveDocument: () => Promise<string>): Router {
  const router = pageRouter(DOCS_PATH, DOCS_CSP, PAGE);
  router.get('/init.js', (_req, res) => {
    res.setHeader('cache-control', 'public, max-age=300');
    res.type('application/javascript').send(INIT);
  });
  router.get('/openapi.json', async (_req, res, next) => {
    try {
      const body = await liveDocument();
      res.setHeader('cache-control', 'public, max-age=15');
      res.type('application/json').send(body);
    } catch (err) {
      next(err);
    }
  });
  // Only what the page loads: the package's own index.html and initializer would load a demo document.
  const assets = express.static(assetsDir, { index: false, maxAge: '1d', fallthrough: true });
  router.use((req, res, next) => (ASSETS.has(req.path.slice(1)) ? assets(req, res, next) : next()));
  return router;
}
