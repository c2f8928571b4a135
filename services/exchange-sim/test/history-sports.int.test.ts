import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunningSimulator } from '../src/simulator.js';
import { until } from '@pm/shared/wait';
import { control, family, type GammaEventT, getEvents, getJson, openEvents, RecordingSocket, strings, useSimulator } from './helpers.js';

const historySchema = z.object({ history: z.array(z.object({ t: z.number(), p: z.number() })) });
const DAY = 86_400;

describe('prices history (CLOB /prices-history)', () => {
  let sim: RunningSimulator;
  let open: GammaEventT[];

  useSimulator({ seed: 5, paused: true }, async (s) => {
    sim = s;
    open = await openEvents(s);
  });

  it('serves more than 30 days at the asked fidelity, ending at the current price', async () => {
    const market = open[20]?.markets[0];
    if (!market) throw new Error('no market');
    const [yes, no] = strings(market.clobTokenIds);
    const { history } = historySchema.parse(await getJson(`${sim.url}/prices-history?market=${yes}&interval=max&fidelity=60`));
    const first = history[0];
    const last = history[history.length - 1];
    if (!first || !last) throw new Error('empty history');
    expect(last.t - first.t).toBeGreaterThanOrEqual(30 * DAY);
    for (let i = 1; i < history.length - 1; i++) expect((history[i]?.t ?? 0) - (history[i - 1]?.t ?? 0)).toBe(3_600);
    for (const point of history) {
      expect(point.p).toBeGreaterThanOrEqual(0);
      expect(point.p).toBeLessThanOrEqual(1);
    }
    expect(last.p).toBeCloseTo(Number(strings(market.outcomePrices)[0]), 3);

    const mirrored = historySchema.parse(await getJson(`${sim.url}/prices-history?market=${no}&interval=max&fidelity=60`)).history;
    expect(mirrored[5]?.p).toBeCloseTo(1 - (history[5]?.p ?? 0), 3);

    const day = historySchema.parse(await getJson(`${sim.url}/prices-history?market=${yes}&interval=1d&fidelity=5`)).history;
    expect(day.length).toBeGreaterThanOrEqual(287);
    expect(day.length).toBeLessThanOrEqual(290);

    const start = first.t + 10 * DAY;
    const ranged = historySchema.parse(await getJson(`${sim.url}/prices-history?market=${yes}&startTs=${start}&endTs=${start + DAY}&fidelity=60`)).history;
    expect(ranged.length).toBe(25);
    expect(ranged[0]?.t).toBe(start);
    // Deterministic: the same point as in the full series.
    expect(ranged[0]?.p).toBe(history.find((h) => h.t === start)?.p);

    expect(historySchema.parse(await getJson(`${sim.url}/prices-history?market=42&interval=1d`)).history).toEqual([]);
    expect((await fetch(`${sim.url}/prices-history?market=${yes}&interval=7y`)).status).toBe(400);
  });
});

describe('sports channel /ws and match lifecycle', () => {
  let sim: RunningSimulator;

  useSimulator({ seed: 42, speed: 40 }, (s) => {
    sim = s;
  });

  it('sends frames for several in-play games, a soccer one among them, and a text ping', async () => {
    const catalog = await getEvents(`${sim.url}/events?limit=500`);
    const soccerGames = new Set(catalog.filter((e) => family(e.tags) === 'Football' && e.gameId).map((e) => e.gameId));
    const s = new RecordingSocket(`${sim.wsUrl}/ws`);
    await s.open();
    await s.waitFor((r) => new Set(r.messages.map((m) => m.gameId)).size >= 2, 5_000, 'two games');
    const frames = s.rec.messages;
    for (const f of frames) {
      expect(f).toMatchObject({ gameId: expect.any(Number), leagueAbbreviation: expect.any(String), homeTeam: expect.any(String), awayTeam: expect.any(String) });
      expect(String(f.score)).toMatch(/^\d+-\d+$/);
      expect(f.event_type).toBeUndefined();
    }
    const live = frames.filter((f) => f.live === true);
    expect(new Set(live.map((f) => f.gameId)).size).toBeGreaterThanOrEqual(2);
    expect(live.some((f) => soccerGames.has(Number(f.gameId)))).toBe(true);
    // Unchanged states are re-sent: some game appears more than once within ~2.5 s.
    const most = () => {
      const counts = new Map<unknown, number>();
      for (const f of s.rec.messages) counts.set(f.gameId, (counts.get(f.gameId) ?? 0) + 1);
      return Math.max(...counts.values());
    };
    await s.waitFor(() => most() >= 2, 5_000, 'a game state sent twice');
    await s.waitFor((r) => r.texts.includes('ping'), 11_000, 'text ping');
    s.close();
  }, 20_000);

  it('ends matches and resolves their markets in the catalog, keeping at least 60 events open', async () => {
    const ended: GammaEventT = await until('a soccer match to end', async () => {
      const closed = await getEvents(`${sim.url}/events?closed=true&limit=500`);
      return closed.find((e) => family(e.tags) === 'Football' && e.gameId !== undefined);
    }, { timeoutMs: 20_000, everyMs: 250 });
    expect(ended.live).toBe(false);
    expect(ended.ended).toBe(true);
    const [home, away] = String(ended.score).split('-').map(Number);
    const moneylines = ended.markets.filter((m) => m.sportsMarketType === 'moneyline');
    for (const m of ended.markets) expect(m).toMatchObject({ closed: true, umaResolutionStatus: 'resolved' });
    const yesPrices = moneylines.map((m) => strings(m.outcomePrices)[0]);
    if (yesPrices.every((p) => p === '0.5')) return; // a void
    const expected = home === undefined || away === undefined ? [] : home > away ? ['1', '0', '0'] : home === away ? ['0', '1', '0'] : ['0', '0', '1'];
    expect(yesPrices).toEqual(expected);
    const state = z.object({ openEvents: z.number() }).parse(await control(sim).get('/_sim/state'));
    expect(state.openEvents).toBeGreaterThanOrEqual(60);
  }, 30_000);
});
