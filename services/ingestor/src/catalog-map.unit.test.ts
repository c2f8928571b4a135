import { describe, expect, it } from 'vitest';
import { parseGammaEvents } from '@pm/shared/exchange';
import { catalogResolution, mapEvents, toSnakeCase } from './catalog-map.js';

const market = (over: Record<string, unknown> = {}) => ({
  id: '501',
  conditionId: '0xabc',
  question: 'Will Arsenal win on 2026-04-05?',
  groupItemTitle: 'Arsenal',
  outcomes: '["Yes","No"]',
  outcomePrices: '["0.52","0.48"]',
  clobTokenIds: '["1001","1002"]',
  closed: false,
  volume: '10.5',
  sportsMarketType: 'bothTeamsToScore',
  line: '2.5',
  ...over,
});

function rows(markets: unknown[], over: Record<string, unknown> = {}) {
  const page = parseGammaEvents([
    {
      id: '9001',
      slug: 'ars-che',
      title: 'Arsenal vs. Chelsea',
      tags: [{ id: 1, label: 'Soccer', slug: 'soccer' }, { id: 2, label: 'EPL', slug: 'epl' }],
      gameId: 77,
      teams: [
        { name: 'Chelsea', abbreviation: 'CHE', ordering: 'away' },
        { name: 'Arsenal', abbreviation: 'ARS', ordering: 'Home' },
      ],
      volume: 100,
      volume24hr: '50',
      markets,
      ...over,
    },
  ]);
  return mapEvents(page.events);
}

describe('mapEvents', () => {
  it('maps an event, its markets and outcomes to rows', () => {
    const r = rows([market(), market({ id: '502', groupItemTitle: '', clobTokenIds: '["1003","1004"]', sportsMarketType: null, volumeNum: 99 })]);
    expect(r.events[0]).toMatchObject({
      id: '9001',
      category: 'Football',
      league: 'epl',
      game_id: '77',
      volume: 100,
      volume_24h: 50,
      teams: [
        { name: 'Chelsea', abbreviation: 'CHE', home: false },
        { name: 'Arsenal', abbreviation: 'ARS', home: true },
      ],
    });
    expect(r.markets.map((m) => [m.id, m.position, m.label, m.kind, m.volume, m.line])).toEqual([
      ['501', 0, 'Arsenal', 'both_teams_to_score', 10.5, 2.5],
      ['502', 1, 'Will Arsenal win on 2026-04-05?', null, 99, 2.5],
    ]);
    expect(r.outcomes.filter((o) => o.market_id === '501')).toEqual([
      { market_id: '501', outcome_index: 0, name: 'Yes', token_id: '1001', catalog_price: 0.52 },
      { market_id: '501', outcome_index: 1, name: 'No', token_id: '1002', catalog_price: 0.48 },
    ]);
    expect(r.resolutions).toEqual([]);
  });

  it('drops a market whose tokens another market already holds', () => {
    const r = rows([market(), market({ id: '502' })]);
    expect(r.markets.map((m) => m.id)).toEqual(['501']);
    expect(r.outcomes).toHaveLength(2);
  });
});

describe('catalogResolution', () => {
  const parsed = (over: Record<string, unknown>) => parseGammaEvents([{ id: '1', slug: 's', title: 't', markets: [market(over)] }]).events[0]!.markets[0]!;
  it('reads a winner from final prices of a closed market', () => {
    expect(catalogResolution(parsed({ closed: true, outcomePrices: '["1","0"]' }))).toEqual({ winningOutcomeIndex: 0, voided: false });
    expect(catalogResolution(parsed({ closed: true, outcomePrices: '["0", "1"]' }))).toEqual({ winningOutcomeIndex: 1, voided: false });
  });
  it('is void when resolved without a single winner', () => {
    expect(catalogResolution(parsed({ closed: true, outcomePrices: '["0.5","0.5"]', umaResolutionStatus: 'resolved' }))).toEqual({ winningOutcomeIndex: null, voided: true });
  });
  it('is nothing for an open market or a closed one still awaiting resolution', () => {
    expect(catalogResolution(parsed({ closed: false, outcomePrices: '["1","0"]' }))).toBeNull();
    expect(catalogResolution(parsed({ closed: true, outcomePrices: '["0.9","0.1"]', umaResolutionStatus: 'proposed' }))).toBeNull();
  });
});

describe('toSnakeCase', () => {
  it('turns the exchange\'s market types into snake_case', () => {
    expect(toSnakeCase('moneyline')).toBe('moneyline');
    expect(toSnakeCase('bothTeamsToScore')).toBe('both_teams_to_score');
    expect(toSnakeCase('both-teams-to-score')).toBe('both_teams_to_score');
    expect(toSnakeCase('  ')).toBeNull();
    expect(toSnakeCase(null)).toBeNull();
  });
});
