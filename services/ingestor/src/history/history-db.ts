import { sql, tables, type Db, type PricePoints_InsertParameters } from '@pm/shared/db';

/** price_points reads and writes of the history recorder. */

/**
 * One multi-row insert (pg-typed's bulk insert: one `unnest` statement); a point already stored
 * (same token and instant: a repeated backfill, or a live point on a backfilled second) is skipped.
 * inputs: points. outputs: the number of rows inserted.
 */
export async function insertPoints(db: Db, points: readonly PricePoints_InsertParameters[]): Promise<number> {
  if (points.length === 0) return 0;
  const inserted = await tables.price_points(db).bulkInsertOrIgnore({ columnsToInsert: ['token_id', 't', 'chance'], records: points });
  return inserted.length;
}

/** A point as the recorder holds it (Unix ms, chance as a number) in the table's row type. */
export function pricePoint(tokenId: string, atMs: number, chance: number): PricePoints_InsertParameters {
  return { token_id: tokenId, t: new Date(atMs), chance: String(chance) };
}

/**
 * The tokens among `tokenIds` whose past has not been fetched yet: no point older than `before`.
 * "No point at all" would be the first-sight rule on a fresh database; after a restart, though, a
 * token may hold live points from the previous run although its backfill never completed. Live
 * points are all recent, a backfill reaches far back: a token with nothing older than an hour has
 * not been backfilled (or has no longer past: asking again is one cheap request).
 *
 * Hand-written SQL on purpose: it asks, per given token, whether ANY old row exists (an anti-join
 * against the parameter list, one index probe per token). pg-typed can only return matching rows
 * (`find(...).distinct('token_id')`), which would read every backfilled point of every token
 * (thousands each) to learn one bit.
 * inputs: token ids, a Unix ms instant. outputs: the tokens with no point before it.
 */
export async function tokensWithoutPast(db: Db, tokenIds: readonly string[], before: number): Promise<string[]> {
  if (tokenIds.length === 0) return [];
  const rows: Array<Pick<PricePoints_InsertParameters, 'token_id'>> = await db.query(sql`
    select t.token_id
    from unnest(${[...tokenIds]}::text[]) as t(token_id)
    where not exists (
      select 1 from price_points p where p.token_id = t.token_id and p.t < to_timestamp(${before / 1000}::float8)
    )
  `);
  return rows.map((r) => r.token_id);
}
