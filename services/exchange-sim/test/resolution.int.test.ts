import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/simulator.js';
import { until } from '@pm/shared/wait';
import { gammaEvent, getEvents, getJson, openEvents, RecordingSocket, strings, useSimulator } from './helpers.js';

describe('automatic resolutions in accelerated time', () => {
  let sim: RunningSimulator;

  useSimulator({ seed: 3, speed: 100 }, (s) => {
    sim = s;
  });

  it('announces some resolutions but not all, flips the catalog for every one, and replaces closed events', async () => {
    const open = await openEvents(sim);
    const initialIds = new Set(open.flatMap((e) => e.markets.map((m) => m.id)));
    const s = new RecordingSocket(`${sim.wsUrl}/ws/market`);
    await s.open();
    s.send({ assets_ids: open.flatMap((e) => e.markets.flatMap((m) => strings(m.clobTokenIds))), type: 'market', custom_feature_enabled: true });

    const closedIds = await until('25 of the first markets closed', async () => {
      const closed = await getEvents(`${sim.url}/events?closed=true&limit=500`);
      const ids = new Set(closed.flatMap((e) => e.markets.filter((m) => initialIds.has(m.id)).map((m) => m.id)));
      return ids.size >= 25 && ids;
    }, { timeoutMs: 20_000, everyMs: 300 });
    // A resolution is announced in the tick that closes it: behind this PONG, every announcement is in.
    await s.barrier();
    const announced = new Set(s.rec.messages.filter((m) => m.event_type === 'market_resolved').map((m) => String(m.id)));
    // Some closed events vanish from the list queries (a quirk of the real catalog): by id they
    // still answer, closed.
    const eventOf = new Map(open.flatMap((e) => e.markets.map((m) => [m.id, e.id] as const)));
    for (const id of announced) {
      if (closedIds.has(id)) continue;
      const byId = gammaEvent.parse(await getJson(`${sim.url}/events/${eventOf.get(id)}`));
      expect(byId.markets.find((m) => m.id === id)?.closed).toBe(true);
      closedIds.add(id);
    }
    expect(announced.size).toBeGreaterThan(0);
    expect(announced.size).toBeLessThan(closedIds.size);
    const newMarkets = s.rec.messages.filter((m) => m.event_type === 'new_market');
    expect(newMarkets.length).toBeGreaterThan(0);
    expect(newMarkets[0]).toMatchObject({ assets_ids: expect.any(Array), event_message: { id: expect.any(String) } });
    const stillOpen = await openEvents(sim);
    expect(stillOpen.length).toBeGreaterThanOrEqual(60);
    s.close();
  }, 30_000);
});
