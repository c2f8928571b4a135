import { describe, expect, it } from 'vitest';
import { copiesOf, platformSplit, rankBoard, weekProfit, WEEK_MS, type BoardRecord } from './records.js';
import { NO_SKILL } from './skill.js';

const now = new Date('2026-07-01T00:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);

describe('weekProfit', () => {
  it('counts calls settled within the last 7 days, not one settled exactly 7 days ago, nor open ones', () => {
    const calls = [
      { profitOn10: 30, settledAt: ago(1000) },
      { profitOn10: -10, settledAt: ago(WEEK_MS - 1) },
      { profitOn10: 100, settledAt: ago(WEEK_MS) },
      { profitOn10: null, settledAt: null },
    ];
    expect(weekProfit(calls, now)).toBe(20);
  });
  it('adds money in cents, without float drift', () => {
    expect(weekProfit([{ profitOn10: 0.1, settledAt: now }, { profitOn10: 0.2, settledAt: now }], now)).toBe(0.3);
  });
});

describe('copiesOf', () => {
  it('counts copies of my calls by others, never my copies of myself', () => {
    const calls = [
      { id: 'a', userId: 1, copiedFrom: null },
      { id: 'b', userId: 2, copiedFrom: 'a' },
      { id: 'c', userId: 1, copiedFrom: 'a' },
      { id: 'd', userId: 3, copiedFrom: 'b' },
    ];
    expect([copiesOf(1, calls), copiesOf(2, calls), copiesOf(3, calls)]).toEqual([1, 1, 0]);
  });
});

describe('platformSplit', () => {
  it('counts each person once, on the side of their latest call', () => {
    const t = (m: number) => new Date(Date.UTC(2026, 0, 1, 0, m));
    const calls = [
      { id: 'x1', userId: 1, outcomeIndex: 0, madeAt: t(0) },
      { id: 'x2', userId: 1, outcomeIndex: 1, madeAt: t(5) },
      { id: 'y1', userId: 2, outcomeIndex: 1, madeAt: t(1) },
      { id: 'y2', userId: 2, outcomeIndex: 0, madeAt: t(1) }, // same instant: the later id wins
    ];
    expect(platformSplit(calls, 3)).toEqual([1, 1, 0]);
  });
  it('is empty when nobody called the market', () => {
    expect(platformSplit([], 2)).toEqual([]);
  });
});

describe('rankBoard', () => {
  const rec = (userId: number, handle: string, over: Partial<BoardRecord> = {}): BoardRecord => ({
    userId, handle, settled: 5, rightPct: 50, profitOn10: 0, profit7d: 0, xp: 0, playedThisWeek: true, ...NO_SKILL, ...over,
  });
  it('orders by the score, then settled desc, then handle case-insensitively', () => {
    const board = [rec(1, 'bob', { profitOn10: 5 }), rec(2, 'Al', { profitOn10: 5 }), rec(3, 'cy', { profitOn10: 5, settled: 9 }), rec(4, 'di', { profitOn10: 8 })];
    expect(rankBoard('profit', board)).toEqual([4, 3, 2, 1]);
  });
  it('keeps people with fewer than 5 settled calls off the right board, and this week\'s absentees off the week board', () => {
    const board = [rec(1, 'a', { settled: 4 }), rec(2, 'b'), rec(3, 'c', { playedThisWeek: false }), rec(4, 'd', { settled: 0 })];
    expect(rankBoard('right', board)).toEqual([2, 3]);
    expect(rankBoard('week', board)).toEqual([2, 1]);
    expect(rankBoard('xp', board)).toEqual([2, 3, 1]);
  });
});
