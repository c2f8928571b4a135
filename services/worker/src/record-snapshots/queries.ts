import { sql, type Calls, type Queryable } from '@pm/shared/db';

/**
 * The record snapshot builder's other reads: which ids a full build pages through, and what a set of
 * dirty records touches. Set-based, one statement for any number of ids (`= any($ids)`); bigint ids
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
 * What else a set of dirty records touches.
 * inputs: dirty call ids, market ids.
 * outputs: calls whose cached Call object to refresh (the dirty ones, and every call on a dirty
 *   market that has resolved: settlement changed them all) and markets whose call list to make (the
 *   dirty ones and those of the dirty calls).
 */
export async function expandDirty(db: Queryable, dirty: { calls: readonly string[]; markets: readonly string[] }): Promise<{ calls: string[]; markets: string[] }> {
  const rows = await db.query(sql`
    with resolved as (
      select id from markets where id = any(${[...dirty.markets]}::text[]) and (resolved_at is not null or closed)
    )
    select 'call' as kind, id from calls where id = any(${[...dirty.calls]}::text[])
    union select 'call', c.id from calls c where c.market_id in (select id from resolved)
    union select 'market', market_id from calls where id = any(${[...dirty.calls]}::text[])
    union select 'market', m.id from markets m where m.id = any(${[...dirty.markets]}::text[])
  `);
  const out = { calls: [] as string[], markets: [] as string[] };
  for (const r of rows as Array<{ kind: 'call' | 'market'; id: string }>) (r.kind === 'call' ? out.calls : out.markets).push(r.id);
  return out;
}
