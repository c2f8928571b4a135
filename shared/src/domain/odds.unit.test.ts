import { describe, expect, it } from 'vitest';
import { isShownChance, MAX_DENOMINATOR, MIN_ODDS_CHANCE, oddsFor, oddsForChance, shownChance } from './odds.js';

const NUMERIC = /^[+-]?\d+(\.\d+)?$/;

function expectReadable(odds: ReturnType<typeof oddsFor>): void {
  for (const value of Object.values(odds)) {
    expect(value).not.toMatch(/NaN|Infinity|e[+-]/);
  }
  expect(odds.decimal).toMatch(/^\d+\.\d\d$/);
  expect(odds.fractional).toMatch(/^\d+\/\d+$/);
  expect(odds.american).toMatch(/^[+-]\d+$/);
  expect(odds.percent).toMatch(/^\d+(\.\d+)?%$/);
  expect(odds.price).toMatch(/^\d+¢$/);
}

describe('oddsFor', () => {
  it.each([
    // chance, then the five formats; why the row is here
    [0.25, '25%', '4.00', '3/1', '+300', '25¢', 'the docs/design.md example'],
    [0.8, '80%', '1.25', '1/4', '-400', '80¢', 'the docs/design.md favourite example'],
    [0.5, '50%', '2.00', '1/1', '+100', '50¢', 'an even chance: american is + at exactly 0.5'],
  ])('given %s, when converted, then %s, %s, %s, %s, %s (%s)', (chance, percent, decimal, fractional, american, price) => {
    expect(oddsFor(chance)).toEqual({ percent, decimal, fractional, american, price });
  });

  it('given chances with non-terminating ratios, when converted, then fractional is the simplest closest n/d', () => {
    expect(oddsFor(0.3).fractional).toBe('7/3');
    expect(oddsFor(0.3).decimal).toBe('3.33');
    expect(oddsFor(0.6).fractional).toBe('2/3');
    expect(oddsFor(0.6).american).toBe('-150');
    expect(oddsFor(1 / 3).fractional).toBe('2/1');
    expect(oddsFor(0.52).fractional).toBe('12/13');
  });

  it('given a ratio no d ≤ 1000 hits exactly, when converted, then the denominator stays at most 1000', () => {
    // (1 − 0.123)/0.123 = 877/123 exactly; 0.3333337 needs more than 1000 to be exact.
    expect(oddsFor(0.123).fractional).toBe('877/123');
    expect(oddsFor(0.37).fractional).toBe('63/37');
    expect(oddsFor(0.07).fractional).toBe('93/7');
    const [, d] = oddsFor(0.3333337).fractional.split('/');
    expect(Number(d)).toBeLessThanOrEqual(MAX_DENOMINATOR);
  });

  it('given every exchange tick, when converted, then fractional is exact: (1 − c)/c in lowest terms', () => {
    for (let k = 1; k < 1000; k += 1) {
      const [n, d] = oddsFor(k / 1000).fractional.split('/').map(Number);
      const g = gcdOf(1000 - k, k);
      expect([n, d], `at ${k / 1000}`).toEqual([(1000 - k) / g, k / g]);
    }
  });

  it('given random chances, when converted, then fractional equals the exhaustive search over d ≤ 1000', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 2000; i += 1) {
      const c = Math.max(1e-9, Math.min(1 - 1e-9, random()));
      expect(oddsFor(c).fractional, `at ${c}`).toBe(exhaustiveFraction(c));
    }
  });

  // docs/design.md "Odds at the extremes": the exchange quotes 0.001–0.999; every format stays finite and honest.
  it.each([
    [0.001, { percent: '0.1%', decimal: '1000.00', fractional: '999/1', american: '+99900', price: '0¢' }],
    [0.005, { percent: '1%', decimal: '200.00', fractional: '199/1', american: '+19900', price: '1¢' }],
    [0.995, { percent: '99.5%', decimal: '1.01', fractional: '1/199', american: '-19900', price: '100¢' }],
    [0.999, { percent: '99.9%', decimal: '1.00', fractional: '1/999', american: '-99900', price: '100¢' }],
    [0.003, { percent: '0.3%', decimal: '333.33', fractional: '997/3', american: '+33233', price: '0¢' }],
  ])('given the extreme %s, when converted, then every format is finite and honest', (chance, expected) => {
    const odds = oddsFor(chance);
    expect(odds).toEqual(expected);
    expectReadable(odds);
  });

  it('given a chance whose one decimal still says 0% or 100%, when converted, then percent takes more decimals', () => {
    expect(oddsFor(0.0004).percent).toBe('0.04%');
    expect(oddsFor(0.9995).percent).toBe('99.95%');
  });

  it('given the smallest chance (1e-18), when converted, then payout formats follow it and stay plain', () => {
    const odds = oddsFor(MIN_ODDS_CHANCE);
    expect(odds.decimal).toBe('1000000000000000000.00');
    expect(odds.american).toBe('+100000000000000000000');
    expectReadable(odds);
    for (const tiny of [1e-19, 1e-300, Number.MIN_VALUE]) expect(oddsFor(tiny).decimal).toBe(odds.decimal);
  });

  it('given a half-cent chance, when converted, then percent and price round half up', () => {
    expect(oddsFor(0.005).percent).toBe('1%');
    expect(oddsFor(0.125).price).toBe('13¢');
  });

  it('given many chances, when converted, then american sign follows c > 0.5 and values parse as numbers', () => {
    for (let i = 1; i < 1000; i += 1) {
      const c = i / 1000;
      const odds = oddsFor(c);
      expectReadable(odds);
      expect(odds.american.startsWith(c > 0.5 ? '-' : '+')).toBe(true);
      expect(odds.american).toMatch(NUMERIC);
    }
  });

  it('given an invalid chance, when converted, then throws RangeError', () => {
    for (const bad of [0, 1, -0.1, 1.0001, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => oddsFor(bad)).toThrow(RangeError);
    }
  });
});

describe('oddsForChance', () => {
  it('given a settled loser (0) or winner (1), when shown, then the formats that have a value keep it and the others are null', () => {
    expect(oddsForChance(0)).toEqual({ percent: '0%', decimal: null, fractional: null, american: null, price: '0¢' });
    expect(oddsForChance(1)).toEqual({ percent: '100%', decimal: '1.00', fractional: null, american: null, price: '100¢' });
  });

  it('given a chance in between, when shown, then it is oddsFor', () => {
    expect(oddsForChance(0.999)).toEqual(oddsFor(0.999));
    expect(oddsForChance(0.5355)).toEqual(oddsFor(0.5355));
  });

  it('given a chance past the extreme ticks, when shown, then it is the tick\'s odds: never a 0/1 fraction', () => {
    expect(oddsForChance(0.9999)).toEqual(oddsFor(0.999));
    expect(oddsForChance(0.0004)).toEqual(oddsFor(0.001));
  });
});

describe('shownChance', () => {
  it('keeps 0, 1 and the tick range, pulls the rest to the extreme ticks, and is always a chance /odds accepts', () => {
    expect([0, 1, 0.001, 0.5355, 0.999].map(shownChance)).toEqual([0, 1, 0.001, 0.5355, 0.999]);
    expect([0.0004, 0.9995, -1, 2, Number.NaN].map(shownChance)).toEqual([0.001, 0.999, 0, 1, 0]);
    for (let i = 0; i <= 10_000; i += 1) expect(isShownChance(shownChance(i / 10_000))).toBe(true);
    expect([0.0005, 0.9999, 1.5].some(isShownChance)).toBe(false);
  });
});

function gcdOf(a: number, b: number): number {
  return b === 0 ? a : gcdOf(b, a % b);
}

/** The rule as written: the n/d with d ≤ 1000 closest to (1 − c)/c, ties to the smaller d, in lowest terms. */
function exhaustiveFraction(c: number): string {
  const ratio = (1 - c) / c;
  let best = { n: Math.round(ratio), d: 1, error: Math.abs(ratio - Math.round(ratio)) };
  for (let d = 2; d <= MAX_DENOMINATOR; d += 1) {
    const n = Math.round(ratio * d);
    const error = Math.abs(ratio - n / d);
    if (error < best.error - 1e-12 * Math.max(1, ratio)) best = { n, d, error };
  }
  const g = gcdOf(best.n, best.d) || 1;
  return `${best.n / g}/${best.d / g}`;
}
