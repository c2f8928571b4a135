import { sql, type Db } from '@pm/shared/db';
import { insertRawPoints, seriesIds, storeBackfill } from '@pm/shared/history';
import type { PricePoint } from './history-client.js';

/** Raw point and backfill writes of the history recorder (the tiers: docs/history.md). */

/** A live point as the recorder holds it: token, Unix ms, chance, and the book top (null: that side empty). */
export interface LivePoint {
  tokenId: string;
  atMs: number;
  chance: number;
  bid?: number | null;
  ask?: number | null;
}

/**
 * Token id → series id, remembered for the process's life (a token's series never changes), made
 * on first use. inputs: token ids. outputs: their series ids.
 */
export function createSeriesCache(db: Db) {
  const known = new Map<string, number>();
  return async (tokenIds: readonly string[]): Promise<Map<string, number>> => {
    const missing = [...new Set(tokenIds.filter((t) => !known.has(t)))];
    if (missing.length > 0) for (const [t, id] of await seriesIds(db, missing)) known.set(t, id);
    return known;
  };
}
export type SeriesCache = ReturnType<typeof createSeriesCache>;

/**
 * One multi-row insert of live points into the raw table; a point already stored (same series and
 * second) is skipped. outputs: the number of rows inserted.
 */
export async function insertPoints(db: Db, series: SeriesCache, points: readonly LivePoint[]): Promise<number> {
  if (points.length === 0) return 0;
  const ids = await series(points.map((p) => p.tokenId));
  return insertRawPoints(
    db,
    points.map((p) => ({ series: ids.get(p.tokenId) as number, t: Math.floor(p.atMs / 1000), chance: p.chance, bid: p.bid, ask: p.ask })),
  );
}

/**
 * A token's backfilled past, each fetch into the tier its fidelity belongs to (minutes → step):
 * 5 → 5m, 60 → 1h (and the 1d candles from them), 360 and 1440 → 1d. Never into raw points: the
 * exchange's past is sampled, not the moves the recorder saw.
 */
export async function storeFetched(db: Db, series: SeriesCache, tokenId: string, fetched: ReadonlyArray<{ fidelity: number; points: readonly PricePoint[] }>): Promise<void> {
  const id = (await series([tokenId])).get(tokenId) as number;
  for (const f of fetched) {
    const step = f.fidelity <= 5 ? 300 : f.fidelity <= 60 ? 3600 : 86_400;
    await storeBackfill(db, id, step, f.points);
  }
}

/**
 * The tokens among `tokenIds` whose past has not been fetched yet: no candle of the 1h or 1d tier
 * (where every backfill lands) older than `before`. Live points are rolled up into recent hours
 * only, so a token that has nothing older than an hour has not been backfilled (or has no longer
 * past: asking again is one cheap request). One index probe per token.
 * inputs: token ids, a Unix ms instant. outputs: the tokens with no candle before it.
 */
export async function tokensWithoutPast(db: Db, tokenIds: readonly string[], before: number): Promise<string[]> {
  if (tokenIds.length === 0) return [];
  const rows: Array<{ token_id: string }> = await db.query(sql`
    select t.token_id
    from unnest(${[...tokenIds]}::text[]) as t(token_id)
    left join series s on s.token_id = t.token_id
    where s.id is null or not exists (
      select 1 from candles k
      where k.series = s.id and k.step in (3600, 86400) and k.p < ${Math.floor(before / 1000)}::int - 86400
    )
  `);
  return rows.map((r) => r.token_id);
}
