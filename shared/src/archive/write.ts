import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { sql, type Db } from '../db/connection.js';
import { ARCHIVE_DATASETS, ARCHIVE_FORMATS, archiveFileName, dayStart, duckdbType, type ArchiveColumn, type ArchiveDay, type ArchiveFormat, type ColumnType, type DatasetName } from './datasets.js';
import { datasetRows, hasTradeTape, type ArchiveRow } from './sources.js';
import { manifestOf, putManifest } from './manifest.js';

/**
 * Writing one (day, dataset) of the archive, exactly once:
 *
 * - one writer at a time per (day, dataset): a Postgres advisory lock held by the transaction that
 *   ends by listing the files in the manifest (a second worker, or the CLI, waits, then finds it done);
 * - rows streamed from Postgres a batch at a time into a gzipped NDJSON file written aside (in
 *   `<dir>/.tmp/`, on the same file system), then DuckDB turns that file into the Parquet file,
 *   reading it as a stream with the column types of datasets.ts — nothing holds the day in memory;
 * - both files fsynced, renamed into `<dir>/<day>/`, the directory fsynced, and only then the
 *   manifest rows written and committed; a kill at any point leaves either the previous whole file
 *   or none, and at most a leftover in `.tmp/` that the next writer of the day removes;
 * - a rerun compares the digest of its rows with the manifest's: the same rows leave the files
 *   (and their ETags) as they are.
 *
 * Why DuckDB: its Parquet writer is well kept, streams (bounded memory via `memory_limit`), types
 * every column (zstd, UTC timestamps, decimals, lists and structs), and reads NDJSON itself, so the
 * Parquet file is made from exactly the rows of the NDJSON file; its binary comes as a registry
 * package for each platform, with no install script.
 */

export interface ExportDayOptions {
  db: Db;
  /** The archive directory (ARCHIVE_DIR). */
  dir: string;
  day: ArchiveDay;
  dataset: DatasetName;
  /** Write even when the manifest lists the day already (the files change only if the rows did). */
  force?: boolean;
  /** Called after each batch of rows is written aside (tests stop a process there). */
  onBatch?: (rowsSoFar: number) => Promise<void>;
}

export type ExportOutcome =
  /** Files written (first time, or the rows changed). */
  | 'written'
  /** A rerun: the rows are the ones listed; nothing changed. */
  | 'unchanged'
  /** Listed already (and not forced). */
  | 'complete'
  /** The dataset does not exist in this database (trades before the tape). */
  | 'absent';

export interface ExportDayResult {
  day: ArchiveDay;
  dataset: DatasetName;
  outcome: ExportOutcome;
  rows: number;
  files: Array<{ format: ArchiveFormat; bytes: number; sha256: string }>;
}

const TMP_DIR = '.tmp';
/** What DuckDB may hold while converting: the worker's budget is ~300 MB all told. */
const DUCKDB_MEMORY = '96MB';

/** Where a day's files live. */
export const dayDir = (dir: string, day: ArchiveDay) => path.join(dir, day);
export const archivePath = (dir: string, day: ArchiveDay, dataset: string, format: ArchiveFormat) => path.join(dayDir(dir, day), archiveFileName(dataset, format));

export async function exportDay(opts: ExportDayOptions): Promise<ExportDayResult> {
  const { db, dir, day, dataset } = opts;
  const def = ARCHIVE_DATASETS[dataset];
  const start = dayStart(day);
  const base: ExportDayResult = { day, dataset, outcome: 'absent', rows: 0, files: [] };
  if (dataset === 'trades' && !(await hasTradeTape(db))) return base;

  return db.tx(async (tx) => {
    // inputs: day, dataset. outputs: none; waits for another writer of the same (day, dataset).
    await tx.query(sql`select pg_advisory_xact_lock(hashtext('archive'), hashtext(${`${day}/${dataset}`}))`);
    const listed = await manifestOf(tx, day, dataset);
    const whole = listed.length === ARCHIVE_FORMATS.length;
    if (whole && opts.force !== true) return { ...base, outcome: 'complete' as const, rows: listed[0]?.rows ?? 0, files: listed.map(fileOf) };

    const tmp = path.join(dir, TMP_DIR);
    await mkdir(tmp, { recursive: true });
    await mkdir(dayDir(dir, day), { recursive: true });
    // Leftovers of a writer of this (day, dataset) that was killed: we hold its lock, so none is running.
    const prefix = `${day}.${dataset}.`;
    for (const name of await readdir(tmp)) if (name.startsWith(prefix)) await rm(path.join(tmp, name), { force: true });

    const token = `${prefix}${process.pid}-${randomBytes(4).toString('hex')}`;
    const aside = { 'ndjson.gz': path.join(tmp, `${token}.ndjson.gz`), parquet: path.join(tmp, `${token}.parquet`) } satisfies Record<ArchiveFormat, string>;
    try {
      const { rows, contentSha256 } = await writeNdjson(datasetRows(db, dataset, start), def.columns, aside['ndjson.gz'], opts.onBatch);
      if (whole && listed.every((e) => e.content_sha256 === contentSha256)) {
        return { ...base, outcome: 'unchanged' as const, rows, files: listed.map(fileOf) };
      }
      await writeParquet(aside['ndjson.gz'], def.columns, aside.parquet);
      const files: ExportDayResult['files'] = [];
      for (const format of ARCHIVE_FORMATS) {
        await fsyncFile(aside[format]);
        files.push({ format, ...(await digestFile(aside[format])) });
      }
      for (const format of ARCHIVE_FORMATS) await rename(aside[format], archivePath(dir, day, dataset, format));
      await fsyncFile(dayDir(dir, day));
      await putManifest(
        tx,
        files.map((f) => ({ day, dataset, format: f.format, rows, bytes: f.bytes, sha256: f.sha256, content_sha256: contentSha256, schema_version: def.schemaVersion })),
      );
      return { ...base, outcome: 'written' as const, rows, files };
    } finally {
      for (const file of Object.values(aside)) await rm(file, { force: true });
    }
  });
}

const fileOf = (e: { format: ArchiveFormat; bytes: number; sha256: string }) => ({ format: e.format, bytes: e.bytes, sha256: e.sha256 });

/** A value of a column as the NDJSON row carries it (and DuckDB reads it back with the column's type). */
function jsonValue(type: ColumnType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof type === 'object') {
    const list = v as unknown[];
    if ('list' in type) return list.map((x) => jsonValue(type.list, x));
    return list.map((x) => jsonRow(type.records, x as ArchiveRow));
  }
  switch (type) {
    case 'timestamp':
      return new Date(v as number).toISOString();
    case 'money':
      return Math.round((v as number) * 100) / 100;
    case 'int':
    case 'double':
      return Number(v);
    default:
      return v;
  }
}

/** A row in the dataset's column order, every column present (null when empty). */
export function jsonRow(columns: readonly ArchiveColumn[], row: ArchiveRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c.name] = jsonValue(c.type, row[c.name]);
  return out;
}

/** Rows → gzipped NDJSON at `file`; returns the row count and the digest of the uncompressed lines. */
async function writeNdjson(batches: AsyncIterable<ArchiveRow[]>, columns: readonly ArchiveColumn[], file: string, onBatch?: (n: number) => Promise<void>): Promise<{ rows: number; contentSha256: string }> {
  const hash = createHash('sha256');
  const gzip = createGzip({ level: 6 });
  const out = createWriteStream(file);
  gzip.pipe(out);
  const closed = once(out, 'close');
  let rows = 0;
  try {
    for await (const batch of batches) {
      let text = '';
      for (const row of batch) text += JSON.stringify(jsonRow(columns, row)) + '\n';
      rows += batch.length;
      // Encoded once, for the digest and the file.
      const bytes = Buffer.from(text);
      hash.update(bytes);
      if (!gzip.write(bytes)) await once(gzip, 'drain');
      await onBatch?.(rows);
    }
    gzip.end();
    await closed;
  } catch (err) {
    gzip.destroy();
    out.destroy();
    throw err;
  }
  return { rows, contentSha256: hash.digest('hex') };
}

const quoted = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The NDJSON file → a Parquet file (zstd) with the dataset's column types, by DuckDB, streamed. */
async function writeParquet(ndjson: string, columns: readonly ArchiveColumn[], file: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '2', memory_limit: DUCKDB_MEMORY, preserve_insertion_order: 'true' });
  try {
    const connection = await instance.connect();
    try {
      const types = columns.map((c) => `${quoted(c.name)}: ${quoted(duckdbType(c.type))}`).join(', ');
      const select = columns.map((c) => `"${c.name}"`).join(', ');
      await connection.run(
        `copy (select ${select} from read_json(${quoted(ndjson)}, format = 'newline_delimited', compression = 'gzip', columns = {${types}})) ` +
          `to ${quoted(file)} (format parquet, compression zstd)`,
      );
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

async function fsyncFile(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function digestFile(file: string): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return { bytes: (await stat(file)).size, sha256: hash.digest('hex') };
}

/** The rows a dataset's files are written from (a bench reads them alone, as its baseline). */
export { datasetRows } from './sources.js';
