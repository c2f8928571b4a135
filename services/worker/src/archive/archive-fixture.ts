import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { createInterface } from 'node:readline';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { sql, type Db } from '@pm/shared/db';
import { ensureRawPartitions, insertRawPoints, roundMicro, runRollup, storeBackfill, seriesIds, type RawPoint } from '@pm/shared/history';
import { recordTrades, storedTrade } from '@pm/shared/trades';
import { ARCHIVE_DATASETS, type ArchiveColumn, type ColumnType, type DatasetName } from '@pm/shared/archive';

/**
 * A simulated day for the archive's tests, inserted as the ingestor and the records would leave it,
 * with what each dataset must hold for it written out by hand from what was inserted; and the two
 * readers the files are checked with: hyparquet (not DuckDB, which writes them) for Parquet, and
 * zlib + JSON.parse for the NDJSON.
 */

export const DAY = '2026-11-30';
export const D = Date.parse(`${DAY}T00:00:00Z`) / 1000;
const iso = (t: number) => new Date(t * 1000).toISOString();

export interface SimulatedDay {
  /** Every dataset's rows as the files must hold them (JSON shapes: ISO times, numbers, nulls). */
  expected: Record<DatasetName, Array<Record<string, unknown>>>;
}

async function market(db: Db, id: string, outcomes: string[], extra: { resolvedAt?: number; winner?: number | null; closingChances?: number[] } = {}): Promise<void> {
  await db.query(sql`insert into events (id, slug, title, category) values (${`ev-${id}`}, ${`event-${id}`}, ${`Event ${id}`}, 'Sport') on conflict do nothing`);
  const resolved = extra.resolvedAt !== undefined;
  await db.query(sql`
    insert into markets (id, event_id, condition_id, position, question, closed, resolved_outcome_index, voided, resolved_at, closing_chances)
    values (${id}, ${`ev-${id}`}, ${`c-${id}`}, 0, ${`Will ${id}?`}, ${resolved}, ${extra.winner ?? null}::int, ${resolved && extra.winner === null},
            ${resolved ? new Date((extra.resolvedAt as number) * 1000) : null}, ${extra.closingChances ?? null}::numeric[])
  `);
  for (const [i, name] of outcomes.entries()) {
    await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id, catalog_price) values (${id}, ${i}, ${name}, ${`tok-${id}-${i}`}, 0.5)`);
  }
}

type Ohlc = [o: number, h: number, l: number, c: number];
type Side = Ohlc | null;

/** A bucket's OHLC (in units) with one more value folded in. */
const fold = (held: Side, v: number): Ohlc => (held ? [held[0], Math.max(held[1], v), Math.min(held[2], v), v] : [v, v, v, v]);
const flat = (v: number): Ohlc => [v, v, v, v];

/**
 * The plain recomputation of 1m candles from points, gaps carried forward, up to `last` (a bucket
 * start): the chance's OHLC, and each book side's from the points where it was quoted (null when it
 * was empty throughout the bucket; a gap carries the side's last close, null after an empty one).
 */
function minuteCandles(points: readonly RawPoint[], first: number, last: number, end?: { t: number; chance: number }) {
  const units = (p: number | null | undefined) => (p === null || p === undefined ? null : Math.round(p * 10_000));
  const buckets = new Map<number, { k: Side; bid: Side; ask: Side }>();
  for (const p of [...points].sort((a, b) => a.t - b.t)) {
    const b = Math.floor(p.t / 60) * 60;
    const held = buckets.get(b) ?? { k: null, bid: null, ask: null };
    const bid = units(p.bid);
    const ask = units(p.ask);
    buckets.set(b, { k: fold(held.k, units(p.chance) as number), bid: bid === null ? held.bid : fold(held.bid, bid), ask: ask === null ? held.ask : fold(held.ask, ask) });
  }
  const out: Array<{ t: number; o: number; h: number; l: number; c: number; bid: Side; ask: Side }> = [];
  let prev: { c: number; bid: number | null; ask: number | null } | undefined;
  for (let t = first; t <= last; t += 60) {
    const k = buckets.get(t);
    if (k) {
      const [o, h, l, c] = k.k as Ohlc;
      out.push({ t, o, h, l, c, bid: k.bid, ask: k.ask });
      prev = { c, bid: k.bid?.[3] ?? null, ask: k.ask?.[3] ?? null };
    } else if (prev !== undefined) out.push({ t, o: prev.c, h: prev.c, l: prev.c, c: prev.c, bid: prev.bid === null ? null : flat(prev.bid), ask: prev.ask === null ? null : flat(prev.ask) });
  }
  // A resolved market's last candle (the one holding resolved_at) closes at the final price.
  const final = out.at(-1);
  if (end && final && final.t === Math.floor(end.t / 60) * 60) {
    const v = Math.round(end.chance * 10_000);
    Object.assign(final, { h: Math.max(final.h, v), l: Math.min(final.l, v), c: v });
  }
  return out;
}

type Print = { token: string; at: number; price: string; size: string; side: 'BUY' | 'SELL' };

/**
 * The trades of a token's 1m bucket from the prints: volume, notional (to 10^-6), count and vwap;
 * 0 without a trade, null when the bucket ends at or before the token's first print (its trade
 * data begins there), vwap null without a trade.
 */
function minuteFlows(prints: readonly Print[], token: string, t: number) {
  const mine = prints.filter((p) => p.token === token);
  if (mine.length === 0 || (t + 60) * 1000 <= Math.min(...mine.map((p) => p.at))) return { volume: null, notional: null, trades: null, vwap: null };
  const inBucket = mine.filter((p) => p.at >= t * 1000 && p.at < (t + 60) * 1000);
  const volume = inBucket.reduce((s, p) => s + Number(p.size), 0);
  const notional = inBucket.reduce((s, p) => s + Number(p.price) * Number(p.size), 0);
  return { volume, notional: roundMicro(notional), trades: inBucket.length, vwap: volume > 0 ? roundMicro(notional / volume) : null };
}

const quoteRow = (name: 'bid' | 'ask', q: Side) => ({
  [`${name}_open`]: q === null ? null : q[0] / 10_000,
  [`${name}_high`]: q === null ? null : q[1] / 10_000,
  [`${name}_low`]: q === null ? null : q[2] / 10_000,
  [`${name}_close`]: q === null ? null : q[3] / 10_000,
});

export async function simulateDay(db: Db): Promise<SimulatedDay> {
  // a: open all day; b: resolved Yes at noon; c: resolved the day before (not in the day's catalog);
  // d: three outcomes, known only from the exchange's hourly backfill.
  await market(db, 'a', ['Yes', 'No']);
  await market(db, 'b', ['Yes', 'No'], { resolvedAt: D + 12 * 3600 + 30, winner: 0, closingChances: [0.81, 0.19] });
  await market(db, 'c', ['Yes', 'No'], { resolvedAt: D - 3600, winner: 1, closingChances: [0.1, 0.9] });
  await market(db, 'd', ['Red', 'Green', 'Blue']);
  const series = await seriesIds(db, ['tok-a-0', 'tok-b-0', 'tok-d-0']);
  const sa = series.get('tok-a-0') as number;
  const sb = series.get('tok-b-0') as number;
  const sd = series.get('tok-d-0') as number;

  // a: a point every 7 minutes from 01:00 with its book top (every fourth with no ask: a gap after it
  // carries none), two in one minute at 05:00 each with one side; b: every 11 minutes until its
  // resolution, bids only.
  const pa: RawPoint[] = [];
  for (let t = D + 3600, i = 0; t < D + 86_400; t += 7 * 60, i++) {
    const chance = 0.3 + ((t / 60) % 17) / 100;
    pa.push({ series: sa, t, chance, bid: chance - ((t / 60) % 3) / 100, ask: i % 4 === 0 ? null : chance + 0.02 });
  }
  pa.push({ series: sa, t: D + 5 * 3600 + 5, chance: 0.6, bid: 0.59, ask: null }, { series: sa, t: D + 5 * 3600 + 30, chance: 0.4, bid: 0.35, ask: 0.45 }, { series: sa, t: D + 5 * 3600 + 50, chance: 0.25, bid: null, ask: 0.27 });
  const pb: RawPoint[] = [];
  for (let t = D + 600; t < D + 12 * 3600; t += 11 * 60) pb.push({ series: sb, t, chance: 0.5 + ((t / 60) % 13) / 100, bid: 0.45 });
  // Trades (before the rollup, as the ingestor records them): a match printed on both of a's tokens
  // at 01:30 (a's candles before it have no volume figure), two prints of a's Yes in one millisecond, one of
  // b's, and one on each side of the day (not in it).
  const tapeSeries = await seriesIds(db, ['tok-a-0', 'tok-a-1', 'tok-b-0']);
  const prints: Print[] = [
    { token: 'tok-a-0', at: D * 1000 + 5_400_123, price: '0.45', size: '10', side: 'BUY' },
    { token: 'tok-a-1', at: D * 1000 + 5_400_123, price: '0.55', size: '10', side: 'SELL' },
    { token: 'tok-a-0', at: D * 1000 + 7_200_500, price: '0.47', size: '5.5', side: 'SELL' },
    { token: 'tok-a-0', at: D * 1000 + 7_200_500, price: '0.46', size: '2', side: 'BUY' },
    { token: 'tok-b-0', at: D * 1000 + 43_000_000, price: '0.9', size: '120.25', side: 'BUY' },
    { token: 'tok-b-0', at: D * 1000 - 1, price: '0.5', size: '1', side: 'BUY' },
    { token: 'tok-a-0', at: (D + 86_400) * 1000, price: '0.5', size: '1', side: 'BUY' },
  ];
  await recordTrades(
    db,
    prints.map((p, i) => ({
      series: tapeSeries.get(p.token) as number,
      ...storedTrade({ price: p.price, size: p.size, side: p.side, timestamp: p.at, transactionHash: `0x${i}`, feeRateBps: null }, 0),
    })),
  );
  await ensureRawPartitions(db, D - 86_400, D + 2 * 86_400);
  await insertRawPoints(db, [...pa, ...pb]);
  // A raw point the next day keeps the rollup going past the day's end.
  await insertRawPoints(db, [{ series: sa, t: D + 86_400 + 60, chance: 0.5 }]);
  await runRollup(db, { now: D + 86_400 + 3 * 3600 });
  await storeBackfill(db, sd, 3600, [
    { t: D + 2 * 3600, chance: 0.2 },
    { t: D + 9 * 3600, chance: 0.35 },
  ]);

  const trade = (p: (typeof prints)[number]) => ({
    market_id: p.token.split('-')[1],
    outcome_index: Number(p.token.split('-')[2]),
    token_id: p.token,
    at: new Date(p.at).toISOString(),
    price: Number(p.price),
    size: Number(p.size),
    side: p.side,
  });
  const [t0, t1, t2, t3, t4] = prints;

  const row = (market_id: string, interval: string, c: { t: number; o: number; h: number; l: number; c: number; bid: Side; ask: Side }) => ({
    market_id,
    outcome_index: 0,
    token_id: `tok-${market_id}-0`,
    interval,
    t: iso(c.t),
    open: c.o / 10_000,
    high: c.h / 10_000,
    low: c.l / 10_000,
    close: c.c / 10_000,
    ...minuteFlows(interval === '1m' ? prints : [], `tok-${market_id}-0`, c.t),
    ...quoteRow('bid', c.bid),
    ...quoteRow('ask', c.ask),
  });
  const ca = minuteCandles(pa, D, D + 86_400 - 60).map((c) => row('a', '1m', c));
  const resolved = D + 12 * 3600 + 30;
  const cb = minuteCandles(pb, D, Math.floor(resolved / 60) * 60, { t: resolved, chance: 1 }).map((c) => row('b', '1m', c));
  const cd: ReturnType<typeof row>[] = [];
  for (let h = 2; h < 24; h++) {
    const v = h < 9 ? 2000 : 3500;
    cd.push(row('d', '1h', { t: D + h * 3600, o: v, h: v, l: v, c: v, bid: null, ask: null }));
  }

  // People, calls and combos: made or settled in the day, and around it.
  const [alice, bob] = (await db.query(sql`insert into users (handle, display_name) values ('alice', 'Alice'), ('Bob', 'Bob') returning id`)) as Array<{ id: number }>;
  const call = async (id: string, user: number, marketId: string, outcome: number, madeAt: number, settled?: { at: number; status: string; profit: number; xp: number }) =>
    db.query(sql`
      insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, status, profit_on_10, xp_awarded, made_at, settled_at)
      values (${id}, ${user}, ${marketId}, ${outcome}, 0.4, ${`because ${id}`}, ${settled?.status ?? 'open'}, ${settled?.profit ?? null}::numeric, ${settled?.xp ?? 0},
              ${new Date(madeAt * 1000)}, ${settled ? new Date(settled.at * 1000) : null})
    `);
  await call('k-before', alice!.id, 'b', 0, D - 7200, { at: D + 12 * 3600 + 40, status: 'won', profit: 15, xp: 64 });
  await call('k-day-open', bob!.id, 'a', 1, D + 100);
  await call('k-day-next', alice!.id, 'b', 1, D + 3600, { at: D + 86_400 + 10, status: 'lost', profit: -10, xp: 0 });
  await call('k-outside', bob!.id, 'a', 0, D - 86_400);
  await call('k-after', bob!.id, 'a', 0, D + 86_400 + 5);
  const combo = async (id: string, user: number, madeAt: number, legs: Array<{ market: string; outcome: number; settledAt?: number; status?: string }>, settled?: { at: number; status: string; xp: number }) => {
    await db.query(sql`
      insert into combos (id, user_id, chance, wins_on_10, status, xp_awarded, made_at, settled_at)
      values (${id}, ${user}, 0.2, 50, ${settled?.status ?? 'open'}, ${settled?.xp ?? 0}, ${new Date(madeAt * 1000)}, ${settled ? new Date(settled.at * 1000) : null})
    `);
    for (const [i, l] of legs.entries()) {
      await db.query(sql`
        insert into combo_legs (combo_id, leg_index, market_id, outcome_index, chance_at_call, status, settled_at)
        values (${id}, ${i}, ${l.market}, ${l.outcome}, 0.5, ${l.status ?? 'open'}, ${l.settledAt ? new Date(l.settledAt * 1000) : null})
      `);
    }
  };
  await combo('x-day', bob!.id, D + 500, [{ market: 'b', outcome: 0, settledAt: D + 12 * 3600 + 40, status: 'won' }, { market: 'a', outcome: 0 }]);
  await combo('x-next', alice!.id, D + 900, [{ market: 'b', outcome: 1, settledAt: D + 12 * 3600 + 40, status: 'lost' }, { market: 'a', outcome: 1, settledAt: D + 86_400 + 20, status: 'won' }], {
    at: D + 12 * 3600 + 40,
    status: 'lost',
    xp: 0,
  });
  await combo('x-old', alice!.id, D - 5 * 86_400, [{ market: 'c', outcome: 0, settledAt: D - 3000, status: 'lost' }, { market: 'a', outcome: 0 }], { at: D - 3000, status: 'lost', xp: 0 });

  const callRow = (call_id: string, handle: string, market_id: string, outcome_index: number, made: number, s: { status: string; profit: number | null; xp: number; at: number | null }) => ({
    call_id,
    handle,
    market_id,
    outcome_index,
    chance_at_call: 0.4,
    thesis: `because ${call_id}`,
    copied_from: null,
    is_fade: false,
    status: s.status,
    profit_on_10: s.profit,
    xp_awarded: s.xp,
    made_at: iso(made),
    settled_at: s.at === null ? null : iso(s.at),
  });
  const open = { status: 'open', profit: null, xp: 0, at: null };
  return {
    expected: {
      candles: [...ca, ...cb, ...cd],
      // By time, then market, outcome and price.
      trades: [t0!, t1!, t3!, t2!, t4!].map(trade),
      markets: [
        { market_id: 'a', event_id: 'ev-a', event: 'event-a', question: 'Will a?', outcomes: ['Yes', 'No'], token_ids: ['tok-a-0', 'tok-a-1'], status: 'open', resolved_outcome: null, resolved_at: null, closing_chance: null },
        {
          market_id: 'b',
          event_id: 'ev-b',
          event: 'event-b',
          question: 'Will b?',
          outcomes: ['Yes', 'No'],
          token_ids: ['tok-b-0', 'tok-b-1'],
          status: 'resolved',
          resolved_outcome: 'Yes',
          resolved_at: iso(resolved),
          closing_chance: [0.81, 0.19],
        },
        { market_id: 'd', event_id: 'ev-d', event: 'event-d', question: 'Will d?', outcomes: ['Red', 'Green', 'Blue'], token_ids: ['tok-d-0', 'tok-d-1', 'tok-d-2'], status: 'open', resolved_outcome: null, resolved_at: null, closing_chance: null },
      ],
      calls: [
        callRow('k-before', 'alice', 'b', 0, D - 7200, { status: 'won', profit: 15, xp: 64, at: D + 12 * 3600 + 40 }),
        callRow('k-day-open', 'Bob', 'a', 1, D + 100, open),
        callRow('k-day-next', 'alice', 'b', 1, D + 3600, open),
      ],
      combos: [
        {
          combo_id: 'x-day',
          handle: 'Bob',
          chance: 0.2,
          wins_on_10: 50,
          status: 'open',
          xp_awarded: 0,
          made_at: iso(D + 500),
          settled_at: null,
          legs: [
            { market_id: 'b', outcome_index: 0, chance_at_call: 0.5, status: 'won' },
            { market_id: 'a', outcome_index: 0, chance_at_call: 0.5, status: 'open' },
          ],
        },
        {
          combo_id: 'x-next',
          handle: 'alice',
          chance: 0.2,
          wins_on_10: 50,
          status: 'lost',
          xp_awarded: 0,
          made_at: iso(D + 900),
          settled_at: iso(D + 12 * 3600 + 40),
          legs: [
            { market_id: 'b', outcome_index: 1, chance_at_call: 0.5, status: 'lost' },
            { market_id: 'a', outcome_index: 1, chance_at_call: 0.5, status: 'open' },
          ],
        },
      ],
    },
  };
}

/** A value hyparquet read, in the NDJSON's shape (ISO times, plain numbers), by the column's type. */
function normalise(type: ColumnType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof type === 'object') {
    const list = v as unknown[];
    if ('list' in type) return list.map((x) => normalise(type.list, x));
    return list.map((x) => normaliseRow(type.records, x as Record<string, unknown>));
  }
  if (type === 'timestamp') return (v instanceof Date ? v : new Date(Number(v) / 1000)).toISOString();
  if (type === 'int' || type === 'double' || type === 'money') return Number(v);
  return v;
}

function normaliseRow(columns: readonly ArchiveColumn[], row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(columns.map((c) => [c.name, normalise(c.type, row[c.name])]));
}

/** A Parquet file's rows, read by hyparquet, in the dataset's JSON shape; with the file's column names. */
export async function readParquet(file: string, dataset: DatasetName): Promise<{ rows: Array<Record<string, unknown>>; columns: string[] }> {
  const bytes = await readFile(file);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = (await parquetReadObjects({ file: buffer, compressors })) as Array<Record<string, unknown>>;
  const def = ARCHIVE_DATASETS[dataset];
  return { rows: rows.map((r) => normaliseRow(def.columns, r)), columns: rows[0] ? Object.keys(rows[0]) : [] };
}

/** An ndjson.gz file's rows. */
export async function readNdjson(file: string): Promise<Array<Record<string, unknown>>> {
  const rows: Array<Record<string, unknown>> = [];
  for await (const line of createInterface({ input: createReadStream(file).pipe(createGunzip()) })) if (line !== '') rows.push(JSON.parse(line) as Record<string, unknown>);
  return rows;
}
