// The chart page's script (served by chart-page.ts at /api/v1/charts/charts.js). It reads the public
// endpoints only, as any client would: the busiest events (/api/v1/markets), the chosen event
// (/api/v1/markets/{slug}) and its candles with their volume (/candles), and keeps every chance
// shown live from the stream's price messages. The charts are TradingView's Lightweight Charts (window.LightweightCharts,
// loaded before this module). Text goes in as text (textContent), never as HTML.

const LC = window.LightweightCharts;
const STREAM_PATH = document.body.dataset.stream;
const DEFAULT_INTERVAL = document.body.dataset.defaultInterval;
/** The picker's intervals, as the page was served them (the API's candle intervals). */
const INTERVALS = [...document.querySelectorAll('.intervals button')].map((b) => b.dataset.interval);

/** Events in the list: the trending list's first page (its default size). */
const LIST_LIMIT = 24;
/** The candles endpoint answers at most 20 markets at once: one request draws every chart. */
const MAX_CHARTS = 20;
/** The list and the candles are read again this often (the chances move with the stream meanwhile). */
const REFRESH_MS = 60_000;
/** After a stream the API refused (a 429, say), the next try; an open stream reconnects by itself. */
const STREAM_RETRY_MS = 5_000;

const COLORS = { up: '#26a69a', down: '#ef5350', text: '#8b949e', grid: '#21262d', line: '#2a313c', panel: '#161b22', now: '#58a6ff', upVolume: 'rgba(38, 166, 154, 0.5)', downVolume: 'rgba(239, 83, 80, 0.5)' };

/** The volume pane's share of a chart's height (the candles have the rest). */
const VOLUME_PANE = 0.25;

/**
 * The chance axis's range for candles spanning [low, high]: a little room around them, but never
 * past 0 % or 100 % (the library's own autoscale pads by a share of the pane, which near a
 * certainty ran the axis to 104 %). Returned with no margins of its own: this is the whole axis.
 */
function chanceRange(auto) {
  const range = auto()?.priceRange;
  if (!range) return null;
  const pad = Math.max(0.005, (range.maxValue - range.minValue) * 0.08);
  return { priceRange: { minValue: Math.max(0, range.minValue - pad), maxValue: Math.min(1, range.maxValue + pad) }, margins: { above: 0, below: 0 } };
}

const state = {
  /** The event shown, its slug; null before the list has given one. */
  slug: null,
  interval: DEFAULT_INTERVAL,
  /** Slugs of the events listed. */
  listed: [],
  /** market id → { article, chart, series, line, empty, window }: the charts of the event shown. */
  charts: new Map(),
  /** Bumped per request, so that an answer overtaken by a newer request is dropped. */
  seq: { list: 0, event: 0, candles: 0 },
  /** `${market}:${outcome}` → { chance, at }: the last price message per outcome (at: performance.now()). */
  live: new Map(),
  stream: { source: null, key: null, lastEventId: null, retry: null },
};

const $ = (id) => document.getElementById(id);

/** An element with attributes and children (strings become text nodes). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  node.append(...children.filter((c) => c !== undefined && c !== null));
  return node;
}

/** A chance as the API writes it (`odds.percent`): whole percent, one decimal where whole would say 0 % or 100 % of a chance that is neither. */
function percent(chance) {
  const whole = Math.round(chance * 100);
  if ((whole === 0 && chance > 0) || (whole === 100 && chance < 1)) return `${(Math.round(chance * 1000) / 10).toFixed(1)}%`;
  return `${whole}%`;
}

const money = new Intl.NumberFormat('en', { style: 'currency', currency: 'USD', notation: 'compact', maximumFractionDigits: 1 });

/** The page's address for an event and interval: the hash, so a chart can be linked to and reloaded. */
const hashFor = (slug, interval) => `#${new URLSearchParams({ event: slug, interval }).toString()}`;

/** GET a JSON body of the API; its error message (the API's `error.message`) when it is not a 200. */
async function getJson(path) {
  // no-cache: revalidated (a 304 costs the API nothing) rather than a copy up to max-age old.
  const res = await fetch(path, { cache: 'no-cache', headers: { accept: 'application/json' } });
  const body = await res.json().catch(() => null);
  if (!res.ok || !body || body.ok !== true) throw new Error(body?.error?.message ?? `${path} answered ${res.status}`);
  return body;
}

// ---- chances ----------------------------------------------------------------------------------

const keyOf = (marketId, index) => `${marketId}:${index}`;

/**
 * The chance to show for an outcome read at `readAt` (performance.now() when its request left): a
 * price message received after that is newer than the answer, so it stands.
 */
function shownChance(marketId, index, chance, readAt) {
  const heard = state.live.get(keyOf(marketId, index));
  return heard && heard.at > readAt ? heard.chance : chance;
}

function chanceEl(marketId, index, name, chance) {
  const node = el('span', { class: 'chance', 'data-market-id': marketId, 'data-outcome-index': index, 'data-chance': chance }, el('span', { class: 'name' }, name), el('b', {}, percent(chance)));
  node.addEventListener('animationend', () => node.classList.remove('up', 'down'));
  return node;
}

function setChance(node, chance) {
  const before = Number(node.dataset.chance);
  if (before === chance) return;
  node.dataset.chance = String(chance);
  node.querySelector('b').textContent = percent(chance);
  node.classList.remove('up', 'down');
  // Restarts the flash: the class is read back once removed (a reflow) before it is set again.
  void node.offsetWidth;
  node.classList.add(chance > before ? 'up' : 'down');
}

function onPrice(message) {
  state.live.set(keyOf(message.market_id, message.outcome_index), { chance: message.chance, at: performance.now() });
  const selector = `.chance[data-market-id="${CSS.escape(message.market_id)}"][data-outcome-index="${message.outcome_index}"]`;
  for (const node of document.querySelectorAll(selector)) setChance(node, message.chance);
  // The charts follow a market's first outcome: its line marks where the chance is now.
  if (message.outcome_index === 0) state.charts.get(message.market_id)?.line.applyOptions({ price: message.chance });
}

// ---- the stream -------------------------------------------------------------------------------

function streamState(name, text) {
  $('stream-state').dataset.state = name;
  $('stream-state-text').textContent = text;
}

/**
 * One EventSource on the price messages of the events on the page. When that set changes it is
 * opened again from the last id received, so nothing sent meanwhile is missed.
 */
function connectStream() {
  const slugs = [...new Set([...state.listed, state.slug].filter(Boolean))].sort().slice(0, 100);
  const key = slugs.join(',');
  const { stream } = state;
  if (stream.source && stream.source.readyState !== EventSource.CLOSED && stream.key === key) return;
  stream.source?.close();
  clearTimeout(stream.retry);
  stream.key = key;
  const params = new URLSearchParams({ topics: 'price' });
  if (slugs.length > 0) params.set('events', key);
  if (stream.lastEventId) params.set('last_event_id', stream.lastEventId);
  const source = new EventSource(`${STREAM_PATH}?${params.toString()}`);
  stream.source = source;
  source.addEventListener('open', () => streamState('open', 'live'));
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED) {
      // Refused (e.g. too many streams): EventSource gives up; this page tries again.
      streamState('error', 'stream closed; retrying');
      stream.retry = setTimeout(connectStream, STREAM_RETRY_MS);
    } else {
      streamState('connecting', 'reconnecting…');
    }
  });
  source.addEventListener('price', (e) => {
    stream.lastEventId = e.lastEventId || stream.lastEventId;
    onPrice(JSON.parse(e.data));
  });
  // Messages were missed (the id resumed from is too old): read everything again.
  source.addEventListener('reset', () => {
    void loadList();
    if (state.slug) void loadCandles();
  });
}

// ---- the list ---------------------------------------------------------------------------------

function eventCard(event, readAt) {
  const markets = event.markets.map((m) =>
    el('li', {}, el('span', { class: 'question', title: m.question }, m.question), el('span', { class: 'chances' }, ...m.outcomes.map((o, i) => chanceEl(m.id, i, o.name, shownChance(m.id, i, o.chance, readAt))))),
  );
  const count = `${event.market_count} market${event.market_count === 1 ? '' : 's'}`;
  const card = el('li', { class: 'event-card', 'data-slug': event.slug, 'aria-current': event.slug === state.slug }, el('a', { href: hashFor(event.slug, state.interval) }, event.title), el('p', { class: 'meta' }, `${event.category} · ${count}`), el('ul', {}, ...markets));
  card.addEventListener('click', (e) => {
    if (!e.target.closest('a')) location.hash = hashFor(event.slug, state.interval);
  });
  return card;
}

async function loadList() {
  const seq = ++state.seq.list;
  const readAt = performance.now();
  const list = $('events');
  try {
    const body = await getJson(`/api/v1/markets?limit=${LIST_LIMIT}`);
    if (seq !== state.seq.list) return;
    state.listed = body.events.map((e) => e.slug);
    list.replaceChildren(...body.events.map((e) => eventCard(e, readAt)));
    if (body.events.length === 0) list.replaceChildren(el('li', { class: 'meta' }, 'No open events yet.'));
    $('events-title').textContent = body.live ? 'Busiest events' : 'Busiest events (prices last known: the feed is not live)';
  } catch (err) {
    if (seq !== state.seq.list) return;
    list.replaceChildren(el('li', { class: 'error' }, `The list could not be read: ${err.message}`));
  }
  list.setAttribute('aria-busy', 'false');
  connectStream();
}

function markSelected() {
  for (const card of document.querySelectorAll('.event-card')) card.setAttribute('aria-current', String(card.dataset.slug === state.slug));
  for (const a of document.querySelectorAll('.event-card a')) a.setAttribute('href', hashFor(a.closest('.event-card').dataset.slug, state.interval));
  for (const b of document.querySelectorAll('.intervals button')) b.setAttribute('aria-pressed', String(b.dataset.interval === state.interval));
}

// ---- the event and its charts -----------------------------------------------------------------

function createMarketChart(market, readAt) {
  const first = market.outcomes[0];
  const chance = first ? shownChance(market.id, 0, first.chance, readAt) : null;
  const change = market.change_24h;
  const plot = el('div', { class: 'plot' });
  const empty = el('p', { class: 'empty', hidden: '' }, 'No price history in this window yet.');
  const article = el(
    'article',
    { class: 'market-chart', 'data-market-id': market.id },
    el(
      'header',
      {},
      el('h3', {}, market.question),
      el('span', {}, first ? chanceEl(market.id, 0, first.name, chance) : null, ' ', el('span', { class: `change ${change > 0 ? 'up' : change < 0 ? 'down' : ''}`, title: 'change over 24 hours' }, `${change > 0 ? '+' : ''}${(change * 100).toFixed(1)} pts 24h`)),
    ),
    plot,
    empty,
  );
  $('charts').append(article);
  const chart = LC.createChart(plot, {
    autoSize: true,
    // The library's logo would add a <style> element, which the page's CSP refuses: the footer credits it.
    layout: { background: { type: LC.ColorType.Solid, color: COLORS.panel }, textColor: COLORS.text, fontSize: 11, attributionLogo: false },
    grid: { vertLines: { color: COLORS.grid }, horzLines: { color: COLORS.grid } },
    // No margins: the chance axis is exactly the range chanceRange gives, inside 0-100 %.
    rightPriceScale: { borderColor: COLORS.line, scaleMargins: { top: 0, bottom: 0 } },
    timeScale: { borderColor: COLORS.line, timeVisible: true, secondsVisible: false },
    crosshair: { mode: LC.CrosshairMode.Normal },
  });
  const series = chart.addSeries(LC.CandlestickSeries, {
    upColor: COLORS.up,
    downColor: COLORS.down,
    wickUpColor: COLORS.up,
    wickDownColor: COLORS.down,
    borderVisible: false,
    priceLineVisible: false,
    lastValueVisible: false,
    priceFormat: { type: 'custom', minMove: 0.0001, formatter: (p) => `${(p * 100).toFixed(1)}%` },
    autoscaleInfoProvider: chanceRange,
  });
  // Shares traded per candle, in a pane of their own under the candles (so they never cover a wick).
  const volume = chart.addSeries(LC.HistogramSeries, { priceFormat: { type: 'volume' }, priceLineVisible: false, lastValueVisible: false }, 1);
  chart.panes()[0].setStretchFactor(1 - VOLUME_PANE);
  chart.panes()[1].setStretchFactor(VOLUME_PANE);
  const line = series.createPriceLine({ price: chance ?? 0, color: COLORS.now, lineWidth: 1, lineStyle: LC.LineStyle.Dotted, axisLabelVisible: chance !== null, title: 'now' });
  state.charts.set(market.id, { article, chart, series, volume, line, empty, window: null });
}

function clearCharts() {
  for (const { chart } of state.charts.values()) chart.remove();
  state.charts.clear();
  $('charts').replaceChildren();
}

async function selectEvent(slug) {
  state.slug = slug;
  markSelected();
  connectStream();
  const seq = ++state.seq.event;
  const readAt = performance.now();
  $('event-note').textContent = '';
  $('event-note').classList.remove('error');
  let event;
  try {
    event = (await getJson(`/api/v1/markets/${encodeURIComponent(slug)}`)).event;
  } catch (err) {
    if (seq !== state.seq.event) return;
    clearCharts();
    $('event-title').textContent = slug;
    $('event-note').textContent = `This event could not be read: ${err.message}`;
    $('event-note').classList.add('error');
    $('charts').dataset.state = 'error';
    return;
  }
  if (seq !== state.seq.event) return;
  clearCharts();
  $('event-title').textContent = event.title;
  const closes = event.closes_at ? ` · closes ${new Date(event.closes_at).toUTCString().replace(/:\d\d GMT$/, ' UTC')}` : '';
  $('event-meta').replaceChildren(`${event.category} · ${money.format(event.volume)} traded${closes} · `, el('a', { href: `/api/v1/markets/${encodeURIComponent(slug)}` }, 'JSON'));
  const open = event.markets.filter((m) => !m.closed);
  const shown = (open.length > 0 ? open : event.markets).slice(0, MAX_CHARTS);
  if (shown.length < event.markets.length) $('event-note').textContent = `Charts of ${shown.length} of its ${event.markets.length} markets${open.length > 0 ? ' (open ones first)' : ''}.`;
  for (const market of shown) createMarketChart(market, readAt);
  await loadCandles();
}

/** Every chart of the event shown, drawn from one candles request for the interval picked. */
async function loadCandles() {
  const { slug, interval } = state;
  const ids = [...state.charts.keys()];
  const box = $('charts');
  if (!slug || ids.length === 0) return;
  const seq = ++state.seq.candles;
  box.dataset.state = 'loading';
  const query = new URLSearchParams({ market: ids.join(','), interval });
  let body;
  try {
    body = await getJson(`/api/v1/markets/${encodeURIComponent(slug)}/candles?${query.toString()}`);
  } catch (err) {
    if (seq !== state.seq.candles) return;
    $('event-note').textContent = `The candles could not be read: ${err.message}`;
    $('event-note').classList.add('error');
    box.dataset.state = 'error';
    return;
  }
  if (seq !== state.seq.candles || slug !== state.slug) return;
  for (const m of body.markets) {
    const shown = state.charts.get(m.market_id);
    if (!shown) continue;
    shown.series.setData(m.candles.map((c) => ({ time: c.t, open: c.open, high: c.high, low: c.low, close: c.close })));
    // A bar per candle with its volume, coloured as the candle; none (a gap) before the market's trade data begins.
    shown.volume.setData(m.candles.map((c) => (c.volume === null ? { time: c.t } : { time: c.t, value: c.volume, color: c.close >= c.open ? COLORS.upVolume : COLORS.downVolume })));
    shown.chart.applyOptions({ timeScale: { timeVisible: body.interval !== '1d' } });
    shown.window = { interval: body.interval, start: body.start, end: body.end };
    shown.empty.hidden = m.candles.length > 0;
    shown.article.dataset.candles = String(m.candles.length);
  }
  box.dataset.interval = body.interval;
  box.dataset.state = 'drawn';
}

function pickInterval(interval) {
  if (!INTERVALS.includes(interval) || interval === state.interval) return;
  state.interval = interval;
  markSelected();
  if (state.slug) history.replaceState(null, '', hashFor(state.slug, interval));
  void loadCandles();
}

// ---- the address, and start-up ----------------------------------------------------------------

function fromHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  const interval = params.get('interval');
  return { slug: params.get('event') || null, interval: INTERVALS.includes(interval) ? interval : null };
}

window.addEventListener('hashchange', () => {
  const { slug, interval } = fromHash();
  if (interval && interval !== state.interval) {
    state.interval = interval;
    markSelected();
    if (slug === state.slug) void loadCandles();
  }
  if (slug && slug !== state.slug) void selectEvent(slug);
});

for (const button of document.querySelectorAll('.intervals button')) button.addEventListener('click', () => pickInterval(button.dataset.interval));

/**
 * What the charts hold, for anyone checking them (the browser tests): per market, the candles its
 * series draws and the volume bars under them — the series' own data, not a copy kept aside — the
 * window they were read for, and the chance axis's visible range.
 */
window.chartPage = {
  drawn: () =>
    [...state.charts.entries()].map(([marketId, c]) => ({
      market_id: marketId,
      ...c.window,
      candles: c.series.data().map((d) => ({ t: d.time, open: d.open, high: d.high, low: d.low, close: d.close })),
      volume: c.volume.data().map((d) => ({ t: d.time, volume: d.value ?? null })),
      axis: c.series.priceScale().getVisibleRange(),
    })),
};

async function start() {
  const wanted = fromHash();
  if (wanted.interval) state.interval = wanted.interval;
  markSelected();
  if (wanted.slug) void selectEvent(wanted.slug);
  await loadList();
  if (!state.slug && state.listed.length > 0) {
    history.replaceState(null, '', hashFor(state.listed[0], state.interval));
    await selectEvent(state.listed[0]);
  }
  setInterval(() => {
    if (document.hidden) return;
    void loadList();
    void loadCandles();
  }, REFRESH_MS);
}

void start();
