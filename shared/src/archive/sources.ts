import { sql, type Db, type Queryable } from '../db/connection.js';
import { readCandles, resolvedEnds, roundMicro, type Candle, type QuoteCandle } from '../history/read.js';
import { PERIOD_SECONDS, STEP_SECONDS, type CandleInterval } from '../history/tiers.js';
import { ARCHIVE_DATASETS, type DatasetName } from './datasets.js';

/**
 * Where each dataset's rows come from, for one closed day [start, start + 86,400): Postgres, read a
 * batch at a time (nothing holds a whole day), in the dataset's order, so a rerun yields the same
 * rows in the same order. A row is an object keyed by the dataset's column names (datasets.ts).
 */

export type ArchiveRow = Record<string, unknown>;
export type RowBatches = AsyncIterable<ArchiveRow[]>;

/** Series read by one call of the history reader: ~1,440 candles each for a 1m day. */
const CANDLE_SERIES_PER_READ = 100;
const ROWS_PER_BATCH = 2_000;

/** Whether the trade tape exists in this database (the trades dataset is absent until it does). */
export async function hasTradeTape(db: Queryable): Promise<boolean> {
  const rows: Array<{ ok: boolean }> = await db.query(sql`select to_regclass('trade_prints') is not null as ok`);
  return rows[0]?.ok === true;
}

/** The datasets a day has in this database: every one but `trades` while the tape is absent. */
export async function presentDatasets(db: Queryable): Promise<DatasetName[]> {
  const tape = await hasTradeTape(db);
  return (Object.keys(ARCHIVE_DATASETS) as DatasetName[]).filter((d) => d !== 'trades' || tape);
}

export function datasetRows(db: Db, dataset: DatasetName, start: number): RowBatches {
  switch (dataset) {
    case 'candles':
      return candleRows(db, start);
    case 'trades':
      return streamed(db, tradesQuery(start));
    case 'markets':
      return streamed(db, marketsQuery(start));
    case 'calls':
      return streamed(db, callsQuery(start));
    case 'combos':
      return streamed(db, combosQuery(start));
  }
}

async function* streamed(db: Db, query: ReturnType<typeof sql>): RowBatches {
  let batch: ArchiveRow[] = [];
  for await (const row of db.queryStream(query, { batchSize: ROWS_PER_BATCH })) {
    batch.push(row as ArchiveRow);
    if (batch.length >= ROWS_PER_BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

const INTERVAL_OF_STEP = new Map<number, CandleInterval>(Object.entries(STEP_SECONDS).map(([k, v]) => [v, k as CandleInterval]));

/**
 * Each recorded series' finest step holding anything of the day: a 1m row of one of its hours, the
 * day's 5m or 1h row, or a 1d row with the day's slot set. inputs: series ids, day start.
 * outputs: series → step (a series the tiers hold nothing of that day for is absent).
 */
async function finestSteps(db: Queryable, series: readonly number[], start: number): Promise<Map<number, number>> {
  const p1d = Math.floor(start / (PERIOD_SECONDS[86_400] as number)) * (PERIOD_SECONDS[86_400] as number);
  const slot = (start - p1d) / 86_400 + 1;
  const rows: Array<{ series: number; step: number }> = await db.query(sql`
    select series, min(step)::int as step from (
      select series, step from candles where series = any(${series}::int[]) and step = 60 and p >= ${start}::int and p < ${start + 86_400}::int
      union all
      select series, step from candles where series = any(${series}::int[]) and step in (300, 3600) and p = ${start}::int
      union all
      select series, step from candles where series = any(${series}::int[]) and step = 86400 and p = ${p1d}::int and o[${slot}::int] is not null
    ) x group by series
  `);
  return new Map(rows.map((r) => [r.series, r.step]));
}

/**
 * The candles of the day through the history reader (shared/src/history/read.ts), the one place
 * that turns the tiers into candles: gaps carried forward, nothing before a series' first point, a
 * resolved market ending at its final price. Series in market order, a hundred per read.
 */
async function* candleRows(db: Db, start: number): RowBatches {
  const end = start + 86_400;
  // inputs: none. outputs: every recorded series with its market, outcome and token, in market order.
  const all: Array<{ series: number; market_id: string; outcome_index: number; token_id: string }> = await db.query(sql`
    select s.id as series, o.market_id, o.outcome_index, s.token_id
    from series s join outcomes o on o.token_id = s.token_id
    order by o.market_id collate "C", o.outcome_index
  `);
  for (let i = 0; i < all.length; i += CANDLE_SERIES_PER_READ) {
    const part = all.slice(i, i + CANDLE_SERIES_PER_READ);
    const ids = part.map((s) => s.series);
    const steps = await finestSteps(db, ids, start);
    if (steps.size === 0) continue;
    const ends = await resolvedEnds(db, ids);
    const byStep = new Map<number, number[]>();
    for (const [id, step] of steps) byStep.set(step, [...(byStep.get(step) ?? []), id]);
    const candles = new Map<number, Candle[]>();
    for (const [step, group] of byStep) {
      // Each row is one token's series: its own token's trades count.
      const flows = new Map(group.map((id) => [id, id]));
      for (const [id, list] of await readCandles(db, { series: group, step, start, end, now: end, ends, quotes: true, flows })) candles.set(id, list);
    }
    const batch: ArchiveRow[] = [];
    for (const s of part) {
      const list = candles.get(s.series);
      if (list === undefined) continue;
      const interval = INTERVAL_OF_STEP.get(steps.get(s.series) as number) as CandleInterval;
      for (const c of list) {
        batch.push({ market_id: s.market_id, outcome_index: s.outcome_index, token_id: s.token_id, interval, t: c.t * 1000, ...candleValues(c) });
      }
    }
    if (batch.length > 0) yield batch;
  }
}

const side = (name: 'bid' | 'ask', q: QuoteCandle | null | undefined): ArchiveRow => ({
  [`${name}_open`]: q?.open ?? null,
  [`${name}_high`]: q?.high ?? null,
  [`${name}_low`]: q?.low ?? null,
  [`${name}_close`]: q?.close ?? null,
});

/** A candle's values by CANDLE_VALUE_COLUMNS' names; notional and vwap to 10^-6, as the candles endpoint gives them. */
function candleValues(c: Candle): ArchiveRow {
  const volume = c.volume ?? null;
  const notional = c.notional ?? null;
  return {
    open: c.open,
    high: c.high,
    low: c.low,
    close: c.close,
    volume,
    notional: notional === null ? null : roundMicro(notional),
    trades: c.trades ?? null,
    vwap: volume !== null && volume > 0 ? roundMicro((notional as number) / volume) : null,
    ...side('bid', c.bid),
    ...side('ask', c.ask),
  };
}

// Each statement below: inputs the day's start (Unix s); outputs the dataset's columns, in its order.
// Times come as Unix milliseconds (float8), so the rows do not depend on a driver's date parsing.
const ms = (column: string) => sql.__dangerous__rawValue(`floor(extract(epoch from ${column}) * 1000)::float8`);

function tradesQuery(start: number) {
  // trade_prints is the tape unpacked, one row per print, keyed by the history's series (a token).
  return sql`
    select o.market_id, o.outcome_index, s.token_id, tp.at_ms::float8 as at, tp.price::float8 as price, tp.size::float8 as size, tp.side
    from trade_prints tp
    join series s on s.id = tp.series
    join outcomes o on o.token_id = s.token_id
    where tp.at_ms >= ${start * 1000}::bigint and tp.at_ms < ${(start + 86_400) * 1000}::bigint
    order by tp.at_ms, o.market_id collate "C", o.outcome_index, tp.price, tp.size, tp.side
  `;
}

function marketsQuery(start: number) {
  const end = new Date((start + 86_400) * 1000);
  return sql`
    select m.id as market_id, m.event_id, e.slug as event, m.question,
           array_agg(o.name order by o.outcome_index) as outcomes,
           array_agg(o.token_id order by o.outcome_index) as token_ids,
           case when m.resolved_at < ${end} then (case when m.voided then 'void' else 'resolved' end)
                when m.closed and m.closes_at < ${end} then 'closed'
                else 'open' end as status,
           case when m.resolved_at < ${end} and not m.voided then (array_agg(o.name order by o.outcome_index))[m.resolved_outcome_index + 1] end as resolved_outcome,
           case when m.resolved_at < ${end} then ${ms('m.resolved_at')} end as resolved_at,
           case when m.resolved_at < ${end} or (m.closed and m.closes_at < ${end}) then m.closing_chances::float8[] end as closing_chance
    from markets m
    join events e on e.id = m.event_id
    join outcomes o on o.market_id = m.id
    where m.resolved_at is null or m.resolved_at >= ${new Date(start * 1000)}
    group by m.id, e.slug
    order by m.id collate "C"
  `;
}

function callsQuery(start: number) {
  const from = new Date(start * 1000);
  const end = new Date((start + 86_400) * 1000);
  return sql`
    select c.id as call_id, u.handle, c.market_id, c.outcome_index, c.chance_at_call::float8 as chance_at_call, c.thesis,
           c.copied_from, c.is_fade,
           case when c.settled_at < ${end} then c.status else 'open' end as status,
           case when c.settled_at < ${end} then c.profit_on_10::float8 end as profit_on_10,
           case when c.settled_at < ${end} then c.xp_awarded else 0 end as xp_awarded,
           ${ms('c.made_at')} as made_at,
           case when c.settled_at < ${end} then ${ms('c.settled_at')} end as settled_at
    from calls c join users u on u.id = c.user_id
    where (c.made_at >= ${from} and c.made_at < ${end}) or (c.settled_at >= ${from} and c.settled_at < ${end})
    order by c.made_at, c.id collate "C"
  `;
}

function combosQuery(start: number) {
  const from = new Date(start * 1000);
  const end = new Date((start + 86_400) * 1000);
  return sql`
    select k.id as combo_id, u.handle, k.chance::float8 as chance, k.wins_on_10::float8 as wins_on_10,
           case when k.settled_at < ${end} then k.status else 'open' end as status,
           case when k.settled_at < ${end} then k.xp_awarded else 0 end as xp_awarded,
           ${ms('k.made_at')} as made_at,
           case when k.settled_at < ${end} then ${ms('k.settled_at')} end as settled_at,
           (select json_agg(json_build_object('market_id', l.market_id, 'outcome_index', l.outcome_index, 'chance_at_call', l.chance_at_call::float8,
                                              'status', case when l.settled_at < ${end} then l.status else 'open' end) order by l.leg_index)
            from combo_legs l where l.combo_id = k.id) as legs
    from combos k join users u on u.id = k.user_id
    where (k.made_at >= ${from} and k.made_at < ${end}) or (k.settled_at >= ${from} and k.settled_at < ${end})
    order by k.made_at, k.id collate "C"
  `;
}
