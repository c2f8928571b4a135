import { sql, type Db } from '@pm/shared/db';
import { NULL_UNITS, readPackedCandles, roundMicro, SHARE_UNITS, type CandleSet, type HistoryDb, type PackedCandles } from '@pm/shared/history';
import type { Logger } from '@pm/shared/logger';
import { ApiError } from '../http/errors.js';

export type { CandleSet, PackedCandles };
/** The packed candles' null (an empty book side) and volume unit, for the routes that write them. */
export { NULL_UNITS, roundMicro, SHARE_UNITS };

/**
 * The candles endpoint's reads, in one place: the markets' series and resolutions (a key probe
 * each), then the tiers (shared/src/history/read.ts: index range scans). It runs on whatever query
 * function it is given — the API's own small pool today, a read replica's pool tomorrow — and
 * never writes.
 */

export interface CandleReadQuery {
  marketIds: readonly string[];
  step: number;
  start: number;
  end: number;
  /** Unix seconds. */
  now: number;
  /** With the book top's bid and ask candles (of the first outcome). */
  quotes?: boolean;
  /** With the trades of this outcome's token (its index in every market asked). */
  volumeOf?: number;
}

export interface CandleReader {
  /** Market → its first outcome's candles, packed, with the groups asked for (absent: no point recorded yet). */
  read(q: CandleReadQuery): Promise<Map<string, CandleSet>>;
  close(): Promise<void>;
}

const UNAVAILABLE = 'price history is unavailable right now; please try again shortly';

export function createCandleReader(deps: { db: HistoryDb & Partial<Pick<Db, 'dispose'>>; logger: Logger }): CandleReader {
  const { db, logger } = deps;
  return {
    async read(q) {
      try {
        // inputs: market ids, the outcome whose trades count. outputs: per market, its first
        // outcome's series (when it has points), that outcome's token series (when it has one) and,
        // when resolved, resolved_at and the first outcome's final chance (1/0 by the winner, a
        // voided market's last catalog price).
        const rows: Array<{ market_id: string; series: number | null; traded: number | null; t: number | null; chance: number | null }> = await db.query(sql`
          select m.id as market_id, s.id as series, ts.id as traded, extract(epoch from m.resolved_at)::float8 as t,
                 case when m.resolved_at is null then null
                      when not m.voided and m.resolved_outcome_index is not null then (m.resolved_outcome_index = 0)::int::float8
                      else o.catalog_price::float8 end as chance
          from markets m
          join outcomes o on o.market_id = m.id and o.outcome_index = 0
          left join series s on s.token_id = o.token_id
          left join outcomes ot on ot.market_id = m.id and ot.outcome_index = ${q.volumeOf ?? 0}::int
          left join series ts on ts.token_id = ot.token_id
          where m.id = any(${[...q.marketIds]}::text[])
        `);
        const bySeries = new Map<number, string>();
        const ends = new Map<number, { t: number; chance: number }>();
        const flows = new Map<number, number>();
        for (const r of rows) {
          if (r.series === null) continue;
          bySeries.set(r.series, r.market_id);
          if (r.t !== null && r.chance !== null) ends.set(r.series, { t: r.t, chance: r.chance });
          // A token never traded has no series: its candles' volume reads as before its trade data.
          flows.set(r.series, r.traded ?? 0);
        }
        const candles = await readPackedCandles(db, {
          series: [...bySeries.keys()],
          step: q.step,
          start: q.start,
          end: q.end,
          now: q.now,
          ends,
          quotes: q.quotes === true,
          ...(q.volumeOf === undefined ? {} : { flows }),
        });
        const out = new Map<string, CandleSet>();
        for (const [series, list] of candles) out.set(bySeries.get(series) as string, list);
        return out;
      } catch (err) {
        logger.warn({ err }, 'candle read failed');
        throw new ApiError('unavailable', UNAVAILABLE, { cause: err });
      }
    },
    async close() {
      await db.dispose?.();
    },
  };
}
