import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/simulator.js';
import { control, getJson, RecordingSocket, useSimulator } from './helpers.js';

const folder = fileURLToPath(new URL('../test-fixtures/tiny-scenario/', import.meta.url));
const feed = readFileSync(`${folder}feed.jsonl`, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as { at: number; channel: string; frame: unknown });
const text = (frame: unknown) => (typeof frame === 'string' ? frame : JSON.stringify(frame));

describe('replay of a scenario folder', () => {
  let sim: RunningSimulator;

  // Each test replays from the top, on a catalog no other test has resolved anything in.
  useSimulator({ scenario: folder, speed: 1, paused: true }, (s) => {
    sim = s;
  }, { per: 'test' });

  it('serves the catalog, sports and history as given', async () => {
    const catalog = JSON.parse(readFileSync(`${folder}catalog.json`, 'utf8')) as unknown[];
    expect(await getJson(`${sim.url}/events?limit=500`)).toEqual(catalog);
    expect(await getJson(`${sim.url}/events?active=true&closed=false`)).toEqual([catalog[0]]);
    expect(await getJson(`${sim.url}/events?slug=old-closed-fixture`)).toEqual([catalog[1]]);
    expect(await getJson(`${sim.url}/sports`)).toEqual(JSON.parse(readFileSync(`${folder}sports.json`, 'utf8')));
    expect(await getJson(`${sim.url}/prices-history?market=1001&interval=max&fidelity=60`)).toEqual({
      history: [{ t: 1775000000, p: 0.5 }, { t: 1775003600, p: 0.53 }, { t: 1775007200, p: 0.55 }],
    });
    expect(await getJson(`${sim.url}/prices-history?market=1001&interval=max&fidelity=1`)).toMatchObject({ history: { length: 4 } });
  });

  it('replays market and sports frames in order, exactly as recorded, filtered per subscription', async () => {
    const market = new RecordingSocket(`${sim.wsUrl}/ws/market`);
    const sports = new RecordingSocket(`${sim.wsUrl}/ws`);
    await Promise.all([market.open(), sports.open()]);
    market.send({ assets_ids: ['1001', '1002'], type: 'market', custom_feature_enabled: true, initial_dump: true });
    // Before any book frame was replayed, the initial dump is an empty book per asset.
    await market.waitFor((r) => r.messages.length === 2, 3_000, 'empty initial books');
    expect(market.rec.messages.map((m) => [m.asset_id, m.bids, m.asks])).toEqual([['1001', [], []], ['1002', [], []]]);

    await control(sim).post('/_sim/resume');
    const startedAt = Date.now();
    const expectedMarket = feed
      .filter((l) => l.channel === 'market')
      // The trade on asset 2001 is for a socket subscribed to it, not this one.
      .filter((l) => !(typeof l.frame === 'object' && l.frame !== null && !Array.isArray(l.frame) && 'asset_id' in l.frame && l.frame.asset_id === '2001'))
      .map((l) => text(l.frame));
    const expectedSports = feed.filter((l) => l.channel === 'sports').map((l) => text(l.frame));
    await market.waitFor((r) => r.raw.length >= 1 + expectedMarket.length, 3_000, 'market frames');
    await sports.waitFor((r) => r.raw.length >= expectedSports.length, 3_000, 'sports frames');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(400);
    expect(market.rec.raw.slice(1)).toEqual(expectedMarket);
    expect(sports.rec.raw).toEqual(expectedSports);

    const book = await getJson(`${sim.url}/book?token_id=1001`);
    expect(book).toMatchObject({ asset_id: '1001', hash: 'h1', bids: [{ price: '0.5', size: '10' }, { price: '0.54', size: '20' }] });
    const state = await control(sim).get('/_sim/state');
    expect(state).toMatchObject({ mode: 'replay', tick: feed.length, events: 2, openEvents: 1 });

    // A restart replays from the top; a new subscriber now gets the latest recorded book.
    await control(sim).post('/_sim/replay/restart');
    await market.waitFor((r) => r.raw.length >= 1 + 2 * expectedMarket.length, 3_000, 'second pass');
    expect(market.rec.raw.slice(1 + expectedMarket.length)).toEqual(expectedMarket);
    market.close();
    sports.close();
  });

  it('resolves a recorded market through the control API', async () => {
    const s = new RecordingSocket(`${sim.wsUrl}/ws/market`);
    await s.open();
    s.send({ assets_ids: ['1001'], type: 'market', custom_feature_enabled: true });
    await s.waitFor((r) => r.messages.length >= 1, 3_000, 'book');
    expect((await control(sim).post('/_sim/resolve', { market_id: '81', winning_outcome_index: 0, announce: true })).status).toBe(200);
    await s.waitFor((r) => r.messages.some((m) => m.event_type === 'market_resolved'), 3_000, 'market_resolved');
    expect(s.rec.messages.find((m) => m.event_type === 'market_resolved')).toMatchObject({ winning_asset_id: '1001', winning_outcome: 'Yes' });
    expect(await getJson(`${sim.url}/events?id=9001`)).toMatchObject([{ closed: true, markets: [{ closed: true, outcomePrices: '["1","0"]' }] }]);
    s.close();
  });
});
