import { describe, expect, it } from 'vitest';
import { brierOf, calibration, calibrationBucket, clvOf, inBoard, roundRatio, skillSums } from './skill.js';
import { rankBoard, windowRecords, type BoardRecord } from './records.js';

const call = (status: 'won' | 'lost' | 'void' | 'open', chanceAtCall: number, closingChance: number | null = null) => ({ status, chanceAtCall, closingChance });

describe('skill of a person', () => {
  it('scores the Brier term of each won or lost call; void and open calls count in neither figure', () => {
    const s = skillSums([call('won', 0.8, 0.9), call('lost', 0.3, 0.2), call('void', 0.5, 0.9), call('open', 0.5)]);
    expect(s.decided).toBe(2);
    // ((0.8 − 1)² + (0.3 − 0)²) / 2 = (0.04 + 0.09) / 2
    expect(brierOf(s)).toBe(0.065);
    // ((0.9 − 0.8) + (0.2 − 0.3)) / 2
    expect(clvOf(s)).toBe(0);
  });

  it('has no brier or clv without a decided call, and no clv without a closing chance', () => {
    expect(brierOf(skillSums([call('void', 0.5)]))).toBeNull();
    const s = skillSums([call('won', 0.4)]);
    expect(brierOf(s)).toBe(0.36);
    expect(clvOf(s)).toBeNull();
  });

  it('says by how much the market moved toward a pick, in chance units', () => {
    expect(clvOf(skillSums([call('lost', 0.25, 0.4), call('won', 0.6, 0.66)]))).toBe(0.105);
  });

  it('puts each chance in its tenth, 1 in the last, and reports calls, mean chance and share won per bucket', () => {
    expect([0.05, 0.1, 0.19, 0.7, 0.9, 0.999].map(calibrationBucket)).toEqual([0, 1, 1, 7, 9, 9]);
    const c = calibration([call('won', 0.7), call('lost', 0.75), call('won', 0.72), call('void', 0.71), call('won', 0.05)]);
    expect(c).toHaveLength(10);
    expect(c[0]).toEqual({ from: 0, to: 0.1, calls: 1, predicted: 0.05, won_pct: 100 });
    expect(c[7]).toEqual({ from: 0.7, to: 0.8, calls: 3, predicted: 0.7233, won_pct: 66.7 });
    expect(c[3]).toEqual({ from: 0.3, to: 0.4, calls: 0, predicted: null, won_pct: null });
  });

  it('rounds halves away from zero exactly, as numeric does', () => {
    expect(roundRatio(1n, 8n, 2)).toBe(0.13);
    expect(roundRatio(-1n, 8n, 2)).toBe(-0.13);
    expect(roundRatio(1005n, 1000n, 2)).toBe(1.01);
  });
});

describe('boards by window and field', () => {
  const asOf = new Date('2026-01-31T12:00:00Z');
  const at = (hoursAgo: number) => new Date(asOf.getTime() - hoursAgo * 3600_000);
  it('counts a call settled strictly inside the window, at or before the instant, in the field', () => {
    const c = { settledAt: at(24), category: 'Sport', league: 'nba' };
    expect(inBoard(c, 'day', null, asOf)).toBe(false);
    expect(inBoard({ ...c, settledAt: at(23.9) }, 'day', null, asOf)).toBe(true);
    expect(inBoard({ ...c, settledAt: at(-1) }, 'all', null, asOf)).toBe(false);
    expect(inBoard(c, 'week', 'l:nba', asOf)).toBe(true);
    expect(inBoard(c, 'week', 'c:Football', asOf)).toBe(false);
  });

  it('ranks brier lowest first and clv highest first among people with 10 settled calls', () => {
    const calls = [1, 2, 3].flatMap((userId) =>
      Array.from({ length: userId === 3 ? 9 : 10 }, () => ({
        userId, status: 'won' as const, chanceAtCall: userId === 1 ? 0.9 : 0.6, closingChance: userId === 1 ? 0.92 : 0.7,
        profitOn10: 1, xpAwarded: 10, settledAt: at(1), category: 'Sport', league: null,
      })),
    );
    const records: BoardRecord[] = windowRecords(calls, new Map([[1, 'a'], [2, 'b'], [3, 'c']]), 'day', null, asOf);
    expect(rankBoard('brier', records)).toEqual([1, 2]);
    expect(rankBoard('clv', records)).toEqual([2, 1]);
    expect(rankBoard('profit', records)).toEqual([1, 2, 3]);
  });
});
