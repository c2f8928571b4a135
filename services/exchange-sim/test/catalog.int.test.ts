import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSimulator, type RunningSimulator } from '../src/simulator.js';
import { control, family, type GammaEventT, getEvents, getJson, openEvents, strings, useSimulator } from './helpers.js';

const START = Date.UTC(2026, 3, 5, 15, 0, 0);

describe('synthetic catalog (Gamma /events)', () => {
  let sim: RunningSimulator;
  let all: GammaEventT[];

  useSimulator({ port: 0, seed: 42, startTime: START, paused: true }, async (s) => {
    sim = s;
    all = await openEvents(s);
  });

  it('pages open events by volume24hr without overlap or gaps', async () => {
    const paged: GammaEventT[] = [];
    for (let offset = 0; ; offset += 17) {
      const page = await getEvents(`${sim.url}/events?active=true&closed=false&order=volume24hr&ascending=false&limit=17&offset=${offset}`);
      if (!page.length) break;
      expect(page.length).toBeLessThanOrEqual(17);
      paged.push(...page);
    }
    const ids = paged.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(all.map((e) => e.id).sort());
    const volumes = paged.map((e) => e.volume24hr);
    // Re-fetch in order (the sort above reordered ids only).
    for (let i = 1; i < volumes.length; i++) expect(volumes[i]).toBeLessThanOrEqual(volumes[i - 1] ?? Infinity);
    const ascending = await getEvents(`${sim.url}/events?active=true&closed=false&order=volume24hr&ascending=true&limit=3`);
    expect(ascending.map((e) => e.id)).toEqual(paged.slice(-3).reverse().map((e) => e.id));
    const state = z.object({ openEvents: z.number() }).parse(await control(sim).get('/_sim/state'));
    expect(paged.length).toBe(state.openEvents);
  });

  it('defaults limit to 100 and rejects a bad one', async () => {
    expect((await getEvents(`${sim.url}/events`)).length).toBe(Math.min(100, all.length));
    const res = await fetch(`${sim.url}/events?limit=ten`);
    expect(res.status).toBe(400);
  });

  it('has at least 60 open events over all seven tag families, a few untagged but recognisable', () => {
    expect(all.length).toBeGreaterThanOrEqual(60);
    const families = new Set(all.map((e) => family(e.tags)).filter((f) => f !== null));
    expect([...families].sort()).toEqual(['Crypto', 'Culture', 'Economy', 'Football', 'Politics', 'Sport', 'Tech']);
    const untagged = all.filter((e) => e.tags === null);
    expect(untagged.length).toBeGreaterThanOrEqual(1);
    expect(untagged.length).toBeLessThanOrEqual(2);
    for (const e of untagged) expect(e.title).toMatch(/^(Bitcoin|Ethereum) above/);
  });

  it('encodes outcomes, prices and token ids as JSON strings in Gamma shape', () => {
    for (const e of all) {
      expect(e.id).toMatch(/^\d+$/);
      for (const m of e.markets) {
        expect(m.id).toMatch(/^\d+$/);
        expect(m.conditionId).toMatch(/^0x[0-9a-f]{64}$/);
        expect(strings(m.outcomes)).toHaveLength(2);
        const prices = strings(m.outcomePrices).map(Number);
        expect(prices).toHaveLength(2);
        expect((prices[0] ?? 0) + (prices[1] ?? 0)).toBeCloseTo(1, 6);
        for (const token of strings(m.clobTokenIds)) expect(token).toMatch(/^[1-9]\d{75}$/);
        expect(m.volume).toMatch(/^\d+(\.\d+)?$/);
      }
    }
    const dates = all.map((e) => String(e.startDate));
    expect(dates.some((d) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\+00$/.test(d))).toBe(true);
    expect(dates.some((d) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(d))).toBe(true);
  });

  it('shapes soccer matches as three Yes/No moneylines plus totals and both-teams-to-score', () => {
    const matches = all.filter((e) => family(e.tags) === 'Football' && e.gameId !== undefined);
    expect(matches.length).toBeGreaterThanOrEqual(5);
    for (const e of matches) {
      const moneylines = e.markets.filter((m) => m.sportsMarketType === 'moneyline');
      expect(moneylines).toHaveLength(3);
      expect(moneylines.map((m) => strings(m.outcomes).join('/'))).toEqual(['Yes/No', 'Yes/No', 'Yes/No']);
      expect(moneylines[1]?.groupItemTitle).toMatch(/^Draw \(.+ vs\. .+\)$/);
      const totals = e.markets.find((m) => m.sportsMarketType === 'totals');
      expect(totals?.line).toBe(2.5);
      expect(strings(totals?.outcomes ?? '[]')).toEqual(['Over', 'Under']);
      expect(e.markets.some((m) => m.sportsMarketType === 'both_teams_to_score')).toBe(true);
      expect(Array.isArray(e.teams)).toBe(true);
    }
    const nba = all.filter((e) => e.tags?.some((t) => t.slug === 'nba') && e.gameId !== undefined);
    expect(nba.length).toBeGreaterThanOrEqual(2);
    for (const e of nba) {
      const ml = e.markets.find((m) => m.sportsMarketType === 'moneyline');
      expect(strings(ml?.outcomes ?? '[]')).not.toContain('Yes');
      expect(e.markets.map((m) => m.sportsMarketType).sort()).toEqual(['moneyline', 'spreads', 'totals']);
    }
    const nonSport = all.filter((e) => !e.tags?.some((t) => t.slug === 'sports'));
    for (const e of nonSport) for (const m of e.markets) expect(m.sportsMarketType).toBeNull();
  });

  it('filters by slug, id, tag_id, game_id and live', async () => {
    const some = all[3];
    if (!some) throw new Error('catalog too small');
    expect((await getEvents(`${sim.url}/events?slug=${some.slug}`)).map((e) => e.id)).toEqual([some.id]);
    expect((await getEvents(`${sim.url}/events?id=${some.id}`)).map((e) => e.slug)).toEqual([some.slug]);
    const epl = await getEvents(`${sim.url}/events?tag_id=82&limit=500`);
    expect(epl.length).toBeGreaterThan(0);
    for (const e of epl) expect(e.tags?.some((t) => t.slug === 'epl')).toBe(true);
    const live = await getEvents(`${sim.url}/events?live=true&limit=500`);
    expect(live.length).toBeGreaterThanOrEqual(2);
    for (const e of live) expect(e.live).toBe(true);
    const game = live[0];
    expect((await getEvents(`${sim.url}/events?game_id=${game?.gameId}`)).map((e) => e.id)).toEqual([game?.id]);
  });

  it('lists leagues on /sports with comma-separated tag ids', async () => {
    const sports = z.array(z.looseObject({ sport: z.string(), tags: z.string(), series: z.string() })).parse(await getJson(`${sim.url}/sports`));
    expect(sports.map((s) => s.sport)).toEqual(expect.arrayContaining(['epl', 'nba', 'nfl']));
    for (const s of sports) expect(s.tags).toMatch(/^\d+(,\d+)*$/);
  });
});

describe('determinism', () => {
  it('gives the same catalog and the same book moves for the same seed, another for another seed', async () => {
    const [a, b, c] = await Promise.all([
      startSimulator({ seed: 7, startTime: START, paused: true }),
      startSimulator({ seed: 7, startTime: START, paused: true }),
      startSimulator({ seed: 8, startTime: START, paused: true }),
    ]);
    try {
      const catalog = (s: RunningSimulator) => getJson(`${s.url}/events?limit=500`);
      expect(await catalog(a)).toEqual(await catalog(b));
      expect(await catalog(a)).not.toEqual(await catalog(c));
      await control(a).post('/_sim/step', { ticks: 400 });
      await control(b).post('/_sim/step', { ticks: 400 });
      const [afterA, afterB] = [await catalog(a), await catalog(b)];
      expect(afterA).toEqual(afterB);
      const before = await catalog(c);
      await control(c).post('/_sim/step', { ticks: 400 });
      expect(await catalog(c)).not.toEqual(before);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});

describe('a catalog sized by SIM_EVENTS (openEvents)', () => {
  it('keeps that many open events, every slug distinct, the designed ones still there', async () => {
    const sim = await startSimulator({ port: 0, seed: 42, startTime: START, paused: true, openEvents: 400 });
    try {
      const state = z.object({ openEvents: z.number() }).parse(await control(sim).get('/_sim/state'));
      expect(state.openEvents).toBe(400);
      const open: GammaEventT[] = [];
      for (let offset = 0; ; offset += 500) {
        const page = await getEvents(`${sim.url}/events?active=true&closed=false&limit=500&offset=${offset}`);
        if (!page.length) break;
        open.push(...page);
      }
      expect(open).toHaveLength(400);
      expect(new Set(open.map((e) => e.slug)).size).toBe(400);
      const families = new Set(open.map((e) => family(e.tags)).filter((f) => f !== null));
      expect([...families].sort()).toEqual(['Crypto', 'Culture', 'Economy', 'Football', 'Politics', 'Sport', 'Tech']);
    } finally {
      await sim.close();
    }
  });
});
