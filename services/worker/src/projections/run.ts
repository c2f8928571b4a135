import { allOf, greaterThan, not, sql, tables, type Db } from '@pm/shared/db';
import { leaderboard } from './leaderboard.js';
import { marketSplits } from './market-splits.js';
import type { Projection, Tx } from './projection.js';
import { userRecords } from './user-records.js';
import { fieldRecords, upkeepFieldRecords } from './field-records.js';
import { upkeepWindowRecords, windowRecords } from './window-records.js';

export { settleCallsWithRecords, type SettledCall } from './user-records.js';
export { settleFieldRecords } from './field-records.js';
export { settleWindowRecords } from './window-records.js';

/** Every projection, in the order they run (the leaderboard reads user_records). */
export const PROJECTIONS: readonly Projection[] = [userRecords, fieldRecords, windowRecords, marketSplits, leaderboard];

/**
 * Projection transactions take this lock, so two batches (or a batch and a rebuild), in any
 * number of worker processes, run one after the other: concurrent re-ranks would collide on the
 * leaderboard's unique keys, and a batch must not interleave with a rebuild's truncate.
 */
async function lockProjections(tx: Tx): Promise<void> {
  await tx.query(sql`select pg_advisory_xact_lock(hashtext('pm:projections'))`);
  // The streak and ranking sorts cover every settled call / every board row: in memory they take
  // a fraction of the time of the default 4 MB's external merge on disk. For this transaction only.
  await tx.query(sql`set local work_mem = '128MB'`);
}

/**
 * The incremental path: recompute these users' records and these markets' splits, then re-rank
 * every board, in one transaction.
 */
export async function projectChanges(db: Db, change: { userIds: number[]; marketIds: string[] }, now: Date): Promise<{ ms: Record<string, number> }> {
  const scope = { all: false as const, userIds: [...new Set(change.userIds)], marketIds: [...new Set(change.marketIds)], now };
  const ms: Record<string, number> = {};
  await db.tx(async (tx) => {
    await lockProjections(tx);
    for (const projection of PROJECTIONS) {
      const started = performance.now();
      await projection.apply(tx, scope);
      ms[projection.name] = Math.round(performance.now() - started);
    }
  });
  return { ms };
}

/**
 * A settlement part's projections, inside the part's transaction (settlement/settle-market.ts),
 * which takes the projections lock first (`lockForSettlement`) and settles its calls through
 * `settleCallsWithRecords` (their people's records moved by the delta in the same statement). This
 * recomputes whole the people the delta could not serve and, when `rank`, re-ranks every board (the
 * last part of a market always; the parts between at most every few seconds, as a re-rank costs the
 * same for a part of 5,000 calls as for the whole market). The records commit with the calls they
 * count, so no job after the commit owes them and nothing is lost when the worker dies right after it.
 */
export async function finishSettlement(
  tx: Tx,
  settled: { recompute: readonly number[]; asOf: Date },
  now: Date,
  rank = true,
): Promise<{ ms: Record<string, number>; recomputed: number }> {
  const started = performance.now();
  const recompute = [...new Set(settled.recompute)];
  if (recompute.length > 0) await userRecords.apply(tx, { all: false, userIds: recompute, marketIds: [], now: settled.asOf });
  const recomputed = performance.now();
  if (rank) await leaderboard.apply(tx, { all: false, userIds: [], marketIds: [], now });
  const ms = { records_recompute: Math.round(recomputed - started), leaderboard_rows: Math.round(performance.now() - recomputed) };
  return { ms, recomputed: recompute.length };
}

/** The projections lock, taken by a settlement's transaction before it touches any record. */
export const lockForSettlement = lockProjections;

/**
 * The rebuild: empty every projection table and recompute it from the source tables, in one
 * transaction (readers see the old rows until it commits), and record each projection's version.
 */
export async function rebuildProjections(db: Db, now: Date): Promise<{ ms: Record<string, number> }> {
  const ms: Record<string, number> = {};
  await db.tx(async (tx) => {
    await lockProjections(tx);
    // Input: none. Output: none; every projection table emptied (fixed names, not input).
    await tx.query(sql`truncate user_records, user_field_records, user_window_records, market_splits, leaderboard_rows`);
    for (const projection of PROJECTIONS) {
      const started = performance.now();
      await projection.apply(tx, { all: true, now });
      ms[projection.name] = Math.round(performance.now() - started);
      await tables.projection_versions(tx).insertOrUpdate(['name'], { name: projection.name, version: projection.version, rebuilt_at: now });
    }
  });
  return { ms };
}

/**
 * People whose profit_7d changed by the clock alone: a call of theirs settled in `(from, to]` has
 * just left the 7-day window. Input: the window's previous and current start. Output: user ids.
 */
export async function usersLeavingWeek(db: Db, from: Date, to: Date): Promise<number[]> {
  if (!(to > from)) return [];
  const rows = await tables.calls(db).find({ settled_at: allOf([greaterThan(from), not(greaterThan(to))]) }).select('user_id').distinct('user_id').all();
  return rows.map((r) => r.user_id);
}

/**
 * The window and field records' upkeep (`window-upkeep`, every minute): the calls settled since the
 * last run added to the kept rows (window-records.ts, field-records.ts), those that left a day, week
 * or month window taken out, in one transaction under the projections lock (a settlement may add to
 * the same rows). Input: the clock. Output: calls added and taken out (every field of the windows),
 * and calls added to the all-time field records.
 */
export async function upkeepWindows(db: Db, now: Date): Promise<{ added: number; aged: number; fieldsAdded: number; ms: number }> {
  const started = performance.now();
  const done = await db.tx(async (tx) => {
    await lockProjections(tx);
    const windows = await upkeepWindowRecords(tx, now);
    const fields = await upkeepFieldRecords(tx, now);
    return { ...windows, fieldsAdded: fields.added };
  });
  return { ...done, ms: Math.round(performance.now() - started) };
}

/**
 * A settlement that moved at least this many records leaves as many dead versions in user_records
 * and its seven indexes, on pages the visibility map no longer calls all-visible.
 */
export const TIDY_RECORDS_AFTER = 1_000;

/**
 * Vacuums user_records right after a settlement that moved many of them (TIDY_RECORDS_AFTER). A
 * person's ranks are counts of index ranges over it (migration 0012), index-only while its pages
 * are all-visible: after a 10,000-call settlement rewrote 17,693 of 50,000 rows, each count checked
 * the heap for every entry, and a person page took 53–121 ms instead of 18–40 ms until the next
 * autovacuum, up to a minute later and never where autovacuum is off. The table is small (one row
 * a person): the vacuum took 77 ms there and blocks no read or write; it skips when another
 * vacuum (autovacuum) holds the table. Input: none. Output: none.
 */
export async function tidyRecords(db: Db): Promise<void> {
  await db.query(sql`vacuum (skip_locked) user_records`);
}
