import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDb, sql, type Db } from '@pm/shared/db';
import {
  CATEGORY_DISPLAY_ORDER,
  liveMatchesResponseSchema,
  marketEventResponseSchema,
  marketHistoryResponseSchema,
  marketListResponseSchema,
  type MarketHistoryResponse,
} from '@pm/shared/api';
import { startStack, type Stack } from '../support/stack.js';
import * as waiting from '@pm/shared/wait';

/**
 * Endpoints 1–4 on the simulator's data, field by field against docs/api.md: the whole stack started by
 * the run line; the simulator's own catalog (`GET /events`) and the stack's database are the
 * references the API is compared with.
 */

let stack: Stack;
let db: Db;

/** The simulator's catalog as the exchange serves it (docs/protocol.md §3). */
const gammaMarket = z.object({
  id: z.string(),
  question: z.string(),
  groupItemTitle: z.string().nullish(),
  sportsMarketType: z.string().nullish(),
  endDate: z.string().nullish(),
  closed: z.boolean().nullish(),
  outcomes: z.string().transform((s) => z.array(z.string()).parse(JSON.parse(s))),
});
const gammaEvent = z.object({
  id: z.coerce.string(),
  slug: z.string(),
  title: z.string(),
  endDate: z.string().nullish(),
  volume: z.coerce.number(),
  markets: z.array(gammaMarket),
});
type GammaEvent = z.infer<typeof gammaEvent>;

const iso = (s: string | null | undefined) => (s ? new Date(s.replace(' ', 'T').replace(/\+00$/, 'Z')).toISOString() : null);
const snake = (s: string | null | undefined) =>
  s ? s.trim().replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/[\s\-.]+/g, '_').toLowerCase() || null : null;

async function api<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
  const res = await fetch(`${stack.apiUrl}${path}`);
  const body: unknown = await res.json();
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${JSON.stringify(body)}`);
  return schema.parse(body);
}

async function simEvents(): Promise<GammaEvent[]> {
  const res = await fetch(`${stack.simUrl}/events?active=true&closed=false&order=volume24hr&ascending=false&limit=500&offset=0`);
  return z.array(gammaEvent).parse(await res.json());
}

async function simEvent(id: string | number): Promise<GammaEvent> {
  const res = await fetch(`${stack.simUrl}/events/${id}`);
  if (res.status !== 200) throw new Error(`simulator event ${id} answered ${res.status}`);
  return gammaEvent.parse(await res.json());
}

const waitFor = <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number) =>
  waiting.until(what, fn, { timeoutMs, everyMs: 500, context: () => stack.logs() });

beforeAll(async () => {
  // Field-by-field checks of every event take a few hundred requests: lift the per-IP limit. A short
  // catalog sync keeps each event's volume close behind the simulator's, which trades all the while.
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '100000', CATALOG_SYNC_SECONDS: '5' } });
  db = createDb(stack.databaseUrl, { poolSize: 2 });
  await waitFor('the trending list', async () => ((await api('/api/v1/markets', marketListResponseSchema)).count > 0 ? true : undefined), 30_000);
});

afterAll(async () => {
  await db?.dispose();
  await stack?.stop();
});

describe('1. GET /api/v1/markets', () => {
  it('lists a league entry for every league and coin with open events, and league overrides category', async () => {
    // The list is a snapshot built after each change of the catalog: an event the simulator closes
    // between the snapshot and the database read below shows in one and not the other until the next
    // build. Each comparison is read again until the two agree.
    const openLeagues = async () =>
      ((await db.query(sql`select distinct category, league from events where closed = false and league is not null`)) as Array<{ category: string; league: string }>)
        .map((r) => `${r.category}/${r.league}`)
        .sort();
    const list = await waitFor(
      'the list\'s league entries to be the open events\' leagues',
      async () => {
        const l = await api('/api/v1/markets', marketListResponseSchema);
        return JSON.stringify(l.leagues.map((e) => `${e.group}/${e.league}`).sort()) === JSON.stringify(await openLeagues()) ? l : undefined;
      },
      30_000,
    );
    expect(list.categories).toEqual([...CATEGORY_DISPLAY_ORDER]);
    expect(list.leagues.some((l) => l.group === 'Football')).toBe(true);
    expect(list.leagues.some((l) => l.group === 'Crypto')).toBe(true);
    for (const entry of list.leagues) {
      expect(entry.label.length, entry.league).toBeGreaterThan(0);
      // The league's list holds exactly its events, whatever category is asked alongside.
      const byLeague = await waitFor(
        `${entry.league}: the list's count to be its open events'`,
        async () => {
          const l = await api(`/api/v1/markets?league=${entry.league}&category=Politics&limit=60`, marketListResponseSchema);
          const counted = (await db.query(sql`select count(*)::int as n from events where closed = false and league = ${entry.league}`)) as Array<{ n: number }>;
          return l.count === Math.min(counted[0]?.n ?? 0, 60) ? l : undefined;
        },
        30_000,
      );
      expect(byLeague.count, entry.league).toBeGreaterThan(0);
      expect(byLeague.events.every((e) => e.category === entry.group), entry.league).toBe(true);
    }
  });

  it('orders events busiest first by 24-hour volume', async () => {
    const list = await api('/api/v1/markets?limit=60', marketListResponseSchema);
    const rows: Array<{ slug: string; v: number }> = await db.query(sql`select slug, volume_24h::float8 as v from events where closed = false`);
    const volume = new Map(rows.map((r) => [r.slug, r.v]));
    const volumes = list.events.map((e) => volume.get(e.slug) ?? -1);
    expect(volumes.every((v) => v >= 0)).toBe(true);
    // The catalog sync may move volumes between the snapshot and this read; allow that one sync's drift.
    let inversions = 0;
    for (let i = 1; i < volumes.length; i++) if (volumes[i]! > volumes[i - 1]! * 1.05) inversions++;
    expect(inversions).toBe(0);
    expect(list.events.length).toBe(Math.min(60, rows.length));
  });

  it('q matches titles and every market question, case-insensitively, not only the three shown', async () => {
    const events = await simEvents();
    const deep = events.find((e) => e.markets.length > 3)!;
    expect(deep).toBeDefined();
    const hidden = deep.markets[3]!.question;
    const q = hidden.slice(0, 60).toUpperCase();
    const found = await api(`/api/v1/markets?q=${encodeURIComponent(q)}&limit=60`, marketListResponseSchema);
    expect(found.events.map((e) => e.slug)).toContain(deep.slug);
    for (const e of found.events) {
      const source = events.find((s) => s.slug === e.slug)!;
      const text = [source.title, ...source.markets.map((m) => m.question)].join('\n').toLowerCase();
      expect(text, e.slug).toContain(q.toLowerCase());
    }
    const byTitle = await api(`/api/v1/markets?q=${encodeURIComponent(deep.title.toLowerCase())}`, marketListResponseSchema);
    expect(byTitle.events.map((e) => e.slug)).toContain(deep.slug);
  });
});

describe('2. GET /api/v1/markets/{eventSlug}', () => {
  it('every open event: volume, closes_at, market_count and each market\'s label, kind, closes_at, closed as the catalog says', async () => {
    const events = await simEvents();
    expect(events.length).toBeGreaterThan(20);
    for (const listed of events) {
      // The list is read once; each event is compared with the simulator's state read just before
      // and just after its page, so a slow pass over ~70 events compares like with like.
      const before = await simEvent(listed.id);
      // A market the simulator closed after this event's last page was built shows closed once the
      // ingestor has the closure (its market_resolved frame, or the next catalog sync); the volume,
      // which grows as the simulator trades, catches up at the next sync: wait for both.
      const closedAsSim = (e: { markets: Array<{ id: string; closed: boolean }> }) =>
        before.markets.every((m) => e.markets.find((x) => x.id === m.id)?.closed !== false || m.closed !== true);
      const volumeCaughtUp = (e: { volume: number }) => e.volume >= before.volume * 0.95 - 1;
      const event = await waitFor(
        `${listed.slug}: the markets the simulator closed shown closed, and its volume caught up`,
        async () => {
          const page = (await api(`/api/v1/markets/${listed.slug}`, marketEventResponseSchema)).event;
          return closedAsSim(page) && volumeCaughtUp(page) ? page : undefined;
        },
        30_000,
      );
      const source = await simEvent(listed.id);
      expect(event.title).toBe(source.title);
      expect(event.market_count, source.slug).toBe(source.markets.length);
      expect(event.markets.map((m) => m.id)).toEqual(source.markets.map((m) => m.id));
      expect(event.closes_at, source.slug).toBe(iso(source.endDate));
      // Volume only grows: at least what the simulator had before the read (less rounding), at most
      // what it had after.
      expect(event.volume, source.slug).toBeGreaterThanOrEqual(before.volume * 0.95 - 1);
      expect(event.volume, source.slug).toBeLessThanOrEqual(Math.max(before.volume, source.volume) * 1.05 + 1);
      source.markets.forEach((m, i) => {
        const got = event.markets[i]!;
        expect(got.question).toBe(m.question);
        expect(got.label, m.id).toBe(m.groupItemTitle?.trim() ? m.groupItemTitle : m.question);
        expect(got.kind, m.id).toBe(snake(m.sportsMarketType));
        expect(got.closes_at, m.id).toBe(iso(m.endDate));
        // Closed as the simulator had it just before or just after the read.
        const wasClosed = before.markets.find((b) => b.id === m.id)?.closed === true;
        expect([wasClosed, m.closed === true], m.id).toContain(got.closed);
        expect(got.outcomes.map((o) => o.name)).toEqual(m.outcomes);
        expect(Number.isInteger(Math.round(got.change_24h * 10_000))).toBe(true);
        expect(Math.abs(got.change_24h)).toBeLessThanOrEqual(1);
      });
    }
  });

  it('a match has its game: live, score home-away, clock, period, our league key and teams with the home flag', async () => {
    // The busiest football event: a match (its slug carries its date), not a season-long market such
    // as a league winner, which may be busier at times and has no game.
    const list = await api('/api/v1/markets?category=Football&limit=60', marketListResponseSchema);
    const match = list.events.find((e) => /-\d{4}-\d{2}-\d{2}(-|$)/.test(e.slug));
    if (match === undefined) throw new Error(`no match among the football events: ${list.events.map((e) => e.slug).join(', ')}`);
    const { event } = await api(`/api/v1/markets/${match.slug}`, marketEventResponseSchema);
    expect(event.game).not.toBeNull();
    const game = event.game!;
    const entries = (await api('/api/v1/markets', marketListResponseSchema)).leagues.map((l) => l.league);
    expect(entries).toContain(game.league);
    expect(game.teams).toHaveLength(2);
    expect(game.teams.filter((t) => t.home)).toHaveLength(1);
    for (const t of game.teams) expect(t.abbreviation.length).toBeGreaterThan(0);
    if (game.score !== '') expect(game.score).toMatch(/^\d+-\d+$/);
  });
});

describe('3. GET /api/v1/markets/{eventSlug}/history', () => {
  it('max reaches back at least 30 days, points ascending and one per day, for the first market\'s first outcome', { timeout: 180_000 }, async () => {
    const list = await api('/api/v1/markets?category=Politics', marketListResponseSchema);
    const slug = list.events[0]!.slug;
    // The event's first market (by position): the card may lead with another, its open top markets first.
    const first = (await api(`/api/v1/markets/${slug}`, marketEventResponseSchema)).event.markets[0]!;
    const max = await waitFor<MarketHistoryResponse>(
      'a month of history',
      async () => {
        const h = await api(`/api/v1/markets/${slug}/history?range=max`, marketHistoryResponseSchema);
        const span = (h.points.at(-1)?.t ?? 0) - (h.points[0]?.t ?? 0);
        return span >= 30 * 86_400 ? h : undefined;
      },
      60_000,
    );
    expect(max).toMatchObject({ market_id: first.id, question: first.question, outcome: first.outcomes[0]!.name, range: 'max' });
    const ts = max.points.map((p) => p.t);
    expect(ts).toEqual([...ts].sort((a, b) => a - b));
    expect(new Set(ts.map((t) => Math.floor(t / 86_400))).size).toBe(ts.length);
    for (const p of max.points) {
      expect(Number.isInteger(p.t)).toBe(true);
      expect(p.chance).toBeGreaterThanOrEqual(0);
      expect(p.chance).toBeLessThanOrEqual(1);
    }

    // The week's hourly past is fetched paced after the stack starts (a minute or so for the demo's
    // catalog), after the coarse one that gives max its month.
    const week = await waiting.eventually(
      () => api(`/api/v1/markets/${slug}/history`, marketHistoryResponseSchema),
      (h) => h.points.length > 48,
      { timeoutMs: 100_000, everyMs: 500 },
    );
    expect(week.range).toBe('1w');
    expect(week.points.length).toBeGreaterThan(48);
    expect(week.points[0]!.t).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) - 7 * 86_400 - 60);
  });

  // An open market: one the demo crowd resolved before the stack first saw it has no 5-minute past
  // (the exchange answers a resolved market only at coarse fidelity).
  // The past is fetched paced, two requests a token, after the stack starts: a minute or so for the demo's catalog.
  it("1d shows an open market's last day in 5-minute buckets once its past is fetched", { timeout: 180_000 }, async () => {
    const list = await api('/api/v1/markets?category=Politics', marketListResponseSchema);
    const slug = list.events[0]!.slug;
    const open = (await api(`/api/v1/markets/${slug}`, marketEventResponseSchema)).event.markets.filter((m) => !m.closed);
    // A market with a past older than a day (a market the simulator opened minutes ago has none, and gets none invented).
    const dayAgo = Math.floor(Date.now() / 1000) - 86_400;
    const withPast = await waitFor(
      'an open market whose fetched past reaches back a day',
      async () => {
        for (const m of open) {
          const week = await api(`/api/v1/markets/${slug}/history?range=1w&market=${m.id}`, marketHistoryResponseSchema);
          if ((week.points[0]?.t ?? Infinity) < dayAgo) return m;
        }
        return undefined;
      },
      100_000,
    );
    const day = await waiting.eventually(
      () => api(`/api/v1/markets/${slug}/history?range=1d&market=${withPast.id}`, marketHistoryResponseSchema),
      (h) => h.points.length > 100,
      { timeoutMs: 60_000, everyMs: 500 },
    );
    expect(day.points.length).toBeGreaterThan(100);
    expect(new Set(day.points.map((p) => Math.floor(p.t / 300))).size).toBe(day.points.length);
  });

  it('a bad range is a 400 and a market of another event a 404', async () => {
    const list = await api('/api/v1/markets?limit=2', marketListResponseSchema);
    const [a, b] = list.events;
    const bad = await fetch(`${stack.apiUrl}/api/v1/markets/${a!.slug}/history?range=5y`);
    expect(bad.status).toBe(400);
    const other = await fetch(`${stack.apiUrl}/api/v1/markets/${a!.slug}/history?market=${b!.markets[0]!.id}`);
    expect(other.status).toBe(404);
    expect((await fetch(`${stack.apiUrl}/api/v1/markets/no-such-event/history`)).status).toBe(404);
  });
});

describe('4. GET /api/v1/live', () => {
  it('lists soccer matches in play with home, draw and away results on the event\'s own markets', async () => {
    const live = await waitFor(
      'a soccer match in play',
      async () => {
        const l = await api('/api/v1/live', liveMatchesResponseSchema);
        return l.matches.some((m) => m.result.length === 3) ? l : undefined;
      },
      30_000,
    );
    expect(live.count).toBe(live.matches.length);
    const leagues = (await api('/api/v1/markets', marketListResponseSchema)).leagues;
    for (const match of live.matches) {
      const { event } = await api(`/api/v1/markets/${match.slug}`, marketEventResponseSchema);
      expect(match.title).toBe(event.title);
      expect(match.markets).toBe(event.market_count);
      expect(match.url).toBe(event.url);
      expect(match.teams).toEqual(event.game?.teams);
      expect(leagues.map((l) => l.league)).toContain(match.league);
      const ids = new Set(event.markets.map((m) => m.id));
      for (const r of match.result) expect(ids.has(r.market_id), `${match.slug} ${r.market_id}`).toBe(true);
      const home = match.teams.find((t) => t.home)!;
      const away = match.teams.find((t) => !t.home)!;
      expect(match.result[0]!.label).toBe(home.name);
      expect(match.result.at(-1)!.label).toBe(away.name);
      if (match.result.length === 3) {
        expect(match.result[1]!.label).toBe('Draw');
        for (const r of match.result) {
          const market = event.markets.find((m) => m.id === r.market_id)!;
          expect(market.kind).toBe('moneyline');
          // The Yes chance of each three-way market (the event snapshot may be a build apart).
          expect(Math.abs(r.chance - market.outcomes[0]!.chance)).toBeLessThanOrEqual(0.2);
        }
        expect(new Set(match.result.map((r) => r.market_id)).size).toBe(3);
      }
    }
    const soccer = live.matches.filter((m) => m.result.length === 3);
    expect(soccer.length).toBeGreaterThanOrEqual(1);
  });
});
