import type { Redis } from 'ioredis';
import { sql, type Queryable } from '@pm/shared/db';

/**
 * Closing chances (docs/skill.md): per market and outcome, the displayed chance the market had when
 * it closed or resolved, written ONCE, in the transaction that closes or resolves it, so that a
 * call's closing-line value can be recomputed by anyone from public data and never moves later.
 *
 * The source is the one the API shows and the history records: the displayed chance the ingestor
 * publishes to Redis (after its pending writes are flushed, so it is the newest the feed gave).
 * Where the feed never priced an outcome, the catalog's last price stands in while it is a chance
 * (strictly between 0 and 1; a resolved market's catalog prices are its final 1 and 0, not a chance
 * anyone could take). Without either, that outcome's element is null.
 */

/** Displayed chances of tokens as decimal text, null where none is known. */
export type LiveChances = (tokenIds: readonly string[]) => Promise<Array<string | null>>;

const DECIMAL = /^(0(\.\d+)?|1(\.0+)?)$/;

/** The ingestor's reader: its own pending chance writes first, then Redis's hash of displayed chances. */
export function redisLiveChances(redis: Redis, chancesKey: string, flush?: () => Promise<unknown>): LiveChances {
  return async (tokenIds) => {
    if (tokenIds.length === 0) return [];
    await flush?.();
    const values = await redis.hmget(chancesKey, ...tokenIds);
    return values.map((v) => (v !== null && DECIMAL.test(v) ? v : null));
  };
}

/**
 * Records the closing chances of those of `marketIds` that are closed and have none yet, inside the
 * caller's transaction (the one that closes or resolves them). Input: market ids, the live reader
 * (absent: the catalog's prices only). Output: the ids of the markets it recorded.
 */
export async function recordClosingChances(tx: Queryable, marketIds: readonly string[], live: LiveChances | undefined): Promise<string[]> {
  if (marketIds.length === 0) return [];
  // Input: market ids. Output: the tokens of those still without closing chances (row locks taken by the caller's update).
  const tokens: Array<{ token_id: string }> = await tx.query(sql`
    select o.token_id from outcomes o join markets m on m.id = o.market_id
    where m.id = any(${[...marketIds]}::text[]) and m.closing_chances is null`);
  if (tokens.length === 0) return [];
  const ids = tokens.map((t) => t.token_id);
  const chances = live === undefined ? ids.map(() => null) : await live(ids);
  // Input: market ids, (token, live chance) pairs. Output: the markets given closing chances, one
  // element per outcome index from 0 (live chance, else a catalog price that is a chance, else null).
  const rows: Array<{ id: string }> = await tx.query(sql`
    update markets m set closing_chances = x.chances
    from (
      select o.market_id,
             array_agg(coalesce(l.chance, case when o.catalog_price > 0 and o.catalog_price < 1 then o.catalog_price end)
                       order by o.outcome_index) as chances
      from outcomes o
      left join unnest(${ids}::text[], ${chances}::numeric[]) as l(token_id, chance) on l.token_id = o.token_id
      where o.market_id = any(${[...marketIds]}::text[])
      group by o.market_id
    ) x
    where m.id = x.market_id and m.closed and m.closing_chances is null
    returning m.id`);
  return rows.map((r) => r.id);
}
