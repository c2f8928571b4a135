import { sql, type Db, type Outcomes } from '@pm/shared/db';
import type { DayAgo } from './model.js';

/**
 * Chances 24 hours ago per first-outcome token, for change_24h. Looked up with one statement per
 * build (an index probe per token on the raw points' key, else on the 5m candles') and held for `ttlMs`: event pages
 * are rebuilt every few hundred ms while prices move, and a chance a day ago barely moves within a
 * minute, so most builds cost no query at all.
 */

export interface DayAgoLookup {
  /** Chance at or before (now − 24 h) of each token that has such a point. */
  lookup(tokenIds: readonly string[], nowMs: number): Promise<DayAgo>;
  /** What the last lookups found, however old, without a query (pages that must not wait for Postgres). */
  cached(tokenIds: readonly string[]): DayAgo;
}

const DAY_MS = 86_400_000;
/** A cached token not looked up again for this many ttls is dropped (an open market's is refreshed every ttl). */
const EVICT_AFTER_TTLS = 10;
/** A token's latest point at or before the cut-off, its chance as float8. */
type DayAgoRow = Pick<Outcomes, 'token_id'> & { chance: number };

export function createDayAgoLookup(db: Pick<Db, 'query'>, opts: { ttlMs?: number } = {}): DayAgoLookup {
  const ttlMs = opts.ttlMs ?? 60_000;
  const cache = new Map<string, { chance: number | undefined; at: number }>();
  // Tokens nobody has asked about for a while (their markets closed) are dropped, at most once a ttl.
  let evictedAt = 0;
  function evict(nowMs: number) {
    if (nowMs - evictedAt < ttlMs) return;
    evictedAt = nowMs;
    for (const [t, hit] of cache) if (nowMs - hit.at >= EVICT_AFTER_TTLS * ttlMs) cache.delete(t);
  }

  function cached(tokenIds: readonly string[]): DayAgo {
    const out = new Map<string, number>();
    for (const t of tokenIds) {
      const chance = cache.get(t)?.chance;
      if (chance !== undefined) out.set(t, chance);
    }
    return out;
  }

  return {
    async lookup(tokenIds, nowMs) {
      const stale = [...new Set(tokenIds)].filter((t) => {
        const hit = cache.get(t);
        return hit === undefined || nowMs - hit.at >= ttlMs;
      });
      if (stale.length > 0) {
        // inputs: token ids, the cut-off instant (Unix s). outputs: per token with a point at or
        // before the cut-off, the chance of the latest such point: a raw point (kept 48 h), else the
        // close of the latest 5m candle (a backfilled past, or raw points already dropped); either at
        // most a day older than the cut-off: a chance from a week ago is not the chance 24 hours ago.
        const cut = Math.floor((nowMs - DAY_MS) / 1000);
        const rows: DayAgoRow[] = await db.query(sql`
          select t.token_id, coalesce(r.chance, k.c / 10000.0)::float8 as chance
          from unnest(${stale}::text[]) as t(token_id)
          join series s on s.token_id = t.token_id
          left join lateral (
            select rp.chance from raw_points rp where rp.series = s.id and rp.t <= ${cut}::int and rp.t > ${cut - 86_400}::int order by rp.t desc limit 1
          ) r on true
          left join lateral (
            select x.c[i] as c
            from (select p, c from candles where series = s.id and step = 300 and p <= ${cut}::int order by p desc limit 2) x
            cross join lateral generate_subscripts(x.c, 1) i
            where x.c[i] is not null and x.p + (i - 1) * 300 <= ${cut}::int and x.p + (i - 1) * 300 > ${cut - 86_400}::int
            order by x.p + (i - 1) * 300 desc limit 1
          ) k on r.chance is null
          where r.chance is not null or k.c is not null
        `);
        const found = new Map<string, number>();
        for (const r of rows) found.set(r.token_id, r.chance);
        for (const t of stale) cache.set(t, { chance: found.get(t), at: nowMs });
      }
      evict(nowMs);
      return cached(tokenIds);
    },
    cached,
  };
}
