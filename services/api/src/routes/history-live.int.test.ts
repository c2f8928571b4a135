import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { HistorySnapshot, LiveSnapshot } from '@pm/shared/snapshots';
import { liveMatchesResponseSchema, marketHistoryResponseSchema } from '@pm/shared/api';
import { event, startSeededApps, writeFeed, writeSnapshot, type RunningApp } from '../testing/fixtures.js';
import { body, expectError } from '../testing/responses.js';

/**
 * Endpoints 3 (price history) and 4 (live matches) against a real Redis holding snapshots in the
 * worker's format; every body is validated against the endpoint table's response schema.
 */

let api: RunningApp;
let emptyApi: RunningApp;
const now = Date.now();

const soccer = event('epl-ars-che', 'Arsenal vs Chelsea', 'Football', ['Will Arsenal win?', 'Will it be a draw?', 'Will Chelsea win?']);
const [m0, m1] = soccer.markets;
const points = (range: HistorySnapshot['range'], n: number, chance: number): HistorySnapshot => ({
  market_id: m0!.id,
  range,
  points: Array.from({ length: n }, (_, i) => ({ t: 1_800_000_000 + i * 300, chance })),
});
const live: LiveSnapshot = {
  matches: [
    {
      slug: soccer.slug,
      title: soccer.title,
      league: 'epl',
      score: '1-0',
      clock: '74',
      period: '2H',
      teams: [
        { name: 'Arsenal', abbreviation: 'ars', home: true },
        { name: 'Chelsea', abbreviation: 'che', home: false },
      ],
      result: [
        { label: 'Arsenal', chance: 0.6, market_id: m0!.id },
        { label: 'Draw', chance: 0.25, market_id: m1!.id },
        { label: 'Chelsea', chance: 0.15, market_id: soccer.markets[2]!.id },
      ],
      markets: 3,
      url: soccer.url,
    },
  ],
};

async function get(path: string, base = api.base): Promise<Response> {
  return fetch(`${base}${path}`);
}

/** Everything this file starts, stopped newest first after it. */
const teardown = new AsyncDisposableStack();
afterAll(() => teardown.disposeAsync());

beforeAll(async () => {
  const seed = async (r: Redis, p: string) => {
    await writeSnapshot(r, p, `event:${soccer.slug}`, { event: soccer }, '"ev-1"');
    await writeSnapshot(r, p, `history:${m0!.id}:1w`, points('1w', 5, 0.25), '"h-1w"');
    await writeSnapshot(r, p, `history:${m0!.id}:max`, points('max', 40, 0.3), '"h-max"');
    await writeSnapshot(r, p, 'live', live, '"live-1"');
    await writeFeed(r, p, true, now);
  };
  ({ api, emptyApi } = await startSeededApps(teardown, 'api_history', seed));
});


describe('GET /api/v1/markets/{eventSlug}/history', () => {
  it('defaults to the event\'s first market and range 1w, with the question and first outcome', async () => {
    const res = await get(`/api/v1/markets/${soccer.slug}/history`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=15');
    const data = await body(res, marketHistoryResponseSchema);
    expect(data).toMatchObject({ ok: true, market_id: m0!.id, question: 'Will Arsenal win?', outcome: 'Yes', range: '1w' });
    expect(data.points).toHaveLength(5);
    expect(data.points[0]).toEqual({ t: 1_800_000_000, chance: 0.25 });
  });

  it('serves the asked range, case-insensitively', async () => {
    const data = await body(await get(`/api/v1/markets/${soccer.slug}/history?range=MAX&market=${m0!.id}`), marketHistoryResponseSchema);
    expect(data.range).toBe('max');
    expect(data.points).toHaveLength(40);
  });

  it('a market of the event without recorded history: 200 with no points', async () => {
    const data = await body(await get(`/api/v1/markets/${soccer.slug}/history?market=${m1!.id}&range=1d`), marketHistoryResponseSchema);
    expect(data).toMatchObject({ market_id: m1!.id, question: 'Will it be a draw?', range: '1d', points: [] });
  });

  it('a bad range is a 400 naming the allowed values', async () => {
    const message = await expectError(await get(`/api/v1/markets/${soccer.slug}/history?range=2y`), 400, 'bad_request');
    expect(message).toBe('range must be one of 1d, 1w, 1m, max');
  });

  it('an unknown event, or a market not in the event, is a 404', async () => {
    await expectError(await get('/api/v1/markets/no-such-event/history'), 404, 'not_found');
    const message = await expectError(await get(`/api/v1/markets/${soccer.slug}/history?market=someone-elses-market`), 404, 'not_found');
    expect(message).toContain('someone-elses-market');
  });

  it('answers If-None-Match with 304 while nothing changed', async () => {
    const first = await get(`/api/v1/markets/${soccer.slug}/history`);
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    const again = await fetch(`${api.base}/api/v1/markets/${soccer.slug}/history`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
  });
});

describe('GET /api/v1/live', () => {
  it('lists the matches in play with count, result home-draw-away and market ids', async () => {
    const res = await get('/api/v1/live');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=15');
    const data = await body(res, liveMatchesResponseSchema);
    expect(data.count).toBe(1);
    expect(data.matches[0]?.result.map((r) => r.label)).toEqual(['Arsenal', 'Draw', 'Chelsea']);
    expect(data.matches[0]).toEqual(live.matches[0]);
  });

  it('before the worker has written the list: 503', async () => {
    await expectError(await get('/api/v1/live', emptyApi.base), 503, 'unavailable');
  });
});
