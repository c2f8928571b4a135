import { RIGHT_MIN_SETTLED, SKILL_MIN_SETTLED, type LeaderboardSort } from '../domain/index.js';
import { sql } from './connection.js';

type Fragment = ReturnType<typeof sql>;

export interface BoardOrder {
  score: Fragment;
  eligible: Fragment;
}

/**
 * Each board's order over user_records' columns (the domain's onBoard and byScore, as SQL), written
 * once for the worker that keeps the all-time boards' top rows, the API that counts a person's rank,
 * and the API's computed boards (a window's or a field's aggregate with the same columns).
 * Migration 0012 indexes every board but the week's scoring by exactly these expressions and
 * predicates, so both reads are index range scans; board-order.int.test.ts fails when the planner
 * stops using an index (an expression here edited without the migration, or the other way round).
 *
 * - score: higher ranks first (the brier board's is the negated mean: lower Brier first);
 * - eligible: who is on the board; the week board's "played this week" is `last_settled_at` after
 *   the week's start, kept on the record by each settlement;
 * - means as numeric quotients of the sums truncated to 30 places: two different means never tie,
 *   equal ones do (the domain compares the same fractions by cross-multiplication).
 * Constants are inlined as literals: a parameter would hide from the planner that the query's
 * predicate implies the partial index's.
 */
export function boardOrder(sort: Exclude<LeaderboardSort, 'week'>, alias: string): BoardOrder;
export function boardOrder(sort: LeaderboardSort, alias: string, weekStart: Date): BoardOrder;
export function boardOrder(sort: LeaderboardSort, alias: string, weekStart?: Date): BoardOrder {
  const c = (k: string) => sql.ident(alias, k);
  const atLeast = (n: number) => sql`${c('settled')} >= ${sql.__dangerous__rawValue(String(Math.trunc(n)))}`;
  switch (sort) {
    case 'profit':
      return { score: c('profit_on_10'), eligible: atLeast(1) };
    case 'right':
      return { score: c('right_pct'), eligible: atLeast(RIGHT_MIN_SETTLED) };
    case 'xp':
      return { score: c('xp'), eligible: atLeast(1) };
    case 'week':
      if (weekStart === undefined) throw new Error('the week board needs the week\'s start');
      return { score: c('profit_7d'), eligible: sql`${atLeast(1)} and ${c('last_settled_at')} > ${weekStart}::timestamptz` };
    case 'clv':
      return { score: sql`(trunc(${c('clv_sum')}, 30) / nullif(${c('clv_calls')}, 0))`, eligible: sql`${atLeast(SKILL_MIN_SETTLED)} and ${c('clv_calls')} > 0` };
    case 'brier':
      return {
        score: sql`(-(trunc(${c('brier_sum')}, 30) / nullif(${c('won')} + ${c('lost')}, 0)))`,
        eligible: sql`${atLeast(SKILL_MIN_SETTLED)} and ${c('won')} + ${c('lost')} > 0`,
      };
  }
}

/**
 * inputs: `me`, a relation with one record (user_records' columns and handle_key, the lower-cased
 * handle collated "C"), and the week's start. outputs: the record's rank on the board, null when it
 * is not on it: 1 + the eligible records ahead of it by (score, settled) — one index range — + those
 * tied on both whose handle sorts first (a handful, joined to users for their handles).
 */
export function rankOnBoard(sort: LeaderboardSort, weekStart: Date): Fragment {
  const o = boardOrder(sort, 'o', weekStart);
  const m = boardOrder(sort, 'me', weekStart);
  return sql`(select case when ${m.eligible} then 1
      + (select count(*) from user_records o where ${o.eligible} and (${o.score}, o.settled) > (${m.score}, me.settled))
      + (select count(*) from user_records o join users u on u.id = o.user_id
         where ${o.eligible} and ${o.score} = ${m.score} and o.settled = me.settled and lower(u.handle) collate "C" < me.handle_key)
    end::integer from me)`;
}

/**
 * The instant up to which user_field_records count settled calls (user_field_edges, one row made by
 * migration 0013 and moved by the worker's upkeep and rebuild; without it, every call): the worker
 * keeps the rows to it, and the API adds the calls between it and a board's instant.
 */
export const FIELD_RECORDS_THROUGH: Fragment = sql`coalesce((select through from user_field_edges), 'infinity'::timestamptz)`;

