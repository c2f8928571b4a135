import { describe, expect, it } from 'vitest';
import { WIDE_SPREAD, displayChance } from './display-chance.js';

const none = { bestBid: null, bestAsk: null, lastTrade: null, catalogPrice: null };

describe('displayChance', () => {
  it('is governed by a 0.10 spread', () => {
    expect(WIDE_SPREAD).toBe(0.1);
  });

  it('given a tight book, when displayed, then the midpoint of best bid and ask', () => {
    expect(displayChance({ ...none, bestBid: 0.48, bestAsk: 0.52, lastTrade: 0.9, catalogPrice: 0.1 })).toBe(0.5);
  });

  it('given a midpoint with float noise, when displayed, then rounded to 4 decimals', () => {
    expect(displayChance({ ...none, bestBid: 0.52, bestAsk: 0.53 })).toBe(0.525);
    expect(displayChance({ ...none, bestBid: 0.1, bestAsk: 0.2 })).toBe(0.15); // 0.15000000000000002 raw
  });

  it('given a spread of exactly 0.10 (0.45/0.55 in floats), when displayed, then it is not wide: midpoint', () => {
    expect(0.55 - 0.45).toBeGreaterThan(0.1); // the float trap
    expect(displayChance({ ...none, bestBid: 0.45, bestAsk: 0.55, lastTrade: 0.7 })).toBe(0.5);
    expect(displayChance({ ...none, bestBid: 0.3, bestAsk: 0.4, lastTrade: 0.7 })).toBe(0.35);
  });

  it('given a spread wider than 0.10, when displayed, then the last trade price', () => {
    expect(displayChance({ ...none, bestBid: 0.45, bestAsk: 0.551, lastTrade: 0.7, catalogPrice: 0.2 })).toBe(0.7);
    expect(displayChance({ ...none, bestBid: 0.01, bestAsk: 0.99, lastTrade: 0.33 })).toBe(0.33);
  });

  it('given a wide spread and no trade yet, when displayed, then the catalog price, then the midpoint', () => {
    expect(displayChance({ ...none, bestBid: 0.01, bestAsk: 0.99, catalogPrice: 0.41 })).toBe(0.41);
    expect(displayChance({ ...none, bestBid: 0.2, bestAsk: 0.6 })).toBe(0.4);
  });

  it('given a one-sided book, when displayed, then the catalog price, then the last trade', () => {
    expect(displayChance({ ...none, bestBid: 0.48, lastTrade: 0.6, catalogPrice: 0.5 })).toBe(0.5);
    expect(displayChance({ ...none, bestAsk: 0.52, lastTrade: 0.6 })).toBe(0.6);
  });

  it('given an empty book, when displayed, then the catalog price, then the last trade', () => {
    expect(displayChance({ ...none, catalogPrice: 0.37, lastTrade: 0.6 })).toBe(0.37);
    expect(displayChance({ ...none, lastTrade: 0.6 })).toBe(0.6);
  });

  it('given nothing known, when displayed, then null', () => {
    expect(displayChance(none)).toBeNull();
    expect(displayChance({ ...none, bestBid: Number.NaN, catalogPrice: Number.NaN })).toBeNull();
  });

  it('given a resolved catalog price or an out-of-range input, when displayed, then clamped to [0, 1]', () => {
    expect(displayChance({ ...none, catalogPrice: 1 })).toBe(1);
    expect(displayChance({ ...none, catalogPrice: 1.2 })).toBe(1);
    expect(displayChance({ ...none, lastTrade: -0.1 })).toBe(0);
  });

  it('given a crossed top (bid at or above ask), when displayed, then never its midpoint: the last trade, then the catalog', () => {
    expect(displayChance({ ...none, bestBid: 0.55, bestAsk: 0.52, lastTrade: 0.9 })).toBe(0.9);
    expect(displayChance({ ...none, bestBid: 0.55, bestAsk: 0.55, catalogPrice: 0.4 })).toBe(0.4);
    expect(displayChance({ ...none, bestBid: 0.55, bestAsk: 0.52 })).toBeNull();
  });
});
