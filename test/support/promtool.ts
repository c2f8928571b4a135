import { spawnSync, type SpawnSyncReturns } from 'node:child_process';

/**
 * promtool (Debian's `prometheus` package) checks /metrics, the dashboard's queries and the alert
 * rules. It is a test dependency like Postgres and Redis (.ci/run installs it; docs/operations.md "Tests"): where
 * it is missing the calling test fails saying so, on every machine alike, rather than passing
 * without having checked anything.
 */
export function promtool(args: string[], input?: string): SpawnSyncReturns<string> {
  const run = spawnSync('promtool', args, { encoding: 'utf8', ...(input === undefined ? {} : { input }) });
  if (run.error !== undefined) {
    throw new Error(`promtool could not run (install the Debian package "prometheus"): promtool ${args.slice(0, 2).join(' ')}: ${run.error.message}`);
  }
  return run;
}
