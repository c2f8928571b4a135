/**
 * The archive of closed days as files (`@pm/shared/archive`; docs/archive.md): the datasets and the
 * manifest. The writer, which loads DuckDB, is `@pm/shared/archive/write` (the API never loads it).
 */
export * from './datasets.js';
export { manifestEntry, manifestOf, manifestPage, manifestTotals, newestCompleteDay, incompleteDays, type ManifestEntry, type ManifestPageQuery } from './manifest.js';
export { presentDatasets, hasTradeTape } from './sources.js';
