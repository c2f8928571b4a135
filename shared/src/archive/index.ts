/** The archive of closed days as files (`@pm/shared/archive`; docs/archive.md). */
export * from './datasets.js';
export { manifestEntry, manifestOf, manifestPage, manifestTotals, newestCompleteDay, incompleteDays, type ManifestEntry, type ManifestPageQuery } from './manifest.js';
export { presentDatasets, hasTradeTape } from './sources.js';
export { exportDay, archivePath, dayDir, type ExportDayOptions, type ExportDayResult, type ExportOutcome } from './write.js';
