import { describe, expect, it } from 'vitest';
import { liveMatchSchema } from '@pm/shared/api';
import type { CatalogEvent, CatalogMarket, GameState } from './model.js';
import { bucketOf, downsample, dueRanges, rangeStart } from './history-buckets.js';
import { buildLiveSnapshot, matchResult } from './live.js';
import { change24h } from './payloads.js';

const DAY = 86_400;

describe('history buckets', () => {
  it('given epoch-aligned buckets, a point on a boundary starts the next bucket', () => {
    expect(bucketOf(299, 300)).toBe(0);
    expect(bucketOf(300, 300)).toBe(1);
    expect(bucketOf(86_399, 86_400)).toBe(0);
  });

  it('given the ranges, then 1d reaches back a day, 1w a week, 1m thirty days and max everything', () => {
    const now = 100 * DAY;
    expect(rangeStart('1d', now)).toBe(now - DAY);
    expect(rangeStart('1w', now)).toBe(now - 7 * DAY);
    expect(rangeStart('1m', now)).toBe(now - 30 * DAY);
    expect(rangeStart('max', now)).toBeNull();
  });

  it('keeps the LAST point of each bucket, ascending, at that point\'s own time', () => {
    const now = 10 * DAY;
    const base = now - 3600; // inside 1d; bucket-aligned (10 days is a multiple of 5 min)
    const points = [
      { t: base + 610, chance: 0.7 },
      { t: base + 10, chance: 0.5 },
      { t: base + 250, chance: 0.55 }, // last of bucket [base, base+300)
      { t: base + 400, chance: 0.6 }, // last of bucket [base+300, base+600)
      { t: base + 601, chance: 0.65 },
    ];
    expect(downsample(points, '1d', now)).toEqual([
      { t: base + 250, chance: 0.55 },
      { t: base + 400, chance: 0.6 },
      { t: base + 610, chance: 0.7 },
    ]);
  });

  it('drops points older than the range and rounds chances to 4 decimals', () => {
    const now = 40 * DAY;
    const points = [
      { t: now - 2 * DAY, chance: 0.1 },
      { t: now - 100, chance: 0.123456 },
    ];
    expect(downsample(points, '1d', now)).toEqual([{ t: now - 100, chance: 0.1235 }]);
    // max keeps everything, one point per day
    expect(downsample(points, 'max', now).map((p) => p.t)).toEqual([now - 2 * DAY, now - 100]);
  });

  it('a week of points every minute gives about 336 points at 30 min and 288 a day at 5 min', () => {
    const now = 1_800_000_000 - (1_800_000_000 % 1800);
    const points = Array.from({ length: 7 * 24 * 60 }, (_, i) => ({ t: now - i * 60, chance: 0.5 }));
    const week = downsample(points, '1w', now);
    expect(week.length).toBeGreaterThanOrEqual(336);
    expect(week.length).toBeLessThanOrEqual(337);
    const day = downsample(points, '1d', now);
    expect(day.length).toBeGreaterThanOrEqual(288);
    expect(day.length).toBeLessThanOrEqual(289);
  });

  it('rebuilds 1d at most every 10 s and the other ranges at most once a minute', () => {
    expect(dueRanges({}, 0)).toEqual(['1d', '1w', '1m', 'max']);
    const at = { '1d': 0, '1w': 0, '1m': 0, max: 0 };
    expect(dueRanges(at, 9_999)).toEqual([]);
    expect(dueRanges(at, 10_000)).toEqual(['1d']);
    expect(dueRanges(at, 60_000)).toEqual(['1d', '1w', '1m', 'max']);
  });
});

function market(id: string, question: string, outcomes: string[], over: Partial<CatalogMarket> = {}): CatalogMarket {
  return {
    id,
    eventId: 'e',
    position: 0,
    question,
    label: '',
    kind: 'moneyline',
    closesAt: null,
    closed: false,
    oneDayPriceChange: null,
    resolution: null,
    outcomes: outcomes.map((name, index) => ({ index, name, tokenId: `${id}-${index}`, catalogPrice: null, finalChance: null })),
    ...over,
  };
}

const teams = [
  { name: 'Arsenal', abbreviation: 'ars', home: true },
  { name: 'Chelsea', abbreviation: 'che', home: false },
];

function soccer(order: CatalogMarket[]): CatalogEvent {
  return {
    id: 'e',
    slug: 'ars-che',
    title: 'Arsenal vs Chelsea',
    category: 'Football',
    league: 'epl',
    closesAt: null,
    volume: 1,
    volume24h: 1,
    closed: false,
    teams,
    markets: order,
  };
}

const homeWin = market('m-home', 'Will Arsenal win on 2026-11-22?', ['Yes', 'No']);
const draw = market('m-draw', 'Will Arsenal vs. Chelsea end in a draw?', ['Yes', 'No']);
const awayWin = market('m-away', 'Will Chelsea win on 2026-11-22?', ['Yes', 'No']);
const chances = new Map([
  ['m-home-0', 0.45],
  ['m-home-1', 0.55],
  ['m-draw-0', 0.3],
  ['m-away-0', 0.25],
]);

describe('a match result', () => {
  it('soccer: home, draw, away from three Yes/No markets, whatever order the catalog lists them in', () => {
    const expected = [
      { label: 'Arsenal', chance: 0.45, market_id: 'm-home' },
      { label: 'Draw', chance: 0.3, market_id: 'm-draw' },
      { label: 'Chelsea', chance: 0.25, market_id: 'm-away' },
    ];
    expect(matchResult(soccer([homeWin, draw, awayWin]), chances)).toEqual(expected);
    expect(matchResult(soccer([awayWin, homeWin, draw]), chances)).toEqual(expected);
    expect(matchResult(soccer([draw, awayWin, homeWin, market('m-btts', 'Both teams to score?', ['Yes', 'No'], { kind: 'both_teams_to_score' })]), chances)).toEqual(expected);
  });

  it('two-way game: home then away from the one moneyline market, each outcome\'s chance on the same market id', () => {
    const ml = market('m-ml', 'Celtics vs. Lakers', ['Lakers', 'Celtics']);
    const e = {
      ...soccer([market('m-spread', 'Spread', ['Lakers', 'Celtics'], { kind: 'spreads' }), ml]),
      teams: [
        { name: 'Celtics', abbreviation: 'bos', home: true },
        { name: 'Lakers', abbreviation: 'lal', home: false },
      ],
    };
    const c = new Map([
      ['m-ml-0', 0.4],
      ['m-ml-1', 0.6],
    ]);
    expect(matchResult(e, c)).toEqual([
      { label: 'Celtics', chance: 0.6, market_id: 'm-ml' },
      { label: 'Lakers', chance: 0.4, market_id: 'm-ml' },
    ]);
  });

  it('no moneyline market: no result', () => {
    expect(matchResult(soccer([market('m-t', 'O/U 2.5', ['Over', 'Under'], { kind: 'totals' })]), chances)).toEqual([]);
  });
});

describe('the live list', () => {
  const game = (over: Partial<GameState>): GameState => ({
    gameId: 'g',
    eventId: 'e',
    league: 'sea',
    live: true,
    ended: false,
    score: '1-0',
    clock: '74',
    period: '2H',
    updatedAt: 'x',
    ...over,
  });

  it('lists a match in play with the game state and the event\'s league key, and leaves out ended or not-started ones', () => {
    const inPlay = soccer([homeWin, draw, awayWin]);
    const ended = { ...inPlay, id: 'e2', slug: 'ended' };
    const later = { ...inPlay, id: 'e3', slug: 'later' };
    const games = new Map([
      ['e', game({})],
      ['e2', game({ eventId: 'e2', ended: true })],
      ['e3', game({ eventId: 'e3', live: false })],
    ]);
    const { matches } = buildLiveSnapshot([inPlay, ended, later], games, chances, 'https://web.example');
    expect(matches).toHaveLength(1);
    const m = liveMatchSchema.parse(matches[0]);
    expect(m).toMatchObject({ slug: 'ars-che', league: 'epl', score: '1-0', clock: '74', period: '2H', markets: 3, url: 'https://web.example/e/ars-che' });
    expect(m.result.map((r) => r.market_id)).toEqual(['m-home', 'm-draw', 'm-away']);
    expect(m.teams).toEqual(teams);
  });
});

describe('change_24h', () => {
  const m = market('m', 'Q?', ['Yes', 'No'], { oneDayPriceChange: -0.05 });
  it('is the first outcome\'s chance now minus 24 h ago, 4 decimals', () => {
    expect(change24h(m, new Map([['m-0', 0.61234]]), new Map([['m-0', 0.5]]))).toBe(0.1123);
  });
  it('falls back to the catalog figure when history does not reach back 24 h, else 0', () => {
    expect(change24h(m, new Map([['m-0', 0.6]]), new Map())).toBe(-0.05);
    expect(change24h({ ...m, oneDayPriceChange: null }, new Map([['m-0', 0.6]]), new Map())).toBe(0);
  });
});
