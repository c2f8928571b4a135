import type { ParseArgsOptionsConfig } from 'node:util';
import { parseCli } from '../../scripts/lib/cli.js';

/**
 * A bench's command line, with the scripts' conventions (scripts/lib/cli.ts): `--help` prints the
 * usage and exits 0 before anything starts; an unknown option is a usage error (exit 2) naming it.
 * Most benches take their settings from BENCH_* environment variables, which the usage lists.
 */
export function benchCli<O extends ParseArgsOptionsConfig>(command: string, usage: string, options = {} as O) {
  return parseCli({ command, usage, options });
}
