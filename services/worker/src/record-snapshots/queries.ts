import { sql, type Calls, type Queryable } from '@pm/shared/db';

/**
 * The record snapshot builder's other reads: which ids a full build pages through, and which markets
 * a set of dirty records touches. Set-based, one statement for any number of ids (`= any($ids)`); bigint ids
 * come back as numbers (createDb's bigIntMode).
 */

/** inputs: a market id to start after and a batch size. outputs: the next called market ids in id order. */
export async function calledMarketIdsAfter(db: Queryable, after: string, batch: number): Promise<string[]> {
  const rows = await db.query(sql`
    select distinct market_id from calls where market_id > ${after} order by market_id limit ${batch}
  `);
  return rows.map((r: Pick<Calls, 'market_id'>) => r.market_id);
}

/**
 * inputs: dirty call ids, market ids. outputs: the markets whose call list to make: the dirty ones
 * (that exist) and those of the dirty calls. (Which calls' objects to refresh is found where they are
 * refreshed: bodies.ts refreshTouchedCallJson.)
 */
export async function touchedMarkets(db: Queryable, dirty: { calls: readonly string[]; markets: readonly string[] }): Promise<string[]> {
  const rows: Array<{ id: string }> = await db.query(sql`
    select market_id as id from calls where id = any(${[...dirty.calls]}::text[])
    union select id from markets where id = any(${[...dirty.markets]}::text[])
  `);
  return rows.map((r) => r.id);
}
