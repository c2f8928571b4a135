import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseGammaEvents, parseGammaSports } from '@pm/shared/exchange';
import { catalogResolution, indexSports, mapEvents, toSnakeCase } from './catalog-map.js';

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

/** Real Gamma payloads (test/fixtures/exchange-captures, sources in its README). */
const capturedCatalog = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../../test/fixtures/exchange-captures/catalog.json', import.meta.url)), 'utf8'),
) as Array<Record<string, unknown>>;
const capturedSports = parseGammaSports(
  JSON.parse(readFileSync(fileURLToPath(new URL('../../../../test/fixtures/exchange-captures/sports.json', import.meta.url)), 'utf8')),
);
const captured = (id: string) => {
  const e = capturedCatalog.find((c) => c.id === id);
  if (!e) throw new Error(`no captured event ${id}`);
  return structuredClone(e);
};
const mapCaptured = (events: unknown[], sports = capturedSports) => mapEvents(parseGammaEvents(events).events, indexSports(sports));

describe('catalog mapping of real gamma payloads', () => {
  it("a match's starts_at is its kick-off (the market's non-ISO gameStartTime), not the listing's startDate", () => {
    const [ev] = mapCaptured([captured('952074')]).events;
    expect(ev!.starts_at).toBe('2026-09-15T18:00:00.000Z');
    // An event's own startTime wins when present.
    const withStart = { ...captured('952074'), startTime: '2026-09-15 17:45:00+00' };
    expect(mapCaptured([withStart]).events[0]!.starts_at).toBe('2026-09-15T17:45:00.000Z');
    // Not a match: the listing's start.
    expect(mapCaptured([captured('34044')]).events[0]!.starts_at).toBe('2024-11-20T12:00:00.000Z');
  });

  it("leagues come from the exchange's sports list; an unknown league keeps its own key", () => {
    const r = mapCaptured([captured('952074'), captured('1025935'), captured('34044')]);
    expect(r.events.map((e) => [e.id, e.category, e.league])).toEqual([
      ['952074', 'Football', 'laliga'],
      ['1025935', 'Sport', 'cs2'],
      ['34044', 'Politics', null],
    ]);
    // The same real events, listed by the exchange under league keys our table does not have.
    const unknown = capturedSports.map((s) => ({ ...s, sport: s.sport === 'lal' ? 'mlp' : 'kings-league' }));
    const u = mapCaptured([captured('952074'), captured('1025935')], unknown);
    expect(u.events.map((e) => [e.category, e.league])).toEqual([
      ['Football', 'mlp'],
      ['Sport', 'kings-league'],
    ]);
  });

  it("a market's chance is right before its first frame: the exchange's rule on the catalog's bestBid/bestAsk/lastTradePrice", () => {
    const r = mapCaptured([captured('952074'), captured('1025935'), captured('34044')]);
    const price = (token: string) => r.outcomes.find((o) => o.token_id === token)?.catalog_price;
    // La Liga: 0.47/0.48 → 0.475; the No token mirrors it (0.52/0.53 → 0.525).
    expect(price('34070873903326512308551939806999682036390469897009365763240571813577238015749')).toBe(0.475);
    expect(price('62202648498708590000718762161193939131997649903640604421558354360391504904305')).toBe(0.525);
    // CS2: 0.999/1 → 0.9995 and 0.0005, shown at the exchange's extreme ticks (0.999, 0.001): past them no odds format is faithful.
    expect(price('2045264127813449378467820057626190155888520958184349779170291761772722787494')).toBe(0.999);
    expect(price('1802174699299608821692283385063543476680957896999298561160128776327503253345')).toBe(0.001);
    // A wide catalog spread shows the last trade, like the live rule.
    const wide = captured('34044');
    Object.assign((wide.markets as Array<Record<string, unknown>>)[0]!, { bestBid: 0.02, bestAsk: 0.2, lastTradePrice: 0.05, outcomePrices: '["0.11","0.89"]' });
    const w = mapCaptured([wide]).outcomes.map((o) => o.catalog_price);
    expect(w).toEqual([0.05, 0.95]);
  });

  it('keeps negRisk, and takes volumes from whichever field is present', () => {
    const r = mapCaptured([captured('952074'), captured('1025935')]);
    expect(r.events.map((e) => e.neg_risk)).toEqual([true, false]);
    expect(r.markets.map((m) => m.neg_risk)).toEqual([true, false]);
    // The captured event states its 24h volume but no total, and neither do its markets: total 0.
    expect(r.events[0]).toMatchObject({ volume_24h: 4006673.8687789985, volume: 0 });
    // Only the markets state a 24h volume: their sum.
    const noEventVolume = captured('952074');
    delete noEventVolume.volume24hr;
    expect(mapCaptured([noEventVolume]).events[0]!.volume_24h).toBe(3692723.4925869987);
    // A market's total volume from volumeClob when volumeNum and volume are absent.
    const clob = captured('1025935');
    Object.assign((clob.markets as Array<Record<string, unknown>>)[0]!, { volumeClob: 1234.5 });
    expect(mapCaptured([clob]).markets[0]!.volume).toBe(1234.5);
  });
});
