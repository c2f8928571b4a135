import { sql, type Queryable } from '../db/connection.js';

/**
 * The tape's reads (docs/design.md "Trades"): a page of trades of some series, newest first, in the order
 * (time, series, key) descending — total, since a key is unique within its series — so a page can
 * end anywhere and the next start right after it.
 *
 * A row (a batch) holds trades from lo to hi; every trade at or after an instant is in a row whose hi
 * is at or after it, which the index (series, hi) finds. A page is read from a window reaching back
 * from its upper bound, widened fourfold until it holds the page or reaches the lower bound; the
 * first window starts from the newest batch, so a quiet market's page is not many empty windows.
 */

export interface TapeTrade {
  series: number;
  atMs: number;
  /** Price in millionths. */
  px: number;
  /** Signed size: negative for a SELL taker. */
  sz: number;
  key: string;
}

/** Where a page ended: the last trade shown. */
export type TapePosition = Pick<TapeTrade, 'series' | 'atMs' | 'key'>;

export interface TapeQuery {
  series: readonly number[];
  /** Unix ms, inclusive. */
  fromMs: number;
  /** Unix ms, exclusive. */
  toMs: number;
  /** The last trade of the previous page: only trades after it in the order. */
  after?: TapePosition;
  limit: number;
}

const DAY_MS = 86_400_000;
const FIRST_WINDOW_MS = 60_000;

/** Anything that runs a query: a pool, a transaction, the API's read pool. */
type Reader = Pick<Queryable, 'query'>;

export async function readTape(db: Reader, q: TapeQuery): Promise<TapeTrade[]> {
  if (q.series.length === 0 || q.limit <= 0) return [];
  const series = [...q.series];
  const upper = q.after === undefined ? q.toMs - 1 : Math.min(q.toMs - 1, q.after.atMs);
  if (upper < q.fromMs) return [];
  // The newest batch that ends at or before the bound (one that straddles it is in every window).
  const newest: Array<{ hi: number | null }> = await db.query(sql`
    select max(hi) as hi from trades where series = any(${series}::int[]) and hi <= ${upper}::bigint and hi >= ${q.fromMs}::bigint
  `);
  const anchor = newest[0]?.hi ?? upper;
  for (let width = FIRST_WINDOW_MS; ; width *= 4) {
    const from = Math.max(q.fromMs, anchor - width);
    const rows = await window(db, series, from, upper, q);
    if (rows.length >= q.limit || from === q.fromMs) return rows;
  }
}

/** The page's trades within [from, upper], after the position when given. */
async function window(db: Reader, series: number[], from: number, upper: number, q: TapeQuery): Promise<TapeTrade[]> {
  const a = q.after;
  const rows: Array<{ series: number; at: number; px: number; sz: number; k: string }> = await db.query(sql`
    select t.series, t.lo + u.off as at, u.px, u.sz, u.k::text as k
    from trades t cross join lateral unnest(t.off, t.px, t.sz, t.k) as u(off, px, sz, k)
    where t.series = any(${series}::int[]) and t.hi >= ${from}::bigint and t.lo <= ${upper}::bigint and t.lo >= ${from - DAY_MS}::bigint
      and t.lo + u.off between ${from}::bigint and ${upper}::bigint
      ${a === undefined ? sql`` : sql`and (t.lo + u.off, t.series, u.k) < (${a.atMs}::bigint, ${a.series}::int, ${a.key}::bigint)`}
    order by at desc, t.series desc, u.k desc
    limit ${q.limit}
  `);
  return rows.map((r) => ({ series: r.series, atMs: Number(r.at), px: r.px, sz: r.sz, key: r.k }));
}

/** A trade's public id: opaque (base64url of series, time and key), stable across reads and replays. */
export function tradeId(t: TapePosition): string {
  const b = Buffer.alloc(20);
  b.writeInt32BE(t.series, 0);
  b.writeBigInt64BE(BigInt(t.atMs), 4);
  b.writeBigInt64BE(BigInt(t.key), 12);
  return b.toString('base64url');
}

/** The position a trade id names; null when it is not one. */
export function parseTradeId(id: string): TapePosition | null {
  const b = Buffer.from(id, 'base64url');
  if (b.length !== 20 || b.toString('base64url') !== id) return null;
  return { series: b.readInt32BE(0), atMs: Number(b.readBigInt64BE(4)), key: b.readBigInt64BE(12).toString() };
}
