import { sql, type Queryable } from '../db/connection.js';
import type { ArchiveDay, ArchiveFormat } from './datasets.js';

/** Anything with `query`: a pool, a transaction, the API's read pool. */
type Reads = Pick<Queryable, 'query'>;

/** One row of the archive's manifest (`archive_files`, migration 0017): one file as written. */
export interface ManifestEntry {
  day: ArchiveDay;
  dataset: string;
  format: ArchiveFormat;
  rows: number;
  bytes: number;
  sha256: string;
  content_sha256: string;
  schema_version: number;
  /** Unix ms. */
  made_at: number;
}

const COLUMNS = sql`to_char(day, 'YYYY-MM-DD') as day, dataset, format, rows, bytes, sha256, content_sha256, schema_version, floor(extract(epoch from made_at) * 1000)::float8 as made_at`;

/** inputs: a day and dataset. outputs: its entries (one per format written). */
export async function manifestOf(db: Reads, day: ArchiveDay, dataset: string): Promise<ManifestEntry[]> {
  return db.query(sql`select ${COLUMNS} from archive_files where day = ${day}::date and dataset = ${dataset} order by format`);
}

/** inputs: a file of a day. outputs: its entry, or null when it was not written. */
export async function manifestEntry(db: Reads, day: ArchiveDay, dataset: string, format: ArchiveFormat): Promise<ManifestEntry | null> {
  const rows: ManifestEntry[] = await db.query(sql`select ${COLUMNS} from archive_files where day = ${day}::date and dataset = ${dataset} and format = ${format}`);
  return rows[0] ?? null;
}

/** inputs: the entries of one (day, dataset), all formats. outputs: none; replaces what was listed. */
export async function putManifest(tx: Queryable, entries: ReadonlyArray<Omit<ManifestEntry, 'made_at'>>): Promise<void> {
  for (const e of entries) {
    await tx.query(sql`
      insert into archive_files (day, dataset, format, rows, bytes, sha256, content_sha256, schema_version, made_at)
      values (${e.day}::date, ${e.dataset}, ${e.format}, ${e.rows}, ${e.bytes}, ${e.sha256}, ${e.content_sha256}, ${e.schema_version}, now())
      on conflict (day, dataset, format) do update set rows = excluded.rows, bytes = excluded.bytes, sha256 = excluded.sha256,
        content_sha256 = excluded.content_sha256, schema_version = excluded.schema_version, made_at = excluded.made_at
    `);
  }
}

export interface ManifestPageQuery {
  dataset?: string | undefined;
  start?: ArchiveDay | undefined;
  end?: ArchiveDay | undefined;
  /** The last entry of the previous page: the page starts after it (newest day first, then dataset, then format). */
  after?: { day: ArchiveDay; dataset: string; format: string } | undefined;
  limit: number;
}

/**
 * A page of the manifest, newest day first, then dataset and format (index archive_files_newest).
 * inputs: filters, keyset position, limit. outputs: up to `limit` entries.
 */
export async function manifestPage(db: Reads, q: ManifestPageQuery): Promise<ManifestEntry[]> {
  const a = q.after;
  return db.query(sql`
    select ${COLUMNS} from archive_files
    where (${q.dataset ?? null}::text is null or dataset = ${q.dataset ?? null}::text)
      and (${q.start ?? null}::date is null or day >= ${q.start ?? null}::date)
      and (${q.end ?? null}::date is null or day <= ${q.end ?? null}::date)
      and (${a?.day ?? null}::date is null
           or day < ${a?.day ?? null}::date
           or (day = ${a?.day ?? null}::date and (dataset, format) > (${a?.dataset ?? ''}::text, ${a?.format ?? ''}::text)))
    order by day desc, dataset, format
    limit ${q.limit}::int
  `);
}

/** What the metrics show: per dataset and format, days, rows and bytes; and each day's datasets. */
export async function manifestTotals(db: Reads): Promise<Array<{ dataset: string; format: string; days: number; rows: number; bytes: number }>> {
  return db.query(sql`
    select dataset, format, count(*)::int as days, coalesce(sum(rows), 0)::float8 as rows, coalesce(sum(bytes), 0)::float8 as bytes
    from archive_files group by dataset, format order by dataset, format
  `);
}

/**
 * The newest day every one of `datasets` is written for in every format (null: none).
 * inputs: the datasets a day has. outputs: that day.
 */
export async function newestCompleteDay(db: Reads, datasets: readonly string[], formats: number): Promise<ArchiveDay | null> {
  const rows: Array<{ day: string | null }> = await db.query(sql`
    select to_char(max(day), 'YYYY-MM-DD') as day from (
      select day from archive_files where dataset = any(${[...datasets]}::text[])
      group by day having count(*) = ${datasets.length * formats}::int
    ) d
  `);
  return rows[0]?.day ?? null;
}

/** Days from `from` to `to` (inclusive) of which some of `datasets` is not written in every format. */
export async function incompleteDays(db: Reads, from: ArchiveDay, to: ArchiveDay, datasets: readonly string[], formats: number): Promise<Array<{ day: ArchiveDay; missing: string[] }>> {
  return db.query(sql`
    select to_char(d, 'YYYY-MM-DD') as day, array_agg(ds order by ds) as missing
    from generate_series(${from}::date, ${to}::date, interval '1 day') d
    cross join unnest(${[...datasets]}::text[]) ds
    where (select count(*) from archive_files f where f.day = d::date and f.dataset = ds) < ${formats}::int
    group by d order by d
  `);
}
