import { round2 } from './rounding.js';
import type { SettlementStatus } from './money.js';

/**
 * The record rules that Postgres computes at scale (services/worker/src/projections: user_records,
 * market_splits, leaderboard_rows), written once here as the definition. The SQL is their tested
 * twin: services/worker/src/projections/rules.int.test.ts holds it equal to these on random data.
 */

/** The window of `profit_7d` and the `week` board (DESIGN.md "Product decisions"). */
export const WEEK_MS = 7 * 24 * 3600 * 1000;

/** `right` ranks only people with at least this many settled calls (SPEC.md "Limits"). */
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

/** The four boards (SPEC.md endpoint 9). */
export const LEADERBOARD_SORTS = ['profit', 'right', 'xp', 'week'] as const;
export type LeaderboardSort = (typeof LEADERBOARD_SORTS)[number];

/** A person's record as the boards rank it. */
export interface BoardRecord {
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

/**
 * A board's ranking (DESIGN.md "Leaderboard"): `profit` by profit_on_10, `xp` by xp (people with a
 * settled call), `right` by right_pct (people with ≥ 5 settled), `week` by profit_7d (people with a
 * call settled this week); ties by settled desc, then handle case-insensitively. User ids, rank order.
 */
export function rankBoard(sort: LeaderboardSort, records: readonly BoardRecord[]): number[] {
  const score = (r: BoardRecord): number =>
    sort === 'profit' ? r.profitOn10 : sort === 'right' ? r.rightPct : sort === 'xp' ? r.xp : r.profit7d;
  const eligible = (r: BoardRecord): boolean =>
    sort === 'right' ? r.settled >= RIGHT_MIN_SETTLED : sort === 'week' ? r.settled >= 1 && r.playedThisWeek : r.settled >= 1;
  const key = (r: BoardRecord) => r.handle.toLowerCase();
  return records
    .filter(eligible)
    .sort((a, b) => score(b) - score(a) || b.settled - a.settled || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
    .map((r) => r.userId);
}
