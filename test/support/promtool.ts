import { spawnSync, type SpawnSyncReturns } from 'node:child_process';

/**
 * promtool (Debian's `prometheus` package) checks /metrics, the dashboard's queries and the alert
 * rules. Where it is installed those checks always run; under CI (.ci/run installs it) its absence
 * fails the test; on a machine without it the test is skipped with a warning saying so.
 */
export const HAS_PROMTOOL = spawnSync('promtool', ['--version']).error === undefined;

/** Runs `promtool args…`, or skips (locally) or fails (under CI) the calling test when it is missing. */
export function promtool(ctx: { skip(note?: string): void }, args: string[], input?: string): SpawnSyncReturns<string> {
  if (!HAS_PROMTOOL) {
    const missing = `promtool is not installed (Debian package "prometheus"): promtool ${args[0] ?? ''} ${args[1] ?? ''} was NOT run`;
    if (process.env.CI) throw new Error(`${missing}; .ci/run should have installed it`);
    console.warn(`\n*** ${missing} ***\n`);
    ctx.skip(missing);
  }
  return spawnSync('promtool', args, { encoding: 'utf8', ...(input === undefined ? {} : { input }) });
}
