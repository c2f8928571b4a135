import { archiveUrl, manifestEntry, manifestPage, type ArchiveFormat, type ManifestEntry, type ManifestPageQuery } from '@pm/shared/archive';
import type { ExportEntry } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { ReadQueryable } from './read-pool.js';

/**
 * The archive's reads (docs/archive.md): the manifest (`archive_files`, written by the worker after
 * each file is whole and in place) on the read pool, for the list and for each download. Read-only.
 */

const UNAVAILABLE = 'the archive is unavailable right now; please try again shortly';

/** A manifest entry as the list shows it. */
export function exportEntry(e: ManifestEntry): ExportEntry {
  return {
    date: e.day,
    dataset: e.dataset as ExportEntry['dataset'],
    format: e.format,
    url: archiveUrl(e.day, e.dataset, e.format),
    rows: e.rows,
    bytes: e.bytes,
    sha256: e.sha256,
    schema_version: e.schema_version,
    made_at: new Date(e.made_at).toISOString(),
  };
}

async function guarded<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    throw new ApiError('unavailable', UNAVAILABLE, { cause: err });
  }
}

/** A page of the manifest, newest day first (`limit` + 1 read, to know whether another page follows). */
export function readExportPage(db: ReadQueryable, q: ManifestPageQuery): Promise<ManifestEntry[]> {
  return guarded(() => manifestPage(db, q));
}

/** The entry of one file; null when the day's file was not written (yet). */
export function readExportFile(db: ReadQueryable, day: string, dataset: string, format: ArchiveFormat): Promise<ManifestEntry | null> {
  return guarded(() => manifestEntry(db, day, dataset, format));
}
