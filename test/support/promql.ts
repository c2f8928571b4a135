import { exportedMetricNames, metricTable, type ServiceName } from '@pm/shared/metrics';

/**
 * What a PromQL expression reads, to check dashboards and alert rules against what the services
 * export (shared/src/metrics.ts): a name nobody exports draws an empty panel or an alert that never fires.
 */

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'offset', 'bool', 'inf', 'nan']);

/** Series Prometheus makes itself rather than scraping: target health and alert state. */
export const PROMETHEUS_SERIES = new Set(['up', 'ALERTS']);

/** Metric names a PromQL expression reads: identifiers that are not functions, keywords, labels or durations. */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '') // grouping labels
    .replace(/\[[^\]]*\]/g, ''); // range durations
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = stripped.slice((m.index ?? 0) + m[0].length).trimStart();
    if (after.startsWith('(') || PROMQL_WORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

const SERVICES: ServiceName[] = ['api', 'ingestor', 'worker'];
const exported = new Set(SERVICES.flatMap(exportedMetricNames));
const histograms = new Set(SERVICES.flatMap((s) => Object.values(metricTable[s]).filter((d) => d.type === 'histogram').map((d) => d.name)));

/** Whether a name read by a query exists: exported by a service (a histogram's `_bucket/_sum/_count` too) or made by Prometheus. */
export function isKnownSeries(name: string): boolean {
  if (PROMETHEUS_SERIES.has(name)) return true;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  return exported.has(m && histograms.has(m[1]!) ? m[1]! : name);
}
