import { describe, expect, it } from 'vitest';
import { round2, roundTo } from './rounding.js';

describe('round2', () => {
  it('given 1.005, whose double sits just below the half, when rounded, then gives 1.01 like decimal arithmetic', () => {
    expect(round2(1.005)).toBe(1.01);
    expect(Math.round(1.005 * 100) / 100).toBe(1); // the float trap it avoids
  });

  it('given float noise from a division, when rounded, then gives the decimal answer', () => {
    expect(round2(10 / 0.3)).toBe(33.33);
    expect(round2(10 / 0.6 - 10)).toBe(6.67);
    expect(round2(0.1 + 0.2)).toBe(0.3);
  });

  it('given negative halves, when rounded, then rounds away from zero and never returns -0', () => {
    expect(round2(-1.005)).toBe(-1.01);
    expect(Object.is(round2(-0.001), 0)).toBe(true);
  });
});

describe('roundTo', () => {
  it('given 4 places, when rounding midpoint noise, then removes it', () => {
    expect(roundTo(0.5249999999999999, 4)).toBe(0.525);
    expect(roundTo(2.5, 0)).toBe(3);
    expect(roundTo(1e-7, 2)).toBe(0);
  });
});
