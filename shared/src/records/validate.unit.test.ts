import { describe, expect, it } from 'vitest';
import { RecordRefused } from './errors.js';
import { newPublicId } from './ids.js';
import { parseHandle, parseInterest } from './validate.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof RecordRefused ? err.code : 'other';
  }
  return 'none';
};

describe('handles', () => {
  it('accepts 3 to 20 letters, digits or underscores, with an optional leading @', () => {
    expect(parseHandle('@Mia_99')).toBe('Mia_99');
    expect(parseHandle('abc')).toBe('abc');
    expect(parseHandle('a'.repeat(20))).toBe('a'.repeat(20));
  });
  it('refuses anything else', () => {
    for (const bad of ['ab', 'a'.repeat(21), 'has space', 'dash-ed', 'émile', '']) expect(codeOf(() => parseHandle(bad))).toBe('bad_handle');
  });
});

describe('interests', () => {
  const canonical = { football: 'Football', 'Football: EPL': 'Football: EPL', 'football:epl': 'Football: EPL', 'Sport: nba': 'Sport: NBA', 'Crypto: Bitcoin': 'Crypto: Bitcoin' };
  it.each(Object.entries(canonical))('is a category, or a category and one of its leagues, in canonical spelling: %s is %s', (given, spelled) => {
    expect(parseInterest(given)).toBe(spelled);
  });
  it('refuses unknown categories, leagues of another category and extra parts', () => {
    for (const bad of ['Gardening', 'Football: NBA', 'Sport: EPL', 'Football: EPL: extra', 'Football: Nowhere League']) {
      expect(codeOf(() => parseInterest(bad))).toBe('bad_input');
    }
  });
});

describe('public ids', () => {
  it('are 10 url-safe base62 characters and do not repeat', () => {
    const ids = new Set(Array.from({ length: 5000 }, () => newPublicId()));
    expect(ids.size).toBe(5000);
    for (const id of ids) expect(id).toMatch(/^[0-9A-Za-z]{10}$/);
  });
});
