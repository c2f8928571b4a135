import { sql, type ReadQueryable } from '@pm/shared/db';
import { readTape, type TapePosition, type TapeTrade } from '@pm/shared/trades';

/**
 * The tape endpoint's reads: the outcome tokens of the markets asked for and their series (a key
 * probe each), then a page of the tape (shared/src/trades/read.ts). Read-only, on the API's read pool.
 */

export interface TapeOutcome {
  marketId: string;
  outcomeIndex: number;
}

export interface TradesPageQuery {
  marketIds: readonly string[];
  /** Only this outcome index; undefined: every outcome. */
  outcome: number | undefined;
  fromMs: number;
  toMs: number;
  after: TapePosition | undefined;
  limit: number;
}

export async function readTradesPage(db: ReadQueryable, q: TradesPageQuery): Promise<Array<TapeTrade & TapeOutcome>> {
  const rows: Array<{ market_id: string; outcome_index: number; series: number }> = await db.query(sql`
    select o.market_id, o.outcome_index, s.id as series
    from outcomes o join series s on s.token_id = o.token_id
    where o.market_id = any(${[...q.marketIds]}::text[]) ${q.outcome === undefined ? sql`` : sql`and o.outcome_index = ${q.outcome}::int`}
  `);
  const of = new Map(rows.map((r) => [r.series, { marketId: r.market_id, outcomeIndex: r.outcome_index }]));
  const trades = await readTape(db, { series: [...of.keys()], fromMs: q.fromMs, toMs: q.toMs, after: q.after, limit: q.limit });
  return trades.map((t) => ({ ...t, ...(of.get(t.series) as TapeOutcome) }));
}
