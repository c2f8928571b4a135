import type { SettlementStatus } from './money.js';

/**
 * Skill figures of a person (docs/skill.md): the Brier score, calibration and closing-line value
 * of their settled calls, and the boards by window and field. Written once here as the definition;
 * Postgres computes them at scale (services/worker/src/projections, services/api/src/pages), and
 * property tests hold that SQL equal to these functions on random data.
 *
 * Exactness: chances are decimals with at most 6 places (the exchange quotes 0.001 ticks; a
 * displayed midpoint adds one more), so the sums are kept as integers of 10⁻⁶ (clv) and 10⁻¹²
 * (Brier terms) in BigInt, and means are compared as fractions: two people whose means are equal
 * tie exactly, as they do in numeric SQL, and no float noise reorders a board.
 */

/** A call as the skill rules read it. */
export interface SkillCall {
  userId: number;
  status: SettlementStatus;
  chanceAtCall: number;
  /** The market's closing chance of the called outcome (null: none recorded). */
  closingChance: number | null;
  profitOn10: number | null;
  xpAwarded: number;
  settledAt: Date | null;
  /** The field of the call's market: its event's category and league. */
  category: string;
  league: string | null;
}

/** The clv and brier boards rank only people with at least this many settled calls (in the window and field). */
export const SKILL_MIN_SETTLED = 10;

/** Board windows: how far back from the ranking's instant a settled call counts (`all`: no limit). */
export const BOARD_WINDOWS = ['day', 'week', 'month', 'all'] as const;
export type BoardWindow = (typeof BOARD_WINDOWS)[number];
export const WINDOW_MS: Record<Exclude<BoardWindow, 'all'>, number> = {
  day: 24 * 3600 * 1000,
  week: 7 * 24 * 3600 * 1000,
  month: 30 * 24 * 3600 * 1000,
};

/** A chance in integer millionths (exact for every chance the service stores). */
export function micro(chance: number): bigint {
  return BigInt(Math.round(chance * 1e6));
}

const MICRO = 1_000_000n;

/** `value = num / den` rounded to `places` decimals, halves away from zero (Postgres `round(numeric)`), exactly. */
export function roundRatio(num: bigint, den: bigint, places: number): number {
  if (den === 0n) throw new RangeError('roundRatio: zero denominator');
  const negative = num < 0n !== den < 0n && num !== 0n;
  const n = num < 0n ? -num : num;
  const d = den < 0n ? -den : den;
  const scale = 10n ** BigInt(places);
  const q = (2n * n * scale + d) / (2n * d);
  const rounded = Number(q) / Number(scale);
  return negative && rounded !== 0 ? -rounded : rounded;
}

/** The sums the skill figures are made of (a person's, or one board row's). */
export interface SkillSums {
  /** Won + lost calls. */
  decided: number;
  /** Σ (chance_at_call − outcome)² over decided calls, in 10⁻¹² units. */
  brierSum: bigint;
  /** Σ (closing_chance − chance_at_call) over decided calls with a closing chance, in 10⁻⁶ units. */
  clvSum: bigint;
  clvCalls: number;
}

export const NO_SKILL: SkillSums = { decided: 0, brierSum: 0n, clvSum: 0n, clvCalls: 0 };

const decided = (c: Pick<SkillCall, 'status'>) => c.status === 'won' || c.status === 'lost';

/** One decided call's Brier term, (chance_at_call − (won ? 1 : 0))², in 10⁻¹² units. */
export function brierTerm(chanceAtCall: number, won: boolean): bigint {
  const d = micro(chanceAtCall) - (won ? MICRO : 0n);
  return d * d;
}

/** One call's closing-line value, closing_chance − chance_at_call, in 10⁻⁶ units (null: no closing chance). */
export function callClv(closingChance: number | null, chanceAtCall: number): bigint | null {
  return closingChance === null ? null : micro(closingChance) - micro(chanceAtCall);
}

/** The skill sums of some calls (void and open calls count in neither). */
export function skillSums(calls: ReadonlyArray<Pick<SkillCall, 'status' | 'chanceAtCall' | 'closingChance'>>): SkillSums {
  const s = { decided: 0, brierSum: 0n, clvSum: 0n, clvCalls: 0 };
  for (const c of calls) {
    if (!decided(c)) continue;
    s.decided++;
    s.brierSum += brierTerm(c.chanceAtCall, c.status === 'won');
    const v = callClv(c.closingChance, c.chanceAtCall);
    if (v !== null) {
      s.clvSum += v;
      s.clvCalls++;
    }
  }
  return s;
}

/** `brier`: mean Brier term, 4 places; null without a decided call. Lower is better (0 = perfect; always saying 50 % scores 0.25). */
export function brierOf(s: SkillSums): number | null {
  return s.decided === 0 ? null : roundRatio(s.brierSum, BigInt(s.decided) * MICRO * MICRO, 4);
}

/** `clv`: mean closing-line value in chance units (0.05 = five points), 4 places; null without a call that has a closing chance. */
export function clvOf(s: SkillSums): number | null {
  return s.clvCalls === 0 ? null : roundRatio(s.clvSum, BigInt(s.clvCalls) * MICRO, 4);
}

/** A calibration bucket: decided calls whose chance_at_call is in [from, to) (the last one [0.9, 1]). */
export interface CalibrationBucket {
  from: number;
  to: number;
  calls: number;
  /** Mean chance_at_call of its calls, 4 places; null when empty. */
  predicted: number | null;
  /** Share of its calls that won, in percent with one decimal; null when empty. */
  won_pct: number | null;
}

/** The bucket of a chance: ⌊10c⌋, with 1 in the last. */
export function calibrationBucket(chance: number): number {
  return Math.min(9, Number(micro(chance) / 100_000n));
}

/** `calibration`: the ten buckets of chance_at_call over decided calls, in order. */
export function calibration(calls: ReadonlyArray<Pick<SkillCall, 'status' | 'chanceAtCall'>>): CalibrationBucket[] {
  const n = Array.from({ length: 10 }, () => ({ calls: 0, won: 0, sum: 0n }));
  for (const c of calls) {
    if (!decided(c)) continue;
    const b = n[calibrationBucket(c.chanceAtCall)]!;
    b.calls++;
    b.sum += micro(c.chanceAtCall);
    if (c.status === 'won') b.won++;
  }
  return n.map((b, i) => ({
    from: i / 10,
    to: (i + 1) / 10,
    calls: b.calls,
    predicted: b.calls === 0 ? null : roundRatio(b.sum, BigInt(b.calls) * MICRO, 4),
    won_pct: b.calls === 0 ? null : roundRatio(BigInt(100 * b.won), BigInt(b.calls), 1),
  }));
}

/** A call's field key: `c:<category>` or `l:<league>`. */
export type FieldKey = `c:${string}` | `l:${string}`;

/** Whether a call belongs to a board's window (as of `asOf`) and field. */
export function inBoard(call: Pick<SkillCall, 'settledAt' | 'category' | 'league'>, window: BoardWindow, field: FieldKey | null, asOf: Date): boolean {
  if (call.settledAt === null || call.settledAt.getTime() > asOf.getTime()) return false;
  if (window !== 'all' && call.settledAt.getTime() <= asOf.getTime() - WINDOW_MS[window]) return false;
  if (field === null) return true;
  return field.startsWith('c:') ? call.category === field.slice(2) : call.league === field.slice(2);
}
