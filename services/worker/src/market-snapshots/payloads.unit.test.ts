import { describe, expect, it } from 'vitest';
import { eventCardSchema, eventSchema, leagueEntrySchema, type Category } from '@pm/shared/api';
import { LIST_SNAPSHOT_SIZE } from '@pm/shared/snapshots';
import type { CatalogEvent, CatalogMarket, GameState } from './model.js';
import {
  buildEvent,
  buildEventCard,
  buildLeagueEntries,
  buildListSnapshots,
  busiestFirst,
  oddsForChance,
  outcomeChance,
  parseChance,
  platformSplit,
  searchText,
} from './payloads.js';
import { snapshotEtag } from '@pm/shared/redis';

const WEB = 'https://web.example';

function market(id: string, over: Partial<CatalogMarket> = {}): CatalogMarket {
  return {
    id,
    eventId: 'e',
    position: 0,
    question: `Question ${id}?`,
    label: `Label ${id}`,
    kind: null,
    closesAt: null,
    closed: false,
    oneDayPriceChange: null,
    resolution: null,
    outcomes: [
      { index: 0, name: 'Yes', tokenId: `${id}-yes`, catalogPrice: 0.5, finalChance: null },
      { index: 1, name: 'No', tokenId: `${id}-no`, catalogPrice: 0.5, finalChance: null },
    ],
    ...over,
  };
}

function event(id: string, over: Partial<CatalogEvent> = {}): CatalogEvent {
  return {
    id,
    slug: id,
    title: `Title ${id}`,
    category: 'Politics',
    league: null,
    closesAt: null,
    volume: 0,
    volume24h: 0,
    closed: false,
    teams: [],
    markets: [market(`${id}-m`)],
    ...over,
  };
}

const none = new Map<string, number>();

describe('odds of a chance', () => {
  it('given 0.25, then the five formats of docs/design.md', () => {
    expect(oddsForChance(0.25)).toEqual({ percent: '25%', decimal: '4.00', fractional: '3/1', american: '+300', price: '25¢' });
  });
  it('given 0 (a resolved losing outcome), then percent and price say 0 and no payout is invented', () => {
    expect(oddsForChance(0)).toEqual({ percent: '0%', decimal: null, fractional: null, american: null, price: '0¢' });
  });
  it('given 1 (a resolved winning outcome), then 100%, 100¢, decimal 1.00 and no fraction or line', () => {
    expect(oddsForChance(1)).toEqual({ percent: '100%', decimal: '1.00', fractional: null, american: null, price: '100¢' });
  });
});

describe('an outcome chance', () => {
  const o = { index: 0, name: 'Yes', tokenId: 't', catalogPrice: 0.3, finalChance: null };
  it('is the live chance when Redis has one', () => {
    expect(outcomeChance(o, new Map([['t', 0.61]]))).toBe(0.61);
  });
  it('is the final chance once the market is settled, whatever the last quote was', () => {
    expect(outcomeChance({ ...o, finalChance: 1 }, new Map([['t', 0.81]]))).toBe(1);
    expect(outcomeChance({ ...o, finalChance: 0 }, new Map([['t', 0.96]]))).toBe(0);
  });
  it('falls back to the catalog price, then to 0', () => {
    expect(outcomeChance(o, none)).toBe(0.3);
    expect(outcomeChance({ ...o, catalogPrice: null }, none)).toBe(0);
  });
  it('parses only numbers from 0 to 1', () => {
    expect(parseChance('0.535')).toBe(0.535);
    expect(parseChance('0')).toBe(0);
    expect(parseChance('1')).toBe(1);
    for (const bad of ['', 'abc', '1.5', '-0.1', 'NaN', null, undefined]) expect(parseChance(bad)).toBeUndefined();
  });
});

describe('platform split', () => {
  it('is [] without market_splits rows', () => {
    expect(platformSplit(market('m'), new Map())).toEqual([]);
  });
  it('is people per outcome in outcome order, 0 where an outcome has no row', () => {
    expect(platformSplit(market('m'), new Map([['m', new Map([[1, 4]])]]))).toEqual([0, 4]);
  });
});

describe('an event page', () => {
  const game: GameState = { gameId: 'g', eventId: 'e', league: '', live: false, ended: false, score: '0-0', clock: '', period: 'HT', updatedAt: 'x' };
  const e = event('e', {
    league: 'nba',
    category: 'Sport',
    closesAt: new Date('2030-01-01T00:00:00Z'),
    volume: 12.5,
    teams: [{ name: 'Home', abbreviation: 'HOM', home: true }],
    markets: [market('a', { label: '' }), market('b', { closed: true, oneDayPriceChange: -0.1 }), market('c')],
  });

  it('has every market in the given order, with the label falling back to the question', () => {
    const page = eventSchema.parse(buildEvent(e, { chances: none, splits: new Map(), game: undefined, webUrl: WEB }));
    expect(page.markets.map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect(page.markets[0]?.label).toBe('Question a?');
    expect(page.markets[1]).toMatchObject({ closed: true, change_24h: -0.1, url: `${WEB}/m/b` });
    expect(page.markets[2]?.change_24h).toBe(0);
    expect(page).toMatchObject({ market_count: 3, closes_at: '2030-01-01T00:00:00.000Z', volume: 12.5, game: null, url: `${WEB}/e/e` });
  });

  it('has the game with the event teams, the league falling back to the event league', () => {
    const page = buildEvent(e, { chances: none, splits: new Map(), game, webUrl: WEB });
    expect(page.game).toEqual({ live: false, score: '0-0', clock: '', period: 'HT', league: 'nba', teams: e.teams });
  });

  it("names the game's league by our league key, not the feed's abbreviation", () => {
    const page = buildEvent(e, { chances: none, splits: new Map(), game: { ...game, league: 'basketball-nba' }, webUrl: WEB });
    expect(page.game?.league).toBe('nba');
    const unplaced = buildEvent({ ...e, league: null }, { chances: none, splits: new Map(), game: { ...game, league: 'sea' }, webUrl: WEB });
    expect(unplaced.game?.league).toBe('sea');
  });
});

describe('an event card', () => {
  it('shows the first three open markets and counts them all', () => {
    const e = event('e', {
      markets: [market('a', { closed: true }), market('b'), market('c', { closed: true }), market('d'), market('e'), market('f')],
    });
    const card = eventCardSchema.parse(buildEventCard(e, none, WEB));
    expect(card.markets.map((m) => m.id)).toEqual(['b', 'd', 'e']);
    expect(Object.keys(card.markets[0] ?? {})).toEqual(['id', 'question', 'outcomes']);
    expect(card.market_count).toBe(6);
  });
});

describe('lists', () => {
  it('orders busiest first by 24 h volume, ties by slug', () => {
    const ordered = busiestFirst([event('b', { volume24h: 5 }), event('c', { volume24h: 9 }), event('a', { volume24h: 5 })]);
    expect(ordered.map((e) => e.slug)).toEqual(['c', 'a', 'b']);
  });

  it('lists leagues once per (group, league), by display order then label', () => {
    const entries = buildLeagueEntries([
      event('1', { category: 'Crypto', league: 'eth' }),
      event('2', { category: 'Crypto', league: 'btc' }),
      event('3', { category: 'Football', league: 'epl' }),
      event('4', { category: 'Sport', league: 'nba' }),
      event('5', { category: 'Crypto', league: 'btc' }),
      event('6', { category: 'Politics', league: null }),
    ]);
    expect(entries.map((l) => leagueEntrySchema.parse(l))).toEqual([
      { group: 'Sport', label: 'NBA', league: 'nba' },
      { group: 'Football', label: 'EPL', league: 'epl' },
      { group: 'Crypto', label: 'Bitcoin', league: 'btc' },
      { group: 'Crypto', label: 'Ethereum', league: 'eth' },
    ]);
  });

  it('builds trending, all seven categories, each league and search; caps lists at 60', () => {
    const many = Array.from({ length: 70 }, (_, i) =>
      event(`ev${String(i).padStart(2, '0')}`, { volume24h: i, category: (i % 2 === 0 ? 'Crypto' : 'Sport') as Category, league: i % 2 === 0 ? 'btc' : null }),
    );
    const closed = event('zz-closed', { closed: true, volume24h: 1000 });
    const { lists, search, leagueKeys } = buildListSnapshots([...many, closed], none, WEB);
    expect(lists.map((l) => l.name)).toEqual([
      'markets:trending',
      'markets:category:Football',
      'markets:category:Sport',
      'markets:category:Crypto',
      'markets:category:Politics',
      'markets:category:Economy',
      'markets:category:Tech',
      'markets:category:Culture',
      'markets:league:btc',
    ]);
    expect(leagueKeys).toEqual(['btc']);
    const trending = lists[0]?.payload;
    expect(trending?.events).toHaveLength(LIST_SNAPSHOT_SIZE);
    expect(trending?.events[0]?.slug).toBe('ev69');
    expect(trending?.events.some((e) => e.slug === 'zz-closed')).toBe(false);
    expect(lists.find((l) => l.name === 'markets:category:Crypto')?.payload.events).toHaveLength(35);
    expect(lists.find((l) => l.name === 'markets:category:Tech')?.payload.events).toEqual([]);
    expect(search.payload.entries).toHaveLength(70);
    expect(search.payload.entries[0]).toMatchObject({ category: 'Sport', league: null, text: 'title ev69\nquestion ev69-m?' });
  });

  it('lists no open event whose markets are all closed (it would be an empty card)', () => {
    const stale = event('stale', { volume24h: 1000, markets: [market('s1', { closed: true }), market('s2', { closed: true })] });
    const live = event('live', { volume24h: 1, markets: [market('l1', { closed: true }), market('l2')] });
    const { lists, search } = buildListSnapshots([stale, live], none, WEB);
    const trending = lists[0]?.payload.events ?? [];
    expect(trending.map((e) => e.slug)).toEqual(['live']);
    expect(trending[0]?.markets.map((m) => m.id)).toEqual(['l2']);
    expect(search.payload.entries.map((e) => e.card.slug)).toEqual(['live']);
  });

  it('search text is the lower-cased title and every question, one per line', () => {
    expect(searchText(event('e', { title: 'BIG Match', markets: [market('X'), market('Y', { closed: true })] }))).toBe(
      'big match\nquestion x?\nquestion y?',
    );
  });
});

describe('etag', () => {
  it('is strong, quoted, stable for a body and different for another', () => {
    const a = snapshotEtag('{"a":1}');
    expect(a).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(snapshotEtag('{"a":1}')).toBe(a);
    expect(snapshotEtag('{"a":2}')).not.toBe(a);
  });
});
