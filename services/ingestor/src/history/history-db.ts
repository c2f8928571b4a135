import { sql, type Db } from '@pm/shared/db';

/** price_points reads and writes of the history recorder. */

export interface PointRow {
  tokenId: string;
  /** Unix ms. */
  at: number;
  chance: number;
}

/**
 * One multi-row insert; a point already stored (same token and instant: a repeated backfill, or a
 * live point on a backfilled second) is skipped.
 * inputs: points. outputs: the number of rows inserted.
 */
export async function insertPoints(db: Db, points: readonly PointRow[]): Promise<number> {
  if (points.length === 0) return 0;
  const rows: Array<{ n: number }> = await db.query(sql`
    with ins as (
      insert into price_points (token_id, t, chance)
      select p.token_id, to_timestamp(p.at_ms / 1000.0), p.chance
      from unnest(${points.map((p) => p.tokenId)}::text[], ${points.map((p) => p.at)}::float8[], ${points.map((p) => p.chance)}::numeric[])
           as p(token_id, at_ms, chance)
      on conflict (token_id, t) do nothing
      returning 1
    )
    select count(*)::int as n from ins
  `);
  return rows[0]?.n ?? 0;
}

/**
 * The tokens among `tokenIds` whose past has not been fetched yet: no point older than `before`.
 * "No point at all" would be the first-sight rule on a fresh database; after a restart, though, a
 * token may hold live points from the previous run although its backfill never completed. Live
 * points are all recent, a backfill reaches far back: a token with nothing older than an hour has
 * not been backfilled (or has no longer past: asking again is one cheap request).
 * inputs: token ids, a Unix ms instant. outputs: the tokens with no point before it.
 */
export async function tokensWithoutPast(db: Db, tokenIds: readonly string[], before: number): Promise<string[]> {
  if (tokenIds.length === 0) return [];
  const rows: Array<{ token_id: string }> = await db.query(sql`
    select t.token_id
    from unnest(${[...tokenIds]}::text[]) as t(token_id)
    where not exists (
      select 1 from price_points p where p.token_id = t.token_id and p.t < to_timestamp(${before / 1000}::float8)
    )
  `);
  return rows.map((r) => r.token_id);
}
