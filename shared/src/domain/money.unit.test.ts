import { describe, expect, it } from 'vitest';
import { STAKE, comboStatus, comboXp, profitOn10, rightPct, streak, winsOn10, xpIfRight } from './money.js';

describe('STAKE', () => {
  it('is the notional 10 every *_on_10 figure is scored on', () => {
    expect(STAKE).toBe(10);
  });
});

describe('winsOn10', () => {
  // The docs/design.md example; two repeating quotients, rounded to 2 places; a sure thing; the lowest tick.
  it.each([[0.25, 40], [0.3, 33.33], [0.6, 16.67], [1, 10], [0.001, 10000]])('given %s, when scored, then 10 wins %s', (chance, wins) => {
    expect(winsOn10(chance)).toBe(wins);
  });

  it('given a chance outside (0, 1], when scored, then throws RangeError', () => {
    expect(() => winsOn10(0)).toThrow(RangeError);
    expect(() => winsOn10(1.5)).toThrow(RangeError);
    expect(() => winsOn10(Number.NaN)).toThrow(RangeError);
  });
});

describe('profitOn10', () => {
  it('given a won call at 0.25, when scored, then profit is 30 (docs/design.md example)', () => {
    expect(profitOn10('won', 0.25)).toBe(30);
  });

  it('given a won call at 0.6, when scored, then profit is 6.67, not float noise', () => {
    expect(profitOn10('won', 0.6)).toBe(6.67);
    expect(profitOn10('won', 0.3)).toBe(23.33);
    expect(profitOn10('won', 1)).toBe(0);
  });

  it('given a lost call, when scored, then profit is -10 whatever the chance', () => {
    expect(profitOn10('lost', 0.25)).toBe(-10);
    expect(profitOn10('lost', 0.99)).toBe(-10);
  });

  it('given a void call, when scored, then profit is 0', () => {
    expect(profitOn10('void', 0.25)).toBe(0);
  });

  it('given an open call, when scored, then profit is null', () => {
    expect(profitOn10('open', 0.25)).toBeNull();
  });

  it('given a won call with an impossible chance, when scored, then throws RangeError', () => {
    expect(() => profitOn10('won', 0)).toThrow(RangeError);
  });
});

describe('xpIfRight', () => {
  it.each([
    [1, 10, 'a sure thing earns the minimum'],
    [0, 100, 'a long shot earns the most'],
    [0.001, 100, 'the lowest tick: 89.91 rounds to 90'],
    [0.25, 78, '10 + round(90 × 0.75 = 67.5 → 68)'],
    [0.5, 55, '10 + 45'],
    [0.8, 28, '10 + 18'],
    [0.95, 15, '4.5 rounds up even though 1 − 0.95 is 0.0500000000000000444'],
  ])('given %s, when a right call earns XP, then %s (%s)', (chance, xp) => {
    expect(xpIfRight(chance)).toBe(xp);
  });

  it('given a chance outside [0, 1], when scored, then throws RangeError', () => {
    expect(() => xpIfRight(-0.1)).toThrow(RangeError);
    expect(() => xpIfRight(1.1)).toThrow(RangeError);
  });
});

describe('comboStatus', () => {
  it('given any lost leg, when the combo is judged, then it is lost even with legs still open', () => {
    expect(comboStatus(['open', 'lost', 'won'])).toBe('lost');
    expect(comboStatus(['void', 'lost'])).toBe('lost');
  });

  it('given every leg void, when judged, then void', () => {
    expect(comboStatus(['void', 'void', 'void'])).toBe('void');
  });

  it('given every leg settled, none lost, one or more won, when judged, then won', () => {
    expect(comboStatus(['won', 'won'])).toBe('won');
    expect(comboStatus(['won', 'void', 'void'])).toBe('won');
  });

  it('given an open leg and no lost leg, when judged, then open', () => {
    expect(comboStatus(['won', 'open'])).toBe('open');
    expect(comboStatus(['void', 'open'])).toBe('open');
    expect(comboStatus(['open', 'open'])).toBe('open');
  });

  it('given no legs, when judged, then void (never written, documented)', () => {
    expect(comboStatus([])).toBe('void');
  });
});

describe('comboXp', () => {
  it('given a won combo, when XP is awarded, then xpIfRight(product) × legs', () => {
    // 0.5 × 0.5 = 0.25 → 78, two legs → 156
    expect(comboXp([{ status: 'won', chance: 0.5 }, { status: 'won', chance: 0.5 }])).toBe(156);
  });

  it('given a won combo with a void leg, when XP is awarded, then the void leg drops out of product and count', () => {
    const legs = [
      { status: 'won' as const, chance: 0.5 },
      { status: 'void' as const, chance: 0.1 },
      { status: 'won' as const, chance: 0.5 },
    ];
    expect(comboXp(legs)).toBe(156);
  });

  it('given a lost, open or void combo, when XP is awarded, then 0', () => {
    expect(comboXp([{ status: 'won', chance: 0.5 }, { status: 'lost', chance: 0.5 }])).toBe(0);
    expect(comboXp([{ status: 'won', chance: 0.5 }, { status: 'open', chance: 0.5 }])).toBe(0);
    expect(comboXp([{ status: 'void', chance: 0.5 }, { status: 'void', chance: 0.5 }])).toBe(0);
  });

  it('given six long-shot legs, when XP is awarded, then the product stays valid and scores the maximum', () => {
    const legs = Array.from({ length: 6 }, () => ({ status: 'won' as const, chance: 0.001 }));
    expect(comboXp(legs)).toBe(600);
  });
});

describe('rightPct', () => {
  it('given won and lost counts, when the record is read, then a whole percent', () => {
    expect(rightPct(3, 1)).toBe(75);
    expect(rightPct(2, 1)).toBe(67);
    expect(rightPct(1, 7)).toBe(13); // 12.5 rounds up
    expect(rightPct(5, 0)).toBe(100);
  });

  it('given no won or lost calls, when the record is read, then 0', () => {
    expect(rightPct(0, 0)).toBe(0);
    expect(rightPct(0, 4)).toBe(0);
  });
});

describe('streak', () => {
  it('given wins since the last loss, when counted, then their number', () => {
    expect(streak(['won', 'won', 'lost', 'won'])).toBe(2);
  });

  it('given voids among the wins, when counted, then voids are skipped, neither extending nor breaking', () => {
    expect(streak(['void', 'won', 'void', 'won', 'lost', 'won'])).toBe(2);
  });

  it('given the most recent non-void call lost, when counted, then 0', () => {
    expect(streak(['void', 'lost', 'won', 'won'])).toBe(0);
  });

  it('given no settled or only void calls, when counted, then 0', () => {
    expect(streak([])).toBe(0);
    expect(streak(['void', 'void'])).toBe(0);
  });
});
