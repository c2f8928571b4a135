import { describe, expect, it } from 'vitest';
import { parseHistoryBody } from './history-client.js';
import { pointDue } from './history-recorder.js';

describe('when a live history point is due', () => {
  const top = (chance: number, bid: number | null = 0.49, ask: number | null = 0.51) => ({ chance, bid, ask });
  it('the first chance of a token is always recorded', () => {
    expect(pointDue(undefined, top(0.5), 0)).toBe('first');
  });
  it('a move is recorded at once; the same chance only once a minute passed', () => {
    const last = { at: 1_000, ...top(0.5) };
    expect(pointDue(last, top(0.51), 1_001)).toBe('move');
    expect(pointDue(last, top(0.5), 60_999)).toBeNull();
    expect(pointDue(last, top(0.5), 61_000)).toBe('minute');
  });
  it('a move of the book top is a move though the chance held; a side emptied is one too', () => {
    const last = { at: 1_000, ...top(0.5) };
    expect(pointDue(last, top(0.5, 0.48), 1_001)).toBe('move');
    expect(pointDue(last, top(0.5, 0.49, 0.52), 1_001)).toBe('move');
    expect(pointDue(last, top(0.5, null), 1_001)).toBe('move');
  });
});

describe('a /prices-history body', () => {
  it('keeps points with a time and a chance in [0, 1], numbers or numeric strings, and drops the rest', () => {
    expect(
      parseHistoryBody({ history: [{ t: 100, p: 0.5 }, { t: '200', p: '0.25' }, { t: 300, p: 1.5 }, { t: 'x', p: 0.1 }, null, { p: 0.2 }] }),
    ).toEqual([
      { t: 100, chance: 0.5 },
      { t: 200, chance: 0.25 },
    ]);
  });
  it('an empty history is no points; a body without history at all is an error', () => {
    expect(parseHistoryBody({ history: [] })).toEqual([]);
    expect(() => parseHistoryBody([1, 2])).toThrow(/history/);
  });
});
