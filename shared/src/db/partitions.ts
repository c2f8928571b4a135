import { sql, type Queryable } from './connection.js';

/**
 * The day partitions of a table partitioned by day (raw points, the trade tape), oldest first: each
 * one's name (`<prefix><day number>`) and day number (days since the Unix epoch). Others are ignored.
 */
export async function dayPartitions(db: Queryable, parent: string, prefix: string): Promise<Array<{ name: string; day: number }>> {
  const rows: Array<{ name: string }> = await db.query(sql`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ${parent}::regclass
  `);
  return rows
    .map((r) => ({ name: r.name, day: r.name.startsWith(prefix) ? Number(r.name.slice(prefix.length)) : Number.NaN }))
    .filter((p) => Number.isInteger(p.day))
    .sort((x, y) => x.day - y.day);
}
