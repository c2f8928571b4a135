/**
 * The soak's read load: a steady rate of GETs over every public endpoint, each sent as from one of
 * many client addresses (X-Forwarded-For; the soak's API runs with TRUST_PROXY=1, so each address has
 * its own rate limit, as many people behind a proxy would), some of them conditional (If-None-Match),
 * and a few streams that drop and resume with Last-Event-ID the way a browser's EventSource does.
 *
 * Counted: answers by status (an answer that is neither 2xx nor 304 is a failure), requests that got
 * no answer, and stream gaps — a resume answered with `event: reset` (the id was past the retention
 * window), or a stream that ended without being closed by the soak.
 * Loopback only; every loop stops with `stop()`.
 */

const PAGE_RANGES = ['1d', '1w', '1m', 'max'] as const;
const SORTS = ['profit', 'right', 'xp', 'week', 'clv', 'brier'] as const;
const WINDOWS = ['day', 'week', 'month', 'all'] as const;
/** A board of a window or field takes every sort but `week` (the week board is profit over the week). */
const FIELD_SORTS = ['profit', 'right', 'xp', 'clv', 'brier'] as const;
const COMBO_STATUSES = ['open', 'won', 'lost', 'void'] as const;
const CALL_STATUSES = ['open', 'won', 'lost', 'void'] as const;

export interface LoadOptions {
  /** The API's base URL (loopback). */
  base: string;
  /** Requests a second. */
  rps: number;
  /** Distinct client addresses the requests come from. */
  clients: number;
  /** Streams held open at once. */
  streams: number;
  /** A stream is closed and resumed after this long (± half). */
  streamResumeMs: number;
  /** At most this many requests in flight; past it a tick's requests are skipped and counted. */
  maxInFlight?: number;
}

export interface LoadCounts {
  requests: number;
  byStatus: Record<string, number>;
  /** Answers neither 2xx nor 304, by `route status` (first few kept). */
  failures: Record<string, number>;
  /** Requests that got no answer (connection refused, reset, timeout). */
  errors: number;
  skipped: number;
  /** Latencies of the last sample window, ms. */
  latencies: number[];
  byRoute: Record<string, number>;
  stream: { opens: number; resumes: number; messages: number; gaps: number; drops: number; refused: number };
}

/** Client address number `i` as an X-Forwarded-For value: loopback-range strings, never a routable host. */
export function clientAddress(i: number): string {
  return `127.1.${(i >> 8) & 255}.${i & 255}`;
}

interface Known {
  slugs: string[];
  marketIds: string[];
  marketsOfSlug: Map<string, string[]>;
  categories: string[];
  leagues: string[];
  callIds: string[];
  handles: string[];
}

const pick = <T>(xs: readonly T[]): T | undefined => (xs.length ? xs[Math.floor(Math.random() * xs.length)] : undefined);

export function startLoad(opts: LoadOptions) {
  const counts: LoadCounts = {
    requests: 0,
    byStatus: {},
    failures: {},
    errors: 0,
    skipped: 0,
    latencies: [],
    byRoute: {},
    stream: { opens: 0, resumes: 0, messages: 0, gaps: 0, drops: 0, refused: 0 },
  };
  const known: Known = { slugs: [], marketIds: [], marketsOfSlug: new Map(), categories: [], leagues: [], callIds: [], handles: [] };
  const etags = new Map<string, string>();
  const maxInFlight = opts.maxInFlight ?? Math.max(50, opts.rps * 2);
  let inFlight = 0;
  let stopped = false;
  let nextClient = 0;
  const controllers = new Set<AbortController>();

  async function get(route: string, url: string, conditional: boolean): Promise<unknown> {
    const client = clientAddress(nextClient++ % opts.clients);
    const headers: Record<string, string> = { 'x-forwarded-for': client, accept: 'application/json' };
    const etag = conditional ? etags.get(url) : undefined;
    if (etag) headers['if-none-match'] = etag;
    const ac = new AbortController();
    controllers.add(ac);
    const timer = setTimeout(() => ac.abort(), 10_000);
    const started = performance.now();
    inFlight++;
    counts.requests++;
    counts.byRoute[route] = (counts.byRoute[route] ?? 0) + 1;
    try {
      const res = await fetch(`${opts.base}${url}`, { headers, signal: ac.signal });
      const text = await res.text();
      counts.latencies.push(performance.now() - started);
      counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
      const ok = (res.status >= 200 && res.status < 300) || res.status === 304;
      if (!ok) {
        const key = `${route} ${res.status}`;
        counts.failures[key] = (counts.failures[key] ?? 0) + 1;
        return undefined;
      }
      const tag = res.headers.get('etag');
      if (tag) etags.set(url, tag);
      if (etags.size > 5_000) etags.clear();
      return res.status === 200 ? JSON.parse(text) : undefined;
    } catch {
      if (!stopped) counts.errors++;
      return undefined;
    } finally {
      clearTimeout(timer);
      controllers.delete(ac);
      inFlight--;
    }
  }

  /** What exists now: events, markets, calls and people to ask about (the catalog turns over all day). */
  async function discover(): Promise<void> {
    type List = { events?: Array<{ slug: string; markets: Array<{ id: string }> }>; categories?: string[]; leagues?: Array<{ league: string }> };
    const first = (await get('/markets', '/api/v1/markets?limit=60', false)) as List | undefined;
    if (!first?.events) return;
    known.categories = first.categories ?? known.categories;
    known.leagues = (first.leagues ?? []).map((l) => l.league);
    // The front page holds 60 events at most: each category's list finds the rest.
    const lists = [first];
    for (const category of known.categories) {
      const list = (await get('/markets', `/api/v1/markets?category=${encodeURIComponent(category)}&limit=60`, false)) as List | undefined;
      if (list) lists.push(list);
    }
    const events = new Map(lists.flatMap((l) => l.events ?? []).map((e) => [e.slug, e]));
    known.slugs = [...events.keys()];
    known.marketsOfSlug = new Map([...events.values()].map((e) => [e.slug, e.markets.map((m) => m.id)]));
    known.marketIds = [...events.values()].flatMap((e) => e.markets.map((m) => m.id));
    const calls = (await get('/calls', '/api/v1/calls?limit=100', false)) as { calls?: Array<{ id: string; user: { handle: string } }> } | undefined;
    if (calls?.calls) {
      known.callIds = calls.calls.map((c) => c.id);
      known.handles = [...new Set(calls.calls.map((c) => c.user.handle))];
    }
  }

  /** One request of the mix: [route template, url]. */
  function nextRequest(): [string, string] {
    const r = Math.random() * 100;
    const slug = pick(known.slugs);
    const market = pick(known.marketIds);
    if (r < 8) return ['/markets', '/api/v1/markets'];
    if (r < 12 && known.categories.length) return ['/markets', `/api/v1/markets?category=${encodeURIComponent(pick(known.categories)!)}&limit=20`];
    if (r < 15 && known.leagues.length) return ['/markets', `/api/v1/markets?league=${encodeURIComponent(pick(known.leagues)!)}`];
    if (r < 18) return ['/markets', `/api/v1/markets?q=${pick(['will', 'bitcoin', 'city', 'rate', 'ai', 'win'])}&limit=10`];
    if (r < 38 && slug) return ['/markets/{eventSlug}', `/api/v1/markets/${encodeURIComponent(slug)}`];
    if (r < 46 && market) return ['/markets/by-id/{marketId}', `/api/v1/markets/by-id/${market}`];
    if (r < 60 && slug) {
      const ids = known.marketsOfSlug.get(slug) ?? [];
      const m = pick(ids);
      return ['/markets/{eventSlug}/history', `/api/v1/markets/${encodeURIComponent(slug)}/history?range=${pick(PAGE_RANGES)}${m ? `&market=${m}` : ''}`];
    }
    if (r < 66) return ['/live', '/api/v1/live'];
    if (r < 72) return ['/calls', '/api/v1/calls?limit=20'];
    if (r < 76 && market) return ['/calls', `/api/v1/calls?market=${market}&limit=10`];
    const call = pick(known.callIds);
    if (r < 82 && call) return ['/calls/{id}', `/api/v1/calls/${call}`];
    const handle = pick(known.handles);
    if (r < 86 && handle) return ['/users/{handle}', `/api/v1/users/${handle}`];
    if (r < 87 && handle && known.categories.length) return ['/users/{handle}', `/api/v1/users/${handle}?category=${encodeURIComponent(pick(known.categories)!)}`];
    if (r < 91 && handle) return ['/users/{handle}/calls', `/api/v1/users/${handle}/calls?status=${pick(CALL_STATUSES)}&limit=10`];
    if (r < 93) return ['/leaderboard', `/api/v1/leaderboard?sort=${pick(SORTS)}&limit=20`];
    if (r < 95) {
      // A board ranked on request: a window, a field, and where someone stands on it.
      const field = Math.random() < 0.5 ? '' : Math.random() < 0.5 && known.categories.length ? `&category=${encodeURIComponent(pick(known.categories)!)}` : known.leagues.length ? `&league=${encodeURIComponent(pick(known.leagues)!)}` : '';
      const around = handle && Math.random() < 0.5 ? `&around=${handle}` : '';
      return ['/leaderboard', `/api/v1/leaderboard?sort=${pick(FIELD_SORTS)}&window=${pick(WINDOWS)}${field}${around}&limit=20`];
    }
    if (r < 98) return ['/combos', `/api/v1/combos?status=${pick(COMBO_STATUSES)}&limit=10`];
    return ['/odds', `/api/v1/odds?chance=${(0.01 + Math.random() * 0.98).toFixed(3)}`];
  }

  // Ten ticks a second, each sending what the rate owes since the start: a tick that comes late (a
  // busy machine) sends more, so the rate holds; at most a second's worth at once.
  const startedAt = performance.now();
  let sent = 0;
  const tick = setInterval(() => {
    const due = Math.floor(((performance.now() - startedAt) / 1000) * opts.rps);
    let n = due - sent;
    if (n > opts.rps) {
      counts.skipped += n - opts.rps;
      n = opts.rps;
    }
    sent = due;
    for (let i = 0; i < n; i++) {
      if (inFlight >= maxInFlight) {
        counts.skipped++;
        continue;
      }
      const [route, url] = nextRequest();
      void get(route, url, Math.random() < 0.3);
    }
  }, 100);
  const discovery = setInterval(() => void discover(), 20_000);

  /** One stream's life: open, read, close after a while, resume from the last id; until stopped. */
  async function streamLoop(n: number): Promise<void> {
    const client = clientAddress(opts.clients + n);
    let lastId: string | undefined;
    while (!stopped) {
      const ac = new AbortController();
      controllers.add(ac);
      const lifeMs = opts.streamResumeMs * (0.5 + Math.random());
      let closedByUs = false;
      const timer = setTimeout(() => {
        closedByUs = true;
        ac.abort();
      }, lifeMs);
      const resuming = lastId !== undefined;
      try {
        const headers: Record<string, string> = { 'x-forwarded-for': client, accept: 'text/event-stream' };
        if (lastId) headers['last-event-id'] = lastId;
        counts.requests++;
        counts.byRoute['/stream'] = (counts.byRoute['/stream'] ?? 0) + 1;
        const res = await fetch(`${opts.base}/api/v1/stream`, { headers, signal: ac.signal });
        counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
        if (res.status !== 200 || !res.body) {
          counts.stream.refused++;
          counts.failures[`/stream ${res.status}`] = (counts.failures[`/stream ${res.status}`] ?? 0) + 1;
          await res.body?.cancel();
          await sleep(2_000);
          continue;
        }
        counts.stream.opens++;
        if (resuming) counts.stream.resumes++;
        let buffer = '';
        const decoder = new TextDecoder();
        for await (const chunk of res.body) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let event = 'message';
            for (const line of frame.split('\n')) {
              if (line.startsWith('id: ')) lastId = line.slice(4);
              else if (line.startsWith('event: ')) event = line.slice(7);
            }
            if (frame.startsWith(':')) continue;
            counts.stream.messages++;
            if (event === 'reset' && resuming) counts.stream.gaps++;
          }
        }
        // The body ended on its own: the server closed a stream the soak did not close.
        if (!closedByUs && !stopped) counts.stream.drops++;
      } catch {
        if (!closedByUs && !stopped) {
          counts.stream.drops++;
          await sleep(1_000);
        }
      } finally {
        clearTimeout(timer);
        controllers.delete(ac);
      }
    }
  }

  const streams = [...Array(opts.streams).keys()].map((n) => streamLoop(n));
  void discover();

  return {
    counts,
    /** Latencies since the last call, and forgets them. */
    takeLatencies(): number[] {
      const out = counts.latencies;
      counts.latencies = [];
      return out;
    },
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(tick);
      clearInterval(discovery);
      for (const ac of controllers) ac.abort();
      await Promise.allSettled(streams);
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The p-th percentile (0–100) of `xs`, or null when empty. */
export function percentile(xs: readonly number[], p: number): number | null {
  if (!xs.length) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
