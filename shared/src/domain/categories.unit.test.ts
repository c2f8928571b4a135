import { describe, expect, it } from 'vitest';
import { CATEGORIES } from './categories.js';
import { LEAGUE_KEYS, classifyEvent, leagueLabel } from './categories.js';

const slugs = (...values: string[]) => values.map((slug) => ({ slug }));
const classify = (tags: Array<{ slug?: string | null; label?: string | null }> | null | undefined, title = 'Some event', extra = {}) =>
  classifyEvent({ tags, title, ...extra });

describe('classifyEvent — simulator tag sets', () => {
  it.each([
    ['epl', 'epl'],
    ['la-liga', 'laliga'],
    ['serie-a', 'seriea'],
    ['bundesliga', 'bundesliga'],
    ['ucl', 'ucl'],
    ['mls', 'mls'],
  ])('given sports, soccer, %s, when classified, then Football/%s', (tag, league) => {
    expect(classify(slugs('sports', 'soccer', tag))).toEqual({ category: 'Football', league });
  });

  it('given sports, basketball, nba, when classified, then Sport/nba', () => {
    expect(classify(slugs('sports', 'basketball', 'nba'))).toEqual({ category: 'Sport', league: 'nba' });
  });

  it('given sports, football, nfl, when classified, then Sport/nfl — American "football" is not soccer', () => {
    expect(classify(slugs('sports', 'football', 'nfl'))).toEqual({ category: 'Sport', league: 'nfl' });
    expect(classify(slugs('nfl', 'football', 'sports'))).toEqual({ category: 'Sport', league: 'nfl' });
  });

  it.each([
    ['bitcoin', 'btc'],
    ['ethereum', 'eth'],
    ['solana', 'sol'],
    ['xrp', 'xrp'],
  ])('given crypto, %s, when classified, then Crypto/%s', (tag, league) => {
    expect(classify(slugs('crypto', tag))).toEqual({ category: 'Crypto', league });
  });

  it.each(['politics', 'elections', 'geopolitics'])('given %s, when classified, then Politics', (tag) => {
    expect(classify(slugs(tag))).toEqual({ category: 'Politics', league: null });
  });

  it.each(['economy', 'fed', 'finance'])('given %s, when classified, then Economy', (tag) => {
    expect(classify(slugs(tag))).toEqual({ category: 'Economy', league: null });
  });

  it.each(['tech', 'ai', 'science'])('given %s, when classified, then Tech', (tag) => {
    expect(classify(slugs(tag))).toEqual({ category: 'Tech', league: null });
  });

  it.each(['pop-culture', 'culture', 'entertainment'])('given %s, when classified, then Culture', (tag) => {
    expect(classify(slugs(tag))).toEqual({ category: 'Culture', league: null });
  });
});

describe('classifyEvent — real exchange shapes', () => {
  it('given labels only with capitals and spaces, when classified, then matched like slugs', () => {
    expect(classify([{ label: 'Sports' }, { label: 'Soccer' }, { label: 'Premier League' }])).toEqual({ category: 'Football', league: 'epl' });
    expect(classify([{ label: 'La Liga', slug: null }])).toEqual({ category: 'Football', league: 'laliga' });
    expect(classify([{ label: 'Pop Culture' }])).toEqual({ category: 'Culture', league: null });
    expect(classify([{ label: 'AI' }])).toEqual({ category: 'Tech', league: null });
  });

  it('given full tag objects with ids and unknown tags, when classified, then the known tags decide', () => {
    const tags = [
      { id: '1', label: 'Featured', slug: 'featured' },
      { id: '100639', label: 'EPL', slug: 'EPL' },
      { id: '1', label: 'Sports', slug: 'sports' },
    ];
    expect(classify(tags)).toEqual({ category: 'Football', league: 'epl' });
  });

  it('given soccer with an unknown league, when classified, then Football with no league', () => {
    expect(classify(slugs('sports', 'soccer', 'eredivisie'))).toEqual({ category: 'Football', league: null });
    expect(classify(slugs('soccer'))).toEqual({ category: 'Football', league: null });
  });

  it('given other sports and esports keys, when classified, then Sport with their key', () => {
    expect(classify(slugs('sports', 'tennis', 'atp'))).toEqual({ category: 'Sport', league: 'atp' });
    expect(classify(slugs('esports', 'counter-strike'))).toEqual({ category: 'Sport', league: 'cs2' });
    expect(classify(slugs('esports', 'league-of-legends'))).toEqual({ category: 'Sport', league: 'lol' });
    expect(classify(slugs('formula-1'))).toEqual({ category: 'Sport', league: 'f1' });
    expect(classify(slugs('sports', 'tennis'))).toEqual({ category: 'Sport', league: null });
  });

  it('given null, undefined or empty tags and a coin in the title, when classified, then Crypto with its coin', () => {
    expect(classify(null, 'Bitcoin above $100k on Friday?')).toEqual({ category: 'Crypto', league: 'btc' });
    expect(classify(undefined, 'Will ETH hit $5,000?')).toEqual({ category: 'Crypto', league: 'eth' });
    expect(classify([], 'Solana Up or Down')).toEqual({ category: 'Crypto', league: 'sol' });
  });

  it('given no tags and a match, when classified, then Sport (or the league named in the title)', () => {
    expect(classify(null, 'Lakers vs. Celtics', { hasGame: true })).toEqual({ category: 'Sport', league: null });
    expect(classify(null, 'NBA: Lakers vs. Celtics', { hasGame: true })).toEqual({ category: 'Sport', league: 'nba' });
    expect(classify(null, 'Arsenal vs. Chelsea', { hasGame: true, seriesSlug: 'premier-league-2025' })).toEqual({ category: 'Football', league: 'epl' });
  });

  it('given no tags and category words in the title, when classified, then that category', () => {
    expect(classify(null, 'Fed decision in March?')).toEqual({ category: 'Economy', league: null });
    expect(classify(null, 'Presidential election winner 2028')).toEqual({ category: 'Politics', league: null });
    expect(classify(null, 'Best AI model end of year?')).toEqual({ category: 'Tech', league: null });
  });

  it('given no tags and nothing recognisable, when classified, then the Culture catch-all', () => {
    expect(classify(null, 'Will it snow in Paris on Christmas?')).toEqual({ category: 'Culture', league: null });
    expect(classify([{ slug: 'featured' }, { slug: null, label: null }, {}], 'Something')).toEqual({ category: 'Culture', league: null });
  });

  it('given title words that merely contain a coin ticker, when classified, then no false match', () => {
    expect(classify(null, 'Something happens in Bethlehem')).toEqual({ category: 'Culture', league: null });
  });

  it('given a series slug naming a league, when tags are generic, then the league from the series', () => {
    expect(classify(slugs('sports'), 'Knicks vs. Nets', { seriesSlug: 'nba-2026', hasGame: true })).toEqual({ category: 'Sport', league: 'nba' });
  });
});

describe('classifyEvent — conflicting tags', () => {
  it('given sports and politics, when classified, then Sport (category order)', () => {
    expect(classify(slugs('politics', 'sports'))).toEqual({ category: 'Sport', league: null });
  });

  it('given politics with a coin tag, when classified, then the coin key wins: Crypto/btc', () => {
    expect(classify(slugs('politics', 'bitcoin'))).toEqual({ category: 'Crypto', league: 'btc' });
  });

  it('given a league tag and broader category tags, when classified, then the league decides', () => {
    expect(classify(slugs('culture', 'politics', 'nba'))).toEqual({ category: 'Sport', league: 'nba' });
  });

  it('given economy, tech, politics and culture together, when classified, then the documented order', () => {
    expect(classify(slugs('culture', 'politics', 'tech', 'economy'))).toEqual({ category: 'Economy', league: null });
    expect(classify(slugs('culture', 'politics', 'tech'))).toEqual({ category: 'Tech', league: null });
    expect(classify(slugs('culture', 'politics'))).toEqual({ category: 'Politics', league: null });
    expect(classify(slugs('crypto', 'fed'))).toEqual({ category: 'Crypto', league: null });
  });

  it('given soccer and generic sports, when classified, then Football (more specific)', () => {
    expect(classify(slugs('sports', 'soccer'))).toEqual({ category: 'Football', league: null });
  });

  it('given tags that name a league, when the title names another, then the tags win', () => {
    expect(classify(slugs('nba'), 'Bitcoin-sponsored game')).toEqual({ category: 'Sport', league: 'nba' });
  });
});

describe('leagueLabel', () => {
  const known: Array<[string, string]> = [['epl', 'EPL'], ['laliga', 'La Liga'], ['seriea', 'Serie A'], ['ucl', 'Champions League'], ['nba', 'NBA'], ['btc', 'Bitcoin'], ['eth', 'Ethereum']];
  it.each(known)('given the known key %s, when labelled, then %s', (key, label) => {
    expect(leagueLabel(key)).toBe(label);
  });

  it('given an unknown key, when labelled, then the key upper-cased', () => {
    expect(leagueLabel('kbo')).toBe('KBO');
  });
});

describe('LEAGUE_KEYS', () => {
  it('has unique keys, each in a real category, each round-tripping through classifyEvent', () => {
    const keys = LEAGUE_KEYS.map((entry) => entry.key);
    expect(new Set(keys).size).toBe(keys.length);
    for (const entry of LEAGUE_KEYS) {
      expect(CATEGORIES).toContain(entry.category);
      expect(leagueLabel(entry.key)).toBe(entry.label);
      expect(classify(slugs(entry.key))).toEqual({ category: entry.category, league: entry.key });
    }
  });

  it('covers the keys the product names', () => {
    const keys = new Set(LEAGUE_KEYS.map((entry) => entry.key));
    for (const key of ['epl', 'laliga', 'seriea', 'bundesliga', 'ligue1', 'ucl', 'mls', 'nba', 'nfl', 'mlb', 'nhl', 'ncaab', 'cfb', 'ufc', 'atp', 'wta', 'f1', 'cs2', 'lol', 'dota2', 'valorant', 'btc', 'eth', 'sol', 'xrp', 'doge']) {
      expect(keys.has(key)).toBe(true);
    }
  });
});
