import { round2 } from './rounding.js';
import { rightPct, type SettlementStatus } from './money.js';
import { inBoard, NO_SKILL, SKILL_MIN_SETTLED, skillSums, type BoardWindow, type FieldKey, type SkillCall, type SkillSums } from './skill.js';

/**
 * The record rules that Postgres computes at scale (services/worker/src/projections: user_records,
 * market_splits, leaderboard_rows), written once here as the definition. The SQL is their tested
 * twin: services/worker/src/projections/rules.int.test.ts holds it equal to these on random data.
 */

/** The window of `profit_7d` and the `week` board (docs/design.md "Product decisions"). */
export const WEEK_MS = 7 * 24 * 3600 * 1000;

/** `right` ranks only people with at least this many settled calls (docs/api.md "Limits"). */
export const RIGHT_MIN_SETTLED = 5;

/** A call as the record rules read it. */
export interface RecordCall {
  id: string;
  userId: number;
  marketId: string;
  outcomeIndex: number;
  status: SettlementStatus;
  /** Profit on 10 as settlement stored it (null while open). */
  profitOn10: number | null;
  madeAt: Date;
  settledAt: Date | null;
  /** The call this one copied, if any. */
  copiedFrom: string | null;
}

/** `profit_7d`: profit of the calls settled in the 7 days before `now` (strictly after `now − 7 d`), 2 places. */
export function weekProfit(calls: ReadonlyArray<Pick<RecordCall, 'profitOn10' | 'settledAt'>>, now: Date): number {
  const start = now.getTime() - WEEK_MS;
  let cents = 0;
  for (const c of calls) if (c.settledAt !== null && c.settledAt.getTime() > start) cents += Math.round((c.profitOn10 ?? 0) * 100);
  return round2(cents / 100);
}

/** `copies` of a person: calls by OTHERS whose `copied_from` is one of this person's calls. */
export function copiesOf(userId: number, calls: ReadonlyArray<Pick<RecordCall, 'id' | 'userId' | 'copiedFrom'>>): number {
  const own = new Set(calls.filter((c) => c.userId === userId).map((c) => c.id));
  return calls.filter((c) => c.userId !== userId && c.copiedFrom !== null && own.has(c.copiedFrom)).length;
}

/**
 * `platform_split` of a market: per outcome index, the people whose LATEST call on it (by made_at,
 * then id) is on that outcome — one per person. Empty when nobody called the market.
 */
export function platformSplit(
  calls: ReadonlyArray<Pick<RecordCall, 'id' | 'userId' | 'outcomeIndex' | 'madeAt'>>,
  outcomeCount: number,
): number[] {
  const latest = new Map<number, Pick<RecordCall, 'id' | 'outcomeIndex' | 'madeAt'>>();
  for (const c of calls) {
    const seen = latest.get(c.userId);
    const later = seen === undefined || c.madeAt.getTime() > seen.madeAt.getTime() || (c.madeAt.getTime() === seen.madeAt.getTime() && c.id > seen.id);
    if (later) latest.set(c.userId, c);
  }
  if (latest.size === 0) return [];
  const split = Array.from({ length: outcomeCount }, () => 0);
  for (const c of latest.values()) if (c.outcomeIndex < outcomeCount) split[c.outcomeIndex] = (split[c.outcomeIndex] ?? 0) + 1;
  return split;
}

/** The boards: docs/api.md's four (endpoint 9) and the skill boards (docs/skill.md). */
export const LEADERBOARD_SORTS = ['profit', 'right', 'xp', 'week', 'clv', 'brier'] as const;
export type LeaderboardSort = (typeof LEADERBOARD_SORTS)[number];

/** A person's record as the boards rank it (all time, or one window and field of their calls). */
export interface BoardRecord extends SkillSums {
  userId: number;
  handle: string;
  settled: number;
  rightPct: number;
  profitOn10: number;
  profit7d: number;
  xp: number;
  /** A call of theirs settled in the 7 days before now (the `week` board's entry rule). */
  playedThisWeek: boolean;
}

/** Whether a board ranks a record: who is eligible (docs/design.md "Leaderboard", docs/skill.md). */
export function onBoard(sort: LeaderboardSort, r: BoardRecord): boolean {
  switch (sort) {
    case 'right':
      return r.settled >= RIGHT_MIN_SETTLED;
    case 'week':
      return r.settled >= 1 && r.playedThisWeek;
    case 'clv':
      return r.settled >= SKILL_MIN_SETTLED && r.clvCalls > 0;
    case 'brier':
      return r.settled >= SKILL_MIN_SETTLED && r.decided > 0;
    default:
      return r.settled >= 1;
  }
}

/** Negative when `a` ranks before `b` on the board's score alone (means compared as exact fractions). */
function byScore(sort: LeaderboardSort, a: BoardRecord, b: BoardRecord): number {
  const sign = (x: bigint) => (x > 0n ? 1 : x < 0n ? -1 : 0);
  switch (sort) {
    case 'profit':
      return b.profitOn10 - a.profitOn10;
    case 'right':
      return b.rightPct - a.rightPct;
    case 'xp':
      return b.xp - a.xp;
    case 'week':
      return b.profit7d - a.profit7d;
    case 'clv':
      // Higher mean first: b.sum / b.n − a.sum / a.n.
      return sign(b.clvSum * BigInt(a.clvCalls) - a.clvSum * BigInt(b.clvCalls));
    case 'brier':
      // Lower mean first.
      return sign(a.brierSum * BigInt(b.decided) - b.brierSum * BigInt(a.decided));
  }
}

/**
 * A board's ranking (docs/design.md "Leaderboard", docs/skill.md): `profit` by profit_on_10, `xp` by xp
 * (people with a settled call), `right` by right_pct (≥ 5 settled), `week` by profit_7d (a call
 * settled this week), `clv` by mean closing-line value (higher first) and `brier` by Brier score
 * (lower first), both among people with ≥ 10 settled; ties by settled desc, then handle
 * case-insensitively. User ids, rank order.
 */
export function rankBoard(sort: LeaderboardSort, records: readonly BoardRecord[]): number[] {
  const key = (r: BoardRecord) => r.handle.toLowerCase();
  return records
    .filter((r) => onBoard(sort, r))
    .sort((a, b) => byScore(sort, a, b) || b.settled - a.settled || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
    .map((r) => r.userId);
}

/**
 * The records a board of one window and field ranks, as of `asOf`: per person, their calls settled
 * in the window (and the field) — settled, right_pct, profit, XP of those calls (combos are not in
 * a window or a field), and their skill sums. `week` figures are the window's own when the window
 * is `week`. A person without such a call has no record here.
 */
export function windowRecords(
  calls: ReadonlyArray<SkillCall>,
  handles: ReadonlyMap<number, string>,
  window: BoardWindow,
  field: FieldKey | null,
  asOf: Date,
): Array<BoardRecord & { won: number; lost: number }> {
  const by = new Map<number, SkillCall[]>();
  for (const c of calls) {
    if (c.status === 'open' || !inBoard(c, window, field, asOf)) continue;
    const list = by.get(c.userId) ?? [];
    list.push(c);
    by.set(c.userId, list);
  }
  return [...by].map(([userId, list]) => {
    const won = list.filter((c) => c.status === 'won').length;
    const lost = list.filter((c) => c.status === 'lost').length;
    const cents = list.reduce((t, c) => t + Math.round((c.profitOn10 ?? 0) * 100), 0);
    const profit = round2(cents / 100);
    return {
      userId,
      handle: handles.get(userId) ?? '',
      settled: list.length,
      won,
      lost,
      rightPct: rightPct(won, lost),
      profitOn10: profit,
      profit7d: window === 'week' ? profit : 0,
      xp: list.reduce((t, c) => t + c.xpAwarded, 0),
      playedThisWeek: window === 'week',
      ...(list.length > 0 ? skillSums(list) : NO_SKILL),
    };
  });
}
