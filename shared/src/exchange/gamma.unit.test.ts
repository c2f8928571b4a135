import { describe, expect, it } from 'vitest';
import { parseGammaEvents } from './gamma.js';

const TOKEN_A = '71321045679252212594626385532706912750332728571942532289631379312455583992563';
const TOKEN_B = '52114319501245915516055106046884209969926127482827954674443846427813813222426';

function market(over: Record<string, unknown> = {}) {
  return {
    id: '501',
    conditionId: '0xabc',
    question: 'Will Arsenal win?',
    slug: 'will-arsenal-win',
    groupItemTitle: 'Arsenal',
    outcomes: '["Yes", "No"]',
    outcomePrices: '["0.52", "0.48"]',
    clobTokenIds: `["${TOKEN_A}", "${TOKEN_B}"]`,
    endDate: '2026-04-05 15:10:00+00',
    closed: false,
    active: true,
    acceptingOrders: true,
    volume: '12345.5',
    volumeNum: 12345.5,
    oneDayPriceChange: 0.01,
    sportsMarketType: 'moneyline',
    ...over,
  };
}

function event(over: Record<string, unknown> = {}) {
  return {
    id: 9001,
    slug: 'ars-che',
    title: 'Arsenal vs. Chelsea',
    startDate: '2026-04-05T14:00:00Z',
    endDate: '2026-04-05 16:00:00+00',
    active: true,
    closed: false,
    volume: '100000',
    volume24hr: 5000,
    liquidity: 321.5,
    tags: [{ id: '1', label: 'Soccer', slug: 'soccer' }],
    gameId: 12345,
    teams: [
      { name: 'Arsenal', abbreviation: 'ARS', ordering: 'home' },
      { name: 'Chelsea', abbreviation: 'CHE', ordering: 'away' },
    ],
    markets: [market()],
    ...over,
  };
}

describe('parseGammaEvents', () => {
  it('decodes JSON-encoded fields, numbers as strings and lenient times', () => {
    const page = parseGammaEvents([event()]);
    expect(page.skippedEvents).toBe(0);
    const e = page.events[0]!;
    expect(e.id).toBe('9001');
    expect(e.volume).toBe(100000);
    expect(e.endDate).toBe('2026-04-05T16:00:00.000Z');
    expect(e.gameId).toBe('12345');
    const m = e.markets[0]!;
    expect(m.outcomes).toEqual(['Yes', 'No']);
    expect(m.outcomePrices).toEqual(['0.52', '0.48']);
    expect(m.clobTokenIds).toEqual([TOKEN_A, TOKEN_B]);
    expect(m.endDate).toBe('2026-04-05T15:10:00.000Z');
    expect(m.volume).toBe(12345.5);
    expect(m.position).toBe(0);
  });

  it('accepts null tags, missing optional fields and absent teams', () => {
    const page = parseGammaEvents([
      { id: '7', slug: 'x', title: 'X', tags: null, markets: [market({ groupItemTitle: undefined, sportsMarketType: null, oneDayPriceChange: undefined })] },
    ]);
    expect(page.skippedEvents).toBe(0);
    const e = page.events[0]!;
    expect(e.tags).toEqual([]);
    expect(e.teams).toEqual([]);
    expect(e.gameId).toBeNull();
    expect(e.volume).toBeNull();
    expect(e.markets[0]!.groupItemTitle).toBeNull();
    expect(e.markets[0]!.oneDayPriceChange).toBeNull();
  });

  it('skips and counts a bad event without losing the rest of the page', () => {
    const page = parseGammaEvents([{ id: '1', title: 'no slug' }, 'garbage', event()]);
    expect(page.skippedEvents).toBe(2);
    expect(page.events.map((e) => e.slug)).toEqual(['ars-che']);
  });

  it('skips and counts a bad market, keeping its siblings and their positions', () => {
    const page = parseGammaEvents([
      event({ markets: [market({ clobTokenIds: null, id: '1' }), market({ id: '2', outcomes: 'not json' }), market({ id: '3' })] }),
    ]);
    expect(page.skippedMarkets).toBe(2);
    expect(page.events[0]!.markets.map((m) => [m.id, m.position])).toEqual([['3', 2]]);
  });

  it('rejects a market whose token count differs from its outcome count', () => {
    const page = parseGammaEvents([event({ markets: [market({ clobTokenIds: `["${TOKEN_A}"]` })] })]);
    expect(page.skippedMarkets).toBe(1);
  });

  it('yields nothing for a body that is not an array', () => {
    expect(parseGammaEvents({ error: 'x' }).events).toEqual([]);
  });
});
