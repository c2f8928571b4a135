/**
 * npm run replay -- <folder> [--speed N]
 *
 * Runs the whole stack (Postgres, Redis, simulator, ingestor, worker, API) on a recorded scenario:
 * a thin wrapper over the run line, `npm start -- --scenario <folder> --speed N`, that first checks
 * the folder is a scenario (PROTOCOL.md §5: catalog.json, feed.jsonl, optional sports.json,
 * history/ and catalog-updates.jsonl) so a wrong path is one clear line, not a crashing simulator.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkScenarioFolder } from './lib/scenario-check.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function fail(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

let parsed;
try {
  parsed = parseArgs({ options: { speed: { type: 'string' } }, allowPositionals: true });
} catch (err) {
  fail(`replay: ${err instanceof Error ? err.message : String(err)}`);
}
const { values, positionals } = parsed;
if (positionals.length !== 1) fail('replay: give exactly one scenario folder (usage: npm run replay -- <folder> [--speed N])');
const speed = values.speed ?? '1';
if (!(Number(speed) > 0)) fail(`replay: --speed must be a positive number, got "${speed}"`);
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
