import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/**
 * The command line of every script: node:util parseArgs (strict) plus the conventions they share.
 * - `--help` / `-h` prints the usage on stdout and exits 0;
 * - an unknown option, a missing value or a stray argument prints what was wrong, then the usage,
 *   on stderr and exits 2 (a usage error; 1 stays "the command ran and failed");
 * - JSON output uses the API's snake_case keys (`toSnakeCase`).
 */

/** Exit code of a usage error (as POSIX utilities and most CLIs use it). */
export const USAGE_EXIT = 2;

export interface CliSpec<O extends ParseArgsOptionsConfig> {
  /** The script's name, which starts every message: `records`, `records call`. */
  command: string;
  /** The full usage text printed by --help (and after a usage error). */
  usage: string;
  options: O;
  allowPositionals?: boolean;
  /** The arguments; default `process.argv.slice(2)`. */
  args?: string[];
}

/** Prints `message` and the usage on stderr and exits with USAGE_EXIT. */
export function usageError(spec: { command: string; usage: string }, message: string): never {
  process.stderr.write(`${spec.command}: ${message}\n\n${spec.usage.trimEnd()}\n`);
  process.exit(USAGE_EXIT);
}

/** parseArgs's messages, said in the script's own terms (`--frobnicate` rather than a hint about `--`). */
function describeParseError(err: Error & { code?: unknown }): string {
  const unknown = /Unknown option '([^']+)'/.exec(err.message);
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) return `unknown option ${unknown[1]}`;
  const positional = /Unexpected argument '([^']+)'/.exec(err.message);
  if (err.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' && positional) return `unexpected argument ${JSON.stringify(positional[1])}`;
  return err.message;
}

/** Parses the arguments; --help and usage errors end the process here. */
export function parseCli<O extends ParseArgsOptionsConfig>(spec: CliSpec<O>) {
  const args = spec.args ?? process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${spec.usage.trimEnd()}\n`);
    process.exit(0);
  }
  try {
    return parseArgs({ args, options: spec.options, allowPositionals: spec.allowPositionals ?? false, strict: true });
  } catch (err) {
    if (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) usageError(spec, describeParseError(err));
    throw err;
  }
}

/** A positive number option (`--minutes 2.5`), or `fallback` when not given; anything else is a usage error. */
export function positiveOption(
  spec: { command: string; usage: string },
  name: string,
  value: string | undefined,
  fallback: number,
  kind: 'integer' | 'number',
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || (kind === 'integer' && !Number.isInteger(n))) {
    usageError(spec, `--${name} must be a positive ${kind}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** `chanceAtCall` → `chance_at_call`, `winsOn10` → `wins_on_10`, `profit7d` → `profit_7d`; snake_case stays. */
export const snakeKey = (key: string): string =>
  key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .replace(/([a-zA-Z])([0-9])/g, '$1_$2')
    .toLowerCase();

/** The value with every object key in snake_case (`settledMarkets` → `settled_markets`), as the API spells fields. */
export function toSnakeCase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toSnakeCase);
  if (value instanceof Date) return value.toISOString();
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snakeKey(k), toSnakeCase(v)]));
}

/** Prints a result as the scripts do: pretty JSON in snake_case on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(toSnakeCase(value), null, 2)}\n`);
}
