import { describe, expect, it } from 'vitest';
import { MIN_ODDS_CHANCE, oddsFor } from './odds.js';

const NUMERIC = /^[+-]?\d+(\.\d+)?$/;

function expectReadable(odds: ReturnType<typeof oddsFor>): void {
  for (const value of Object.values(odds)) {
    expect(value).not.toMatch(/NaN|Infinity|e[+-]/);
  }
  expect(odds.decimal).toMatch(/^\d+\.\d\d$/);
  expect(odds.fractional).toMatch(/^\d+\/\d+$/);
  expect(odds.american).toMatch(/^[+-]\d+$/);
  expect(odds.percent).toMatch(/^\d+%$/);
  expect(odds.price).toMatch(/^\d+¢$/);
}

describe('oddsFor', () => {
  it('given the DESIGN.md example 0.25, when converted, then gives 25%, 4.00, 3/1, +300, 25¢', () => {
    expect(oddsFor(0.25)).toEqual({ percent: '25%', decimal: '4.00', fractional: '3/1', american: '+300', price: '25¢' });
  });

  it('given the DESIGN.md example 0.8, when converted, then gives 1/4 and -400', () => {
    expect(oddsFor(0.8)).toEqual({ percent: '80%', decimal: '1.25', fractional: '1/4', american: '-400', price: '80¢' });
  });

  it('given an even chance 0.5, when converted, then gives 1/1 and +100 (american is + at exactly 0.5)', () => {
    expect(oddsFor(0.5)).toEqual({ percent: '50%', decimal: '2.00', fractional: '1/1', american: '+100', price: '50¢' });
  });

  it('given chances with non-terminating ratios, when converted, then fractional is the simplest closest n/d', () => {
    expect(oddsFor(0.3).fractional).toBe('7/3');
    expect(oddsFor(0.3).decimal).toBe('3.33');
    expect(oddsFor(0.6).fractional).toBe('2/3');
    expect(oddsFor(0.6).american).toBe('-150');
    expect(oddsFor(1 / 3).fractional).toBe('2/1');
    expect(oddsFor(0.52).fractional).toBe('12/13');
  });

  it('given a ratio no d ≤ 100 hits exactly, when converted, then the denominator stays at most 100', () => {
    const [, d] = oddsFor(0.123).fractional.split('/');
    expect(Number(d)).toBeLessThanOrEqual(100);
    // (1 − 0.123)/0.123 = 7.1301…; 713/100 (7.13) is closer than any smaller denominator.
    expect(oddsFor(0.123).fractional).toBe('713/100');
    expect(oddsFor(0.37).fractional).toBe('63/37');
    expect(oddsFor(0.07).fractional).toBe('93/7');
  });

  it('given 0.999, when converted, then rounds percent to 100% and fractional to the closest 0/1', () => {
    const odds = oddsFor(0.999);
    // (1 − c)/c = 0.001: 0/1 is closer than 1/100, the smallest non-zero fraction with d ≤ 100.
    expect(odds).toEqual({ percent: '100%', decimal: '1.00', fractional: '0/1', american: '-99900', price: '100¢' });
    expectReadable(odds);
  });

  it('given certainty c = 1, when converted, then decimal 1.00, fractional 0/1 and a capped readable american', () => {
    const odds = oddsFor(1);
    expect(odds).toEqual({ percent: '100%', decimal: '1.00', fractional: '0/1', american: '-99999900', price: '100¢' });
    expectReadable(odds);
  });

  it('given a long shot 0.001, when converted, then every string is finite and readable', () => {
    const odds = oddsFor(0.001);
    expect(odds).toEqual({ percent: '0%', decimal: '1000.00', fractional: '999/1', american: '+99900', price: '0¢' });
    expectReadable(odds);
  });

  it('given a chance below one in a million, when converted, then payout formats use the floor instead of overflowing', () => {
    const floor = oddsFor(MIN_ODDS_CHANCE);
    expect(floor.decimal).toBe('1000000.00');
    expect(floor.american).toBe('+99999900');
    for (const tiny of [1e-9, 1e-300, Number.MIN_VALUE]) {
      const odds = oddsFor(tiny);
      expectReadable(odds);
      expect(odds.decimal).toBe(floor.decimal);
      expect(odds.american).toBe(floor.american);
      expect(odds.fractional).toBe('999999/1');
    }
  });

  it('given a half-cent chance, when converted, then percent and price round half up', () => {
    expect(oddsFor(0.005).percent).toBe('1%');
    expect(oddsFor(0.125).price).toBe('13¢');
  });

  it('given many chances, when converted, then american sign follows c > 0.5 and values parse as numbers', () => {
    for (let i = 1; i <= 1000; i += 1) {
      const c = i / 1000;
      const odds = oddsFor(c);
      expectReadable(odds);
      expect(odds.american.startsWith(c > 0.5 ? '-' : '+')).toBe(true);
      expect(odds.american).toMatch(NUMERIC);
    }
  });

  it('given an invalid chance, when converted, then throws RangeError', () => {
    for (const bad of [0, -0.1, 1.0001, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => oddsFor(bad)).toThrow(RangeError);
    }
  });
});
