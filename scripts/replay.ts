/**
 * npm run replay -- <folder> [--speed N]
 *
 * Runs the whole stack (Postgres, Redis, simulator, ingestor, worker, API) on a recorded scenario:
 * a thin wrapper over the run line, `npm start -- --scenario <folder> --speed N`, that first checks
 * the folder is a scenario (docs/protocol.md §5: catalog.json, feed.jsonl, optional sports.json,
 * history/ and catalog-updates.jsonl) so a wrong path is one clear line, not a crashing simulator.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCli, positiveOption, usageError } from './lib/cli.js';
import { checkScenarioFolder } from './lib/scenario-check.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const USAGE = `usage: npm run replay -- <folder> [--speed N]

Runs the whole stack on a recorded scenario (the simulator replays <folder>, e.g. one written by
npm run record): the same as npm start -- --scenario <folder> --speed N.

options:
  --speed N   replay speed, default 1 (2 = twice as fast)
  -h, --help  this text`;
const SPEC = { command: 'replay', usage: USAGE } as const;

function fail(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

const { values, positionals } = parseCli({ ...SPEC, options: { speed: { type: 'string' } }, allowPositionals: true });
if (positionals.length !== 1) usageError(SPEC, `give exactly one scenario folder (got ${positionals.length})`);
const speed = String(positiveOption(SPEC, 'speed', values.speed, 1, 'number'));
const folder = path.resolve(positionals[0] as string);
const problem = checkScenarioFolder(folder);
if (problem) fail(`replay: ${problem}`);

const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'scripts/start.ts'), '--scenario', folder, '--speed', speed], {
  cwd: root,
  stdio: 'inherit',
});
// Ctrl-C reaches the run line through the shared terminal; a plain SIGTERM is passed on.
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
