/**
 * The archive's datasets (docs/archive.md), defined once: each dataset's columns, their types and
 * meaning. The writer types its Parquet columns from here, the NDJSON rows are shaped from here,
 * docs/archive.md's schema tables are generated from here (a test holds the page to it), and the
 * tests compare files with Postgres column by column from here.
 *
 * A column's type is one of a few logical types, each with one Parquet type and one JSON shape:
 * ids are strings (the exchange's ids are longer than any integer), times are UTC timestamps
 * (ISO 8601 with milliseconds in NDJSON), prices and chances are doubles, money is a decimal with
 * two places.
 */

export type ScalarType = 'string' | 'int' | 'double' | 'money' | 'timestamp' | 'bool';

export type ColumnType =
  | ScalarType
  | { list: ScalarType }
  /** A list of records, e.g. a combo's legs. */
  | { records: readonly ArchiveColumn[] };

export interface ArchiveColumn {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  readonly description: string;
}

export interface ArchiveDataset {
  readonly name: string;
  /** Bumped when a column is added, removed or changes meaning; carried by every manifest entry. */
  readonly schemaVersion: number;
  readonly description: string;
  /** Row order within a day's file (a rerun writes the same rows in the same order). */
  readonly order: string;
  readonly columns: readonly ArchiveColumn[];
}

const col = (name: string, type: ColumnType, description: string, nullable = false): ArchiveColumn => ({ name, type, nullable, description });

/** The columns of one side of the book top's candle (`bid_open` … `ask_close`). */
const quoteColumns = (side: 'bid' | 'ask', name: string) => [
  col(`${side}_open`, 'double', `${name} at the first point of the bucket where that side was quoted; null when it was empty throughout (a bucket without a point carries the previous close forward)`, true),
  col(`${side}_high`, 'double', `Highest ${name.toLowerCase()} in the bucket (null: that side empty throughout)`, true),
  col(`${side}_low`, 'double', `Lowest ${name.toLowerCase()} in the bucket (null: that side empty throughout)`, true),
  col(`${side}_close`, 'double', `${name} at the last point of the bucket where that side was quoted (null: that side empty throughout)`, true),
];

/**
 * A candle's values, after its series and bucket: the chance's OHLC, the trades printed on the
 * series' token, and the book top's bid and ask OHLC, as the history reader returns them
 * (shared/src/history/read.ts `Candle`) and the candles endpoint serves them. sources.ts writes
 * each from the reader's candle by name (`candleValues`).
 */
export const CANDLE_VALUE_COLUMNS = [
  col('open', 'double', 'Chance at the first point of the bucket (the previous close when the bucket had none)'),
  col('high', 'double', 'Highest chance in the bucket'),
  col('low', 'double', 'Lowest chance in the bucket'),
  col('close', 'double', "Chance at the last point of the bucket; a resolved market's last candle closes at its final price"),
  col(
    'volume',
    'double',
    "Shares printed on this token in the bucket (by the exchange's trade time); 0 without a trade, null in buckets before the token's trade data begins (never 0 there)",
    true,
  ),
  col('notional', 'double', 'Σ price × size of those trades in dollars (to 10⁻⁶); 0 without a trade, null before the trade data begins', true),
  col('trades', 'int', 'The number of those trades; 0 without a trade, null before the trade data begins', true),
  col('vwap', 'double', 'notional ÷ volume (to 10⁻⁶): the volume-weighted average price; null without a trade', true),
  ...quoteColumns('bid', 'Best bid'),
  ...quoteColumns('ask', 'Best ask'),
] as const satisfies readonly ArchiveColumn[];

const legColumns = [
  col('market_id', 'string', 'The market of the leg'),
  col('outcome_index', 'int', 'The outcome picked (0-based, in the market\'s order)'),
  col('chance_at_call', 'double', 'The chance of that outcome when the combo was made'),
  col('status', 'string', 'open, won, lost or void, as of the end of the day'),
] as const;

export const ARCHIVE_DATASETS = {
  candles: {
    name: 'candles',
    // 2: the trades (volume, notional, trades, vwap) and the book top (bid_*, ask_*) of each candle.
    schemaVersion: 2,
    description:
      "Every recorded series' candles of the day at the finest interval the service held for it when the day was written (1m for a day the service recorded live; 5m, 1h or 1d for a day it knows only from the exchange's backfill). A series is the chance of a market's first outcome; a bucket without a point carries the previous close (and the book top's closes) forward, as the candles endpoint does. Each candle also has the trades printed on its token and the best bid's and ask's candles.",
    order: 'market_id, t',
    columns: [
      col('market_id', 'string', 'The market'),
      col('outcome_index', 'int', 'The outcome the chances are of (always 0: the second outcome of a two-outcome market is 1 − this)'),
      col('token_id', 'string', "The exchange's token id of that outcome"),
      col('interval', 'string', '1m, 5m, 1h or 1d: the candle size of this row'),
      col('t', 'timestamp', 'Bucket start (UTC)'),
      ...CANDLE_VALUE_COLUMNS,
    ],
  },
  trades: {
    name: 'trades',
    schemaVersion: 1,
    description: "Every trade the exchange printed that day, one row per token matched (a match between a Yes and a No order is two rows), by the exchange's timestamp.",
    order: 'at, market_id, outcome_index',
    columns: [
      col('market_id', 'string', 'The market'),
      col('outcome_index', 'int', 'The outcome whose token traded'),
      col('token_id', 'string', "The exchange's token id"),
      col('at', 'timestamp', "When it traded (the exchange's timestamp, UTC, milliseconds)"),
      col('price', 'double', 'Price of one share, 0 to 1'),
      col('size', 'double', 'Shares traded'),
      col('side', 'string', "BUY or SELL: the taker's side on this token"),
    ],
  },
  markets: {
    name: 'markets',
    schemaVersion: 1,
    description:
      'The catalog as it stood at the end of the day: every market that had not been resolved before the day began, with its outcomes and, when it was resolved by the end of the day, its resolution and closing chances.',
    order: 'market_id',
    columns: [
      col('market_id', 'string', 'The market'),
      col('event_id', 'string', "The exchange's event id"),
      col('event', 'string', 'The event slug (`/api/v1/markets/{eventSlug}`)'),
      col('question', 'string', 'The market question'),
      col('outcomes', { list: 'string' }, 'Outcome names, in order'),
      col('token_ids', { list: 'string' }, "The exchange's token id of each outcome, in order"),
      col('status', 'string', 'open, closed, resolved or void, as of the end of the day'),
      col('resolved_outcome', 'string', 'The winning outcome\'s name, when resolved with a winner by the end of the day', true),
      col('resolved_at', 'timestamp', 'When it was resolved (or voided), if by the end of the day', true),
      col('closing_chance', { list: 'double' }, 'Per outcome, the last chance shown before it closed or resolved (null for one never shown); null while open', true),
    ],
  },
  calls: {
    name: 'calls',
    schemaVersion: 1,
    description: 'Every public call made or settled that day, with its status as of the end of the day.',
    order: 'made_at, call_id',
    columns: [
      col('call_id', 'string', "The call's public id"),
      col('handle', 'string', "The caller's handle"),
      col('market_id', 'string', 'The market called'),
      col('outcome_index', 'int', 'The outcome picked'),
      col('chance_at_call', 'double', 'Its chance when the call was made'),
      col('thesis', 'string', 'Why, in the caller\'s words (may be empty)'),
      col('copied_from', 'string', 'The call it copies or fades, if any', true),
      col('is_fade', 'bool', 'True when it picks against the call it copies'),
      col('status', 'string', 'open, won, lost or void, as of the end of the day'),
      col('profit_on_10', 'money', 'Profit on a notional 10 once settled (null while open)', true),
      col('xp_awarded', 'int', 'XP the call earned (0 while open)'),
      col('made_at', 'timestamp', 'When it was made'),
      col('settled_at', 'timestamp', 'When it settled, if by the end of the day', true),
    ],
  },
  combos: {
    name: 'combos',
    schemaVersion: 1,
    description: 'Every public combo made or settled that day, with its legs and its status as of the end of the day.',
    order: 'made_at, combo_id',
    columns: [
      col('combo_id', 'string', "The combo's public id"),
      col('handle', 'string', "The caller's handle"),
      col('chance', 'double', 'Product of the legs\' chances when it was made'),
      col('wins_on_10', 'money', 'What 10 wins if every leg comes in'),
      col('status', 'string', 'open, won, lost or void, as of the end of the day'),
      col('xp_awarded', 'int', 'XP the combo earned (0 while open)'),
      col('made_at', 'timestamp', 'When it was made'),
      col('settled_at', 'timestamp', 'When it settled, if by the end of the day', true),
      col('legs', { records: legColumns }, 'The picks, in leg order'),
    ],
  },
} as const satisfies Record<string, ArchiveDataset>;

export type DatasetName = keyof typeof ARCHIVE_DATASETS;
export const DATASET_NAMES = Object.keys(ARCHIVE_DATASETS) as DatasetName[];

export const ARCHIVE_FORMATS = ['parquet', 'ndjson.gz'] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

/** A day as the archive names it: `YYYY-MM-DD` (UTC). */
export type ArchiveDay = string;

export const DAY_PATTERN = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** Whether `day` is a real date written YYYY-MM-DD (`2026-02-30` is not). */
export function isRealDay(day: string): boolean {
  if (!DAY_PATTERN.test(day)) return false;
  const ms = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === day;
}

/** Unix seconds of the day's start (00:00 UTC); throws on a day that is not a real date. */
export function dayStart(day: ArchiveDay): number {
  if (!isRealDay(day)) throw new Error(`not a day: ${day}`);
  return Date.parse(`${day}T00:00:00Z`) / 1000;
}

/** The day (UTC) holding Unix second t. */
export const dayOfSeconds = (t: number): ArchiveDay => new Date(Math.floor(t / 86_400) * 86_400_000).toISOString().slice(0, 10);

export const nextDay = (day: ArchiveDay): ArchiveDay => dayOfSeconds(dayStart(day) + 86_400);

/** The file of a (day, dataset, format) under the archive directory, and its path under `/api/v1/exports`. */
export const archiveFileName = (dataset: string, format: ArchiveFormat): string => `${dataset}.${format}`;
export const archiveUrl = (day: ArchiveDay, dataset: string, format: ArchiveFormat): string => `/api/v1/exports/${day}/${archiveFileName(dataset, format)}`;

/** DuckDB's type of a column (the Parquet writer's input). */
export function duckdbType(type: ColumnType): string {
  if (typeof type === 'object') {
    if ('list' in type) return `${duckdbType(type.list)}[]`;
    return `STRUCT(${type.records.map((c) => `"${c.name}" ${duckdbType(c.type)}`).join(', ')})[]`;
  }
  switch (type) {
    case 'string':
      return 'VARCHAR';
    case 'int':
      return 'INTEGER';
    case 'double':
      return 'DOUBLE';
    case 'money':
      return 'DECIMAL(18,2)';
    case 'timestamp':
      return 'TIMESTAMPTZ';
    case 'bool':
      return 'BOOLEAN';
  }
}

/** How a type reads in docs/archive.md. */
export function typeLabel(type: ColumnType): string {
  if (typeof type === 'object') {
    if ('list' in type) return `list of ${typeLabel(type.list)}`;
    return `list of {${type.records.map((c) => `${c.name}: ${typeLabel(c.type)}`).join(', ')}}`;
  }
  return { string: 'string', int: 'int32', double: 'double', money: 'decimal(18,2)', timestamp: 'timestamp (UTC, ms)', bool: 'boolean' }[type];
}

/** docs/archive.md's schema section, generated from the definitions above. */
export function datasetsMarkdown(): string {
  const parts: string[] = [];
  for (const d of Object.values(ARCHIVE_DATASETS) as ArchiveDataset[]) {
    parts.push(`### \`${d.name}\` (schema version ${d.schemaVersion})`, '', d.description, '', `Rows ordered by ${d.order}.`, '');
    parts.push('| column | type | null | meaning |', '|---|---|---|---|');
    for (const c of d.columns) parts.push(`| \`${c.name}\` | ${typeLabel(c.type)} | ${c.nullable ? 'yes' : 'no'} | ${c.description.replace(/\|/g, '\\|')} |`);
    parts.push('');
  }
  return parts.join('\n').trimEnd();
}

const SECTION_START = /<!-- datasets:start[^>]*-->/;
const SECTION_END = '<!-- datasets:end -->';

/** docs/archive.md with its generated section (between the datasets markers) made from the definitions. */
export function withDatasetsSection(doc: string): string {
  const start = SECTION_START.exec(doc);
  const end = doc.indexOf(SECTION_END);
  if (start === null || end < start.index) throw new Error('docs/archive.md has no datasets section markers');
  const head = doc.slice(0, start.index + start[0].length);
  return `${head}\n\n${datasetsMarkdown()}\n\n${doc.slice(end)}`;
}
