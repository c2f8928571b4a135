import { sql, type Db, type Queryable } from '../db/connection.js';
import { dayPartitions } from '../db/partitions.js';
import { dayOfMs, ensureTradePartitions } from './write.js';

/**
 * The tape's retention (docs/design.md "Trades"): raw trades are kept TRADES_RETENTION_DAYS, then dropped a
 * whole day's partition at a time, never row by row. `trade_series` stays: when a series' data began
 * is still true after its first days are gone.
 */

const DAY_MS = 86_400_000;

/** Trade partitions, oldest first: name and day number. */
export async function tradePartitions(db: Queryable): Promise<Array<{ name: string; day: number }>> {
  return dayPartitions(db, 'trades', 'trades_d');
}

/** The oldest instant (Unix ms) a window of the tape may reach back to at `nowMs`. */
export function tradesFloorMs(nowMs: number, retentionDays: number): number {
  return nowMs - retentionDays * DAY_MS;
}

/**
 * Makes the partitions of yesterday to the day after tomorrow and drops each one wholly older than
 * the retention. inputs: now (Unix ms), retention in days. outputs: the partitions dropped.
 */
export async function runTradesUpkeep(db: Db, opts: { nowMs: number; retentionDays: number }): Promise<string[]> {
  await ensureTradePartitions(db, opts.nowMs - DAY_MS, opts.nowMs + 2 * DAY_MS);
  const floor = tradesFloorMs(opts.nowMs, opts.retentionDays);
  const dropped: string[] = [];
  for (const part of await tradePartitions(db)) {
    if ((part.day + 1) * DAY_MS > floor || part.day >= dayOfMs(opts.nowMs)) break;
    await db.query(sql`drop table if exists ${sql.ident(part.name)}`);
    dropped.push(part.name);
  }
  return dropped;
}
