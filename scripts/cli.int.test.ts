import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { insertMarkets, setChance } from '../services/worker/src/settlement/test-fixture.js';

/**
 * The scripts as a person types them (scripts/lib/cli.ts): `--help` prints the usage and exits 0,
 * an unknown option or a missing one is a usage error (exit 2) that names it, a refusal names
 * what was refused, and JSON output uses the API's snake_case.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Every script and every bench: a new one is held to the same rules without being listed here. */
const SCRIPTS = [
  ...readdirSync(path.join(root, 'scripts')).filter((f) => f.endsWith('.ts') && !f.includes('.test.')),
  ...readdirSync(path.join(root, 'test/bench')).filter((f) => f.endsWith('.bench.ts')).map((f) => `../test/bench/${f}`),
];
/** The name a script's messages start with: `records`, `bench:api`. */
const commandOf = (script: string) => (script.endsWith('.bench.ts') ? `bench:${path.basename(script, '.bench.ts')}` : script.replace(/\.ts$/, ''));

let tdb: TestDatabase;
let tr: TestRedis;
/** The archive's directory of the scripts this file runs (never the repository's .data). */
const archiveDir = mkdtempSync(path.join(tmpdir(), 'cli-archive-'));

beforeAll(async () => {
  [tdb, tr] = await Promise.all([createTestDatabase('cli'), createTestRedis('cli')]);
  await insertMarkets(tdb.db, ['cli1']);
});

afterAll(async () => {
  await tr?.cleanup();
  await tdb?.drop();
  rmSync(archiveDir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `scripts/<script>` with `args` against this file's database and Redis prefix. */
function run(script: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('scripts', script), ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: tdb.url, REDIS_URL: tr.url, REDIS_PREFIX: tr.prefix, LOG_LEVEL: 'silent', CROWD: '0', ARCHIVE_DIR: archiveDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

// Each case starts several scripts under tsx (about a second each on an idle machine, far more on a
// loaded one), so the cases get more time than the int tier's default.
const SPAWNS = { timeout: 120_000 };

describe('every script', SPAWNS, () => {
  it('prints its usage for --help and exits 0', async () => {
    expect(SCRIPTS).toEqual(expect.arrayContaining(['records.ts', 'rebuild.ts', 'record.ts', 'replay.ts', 'crowd.ts', 'start.ts', 'openapi.ts', '../test/bench/api.bench.ts', '../test/bench/settle.bench.ts']));
    const runs = await Promise.all(SCRIPTS.map(async (script) => [script, await run(script, ['--help'])] as const));
    for (const [script, r] of runs) {
      expect({ script, code: r.code, stderr: r.stderr }).toEqual({ script, code: 0, stderr: '' });
      expect(r.stdout, script).toMatch(/^usage: npm (run [a-z:]+|start)/);
      expect(r.stdout, script).toContain('--help');
    }
  });

  it('refuses an unknown option with exit 2, naming it, then the usage', async () => {
    const runs = await Promise.all(SCRIPTS.map(async (script) => [script, await run(script, ['--frobnicate'])] as const));
    for (const [script, r] of runs) {
      const name = commandOf(script);
      expect({ script, code: r.code, first: r.stderr.split('\n')[0] }).toEqual({ script, code: 2, first: `${name}: unknown option --frobnicate` });
      expect(r.stderr, script).toContain('usage: npm');
    }
  });
});

describe('npm run records', SPAWNS, () => {
  it('says which command and option was wrong', async () => {
    const [none, unknownCommand, wrongOption, missing, help] = await Promise.all([
      run('records.ts', []),
      run('records.ts', ['bet', '--user', 'tess']),
      run('records.ts', ['user', '--handle', 'tess', '--name', 'Tess', '--market', 'cli1']),
      run('records.ts', ['call', '--user', 'tess', '--market', 'cli1']),
      run('records.ts', ['call', '--help']),
    ]);
    expect([none.code, none.stderr.split('\n')[0]]).toEqual([2, 'records: a command is required']);
    expect([unknownCommand.code, unknownCommand.stderr.split('\n')[0]]).toEqual([2, 'records: unknown command "bet"']);
    expect([wrongOption.code, wrongOption.stderr.split('\n')[0]]).toEqual([2, 'records user: unknown option --market']);
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([2, 'records call: --outcome is required']);
    expect([help.code, help.stdout.split('\n')[0]]).toEqual([0, 'usage: npm run records -- <command> [options]']);
  });

  it('records in snake_case JSON, and names an unknown market as the market, not its outcome', async () => {
    const user = await run('records.ts', ['user', '--handle', 'tess', '--name', 'Tess Ward', '--interests', 'Football: EPL']);
    expect(user.code, user.stderr).toBe(0);
    expect(JSON.parse(user.stdout)).toEqual({ id: expect.any(Number), handle: 'tess' });

    await setChance(tr.redis, tr.prefix, 'cli1', 1, '0.4');
    const call = await run('records.ts', ['call', '--user', 'tess', '--market', 'cli1', '--outcome', 'no', '--thesis', 'Too short a price.']);
    expect(call.code, call.stderr).toBe(0);
    expect(Object.keys(JSON.parse(call.stdout) as object).sort()).toEqual(['chance_at_call', 'id', 'made_at', 'repeated']);
    expect(JSON.parse(call.stdout)).toMatchObject({ chance_at_call: 0.4 });

    const [unknownMarket, unknownOutcome] = await Promise.all([
      run('records.ts', ['call', '--user', 'tess', '--market', 'no-such-market', '--outcome', 'Yes']),
      run('records.ts', ['call', '--user', 'tess', '--market', 'cli1', '--outcome', 'Maybe']),
    ]);
    expect([unknownMarket.code, unknownMarket.stderr.trim()]).toEqual([1, 'refused (unknown_market): no market with id no-such-market']);
    expect([unknownOutcome.code, unknownOutcome.stderr.trim()]).toEqual([1, 'refused (unknown_outcome): market cli1 has no outcome named "Maybe" (its outcomes: Yes, No)']);
  });

  it('--key: the same call sent again answers the first ("repeated": true), and the key with other content is refused', async () => {
    await run('records.ts', ['user', '--handle', 'kit', '--name', 'Kit']);
    await setChance(tr.redis, tr.prefix, 'cli1', 0, '0.55');
    const args = ['call', '--user', 'kit', '--market', 'cli1', '--outcome', 'yes', '--thesis', 'Once only.', '--key', 'kit-call-1'];
    const first = await run('records.ts', args);
    expect(first.code, first.stderr).toBe(0);
    const again = await run('records.ts', args);
    expect(again.code, again.stderr).toBe(0);
    const [a, b] = [JSON.parse(first.stdout) as { id: string; repeated: boolean }, JSON.parse(again.stdout) as { id: string; repeated: boolean }];
    expect([a.repeated, b.repeated, b.id]).toEqual([false, true, a.id]);
    const other = await run('records.ts', ['call', '--user', 'kit', '--market', 'cli1', '--outcome', 'no', '--key', 'kit-call-1']);
    expect([other.code, other.stderr.trim()]).toEqual([1, 'refused (key_reused): key "kit-call-1" was already used for a call with different content; a retry must send the same content, a new write needs a new key']);
  }, SPAWNS.timeout);
});

describe('npm run export', SPAWNS, () => {
  it('writes a day once, says so in snake_case JSON, and names a bad day or range', async () => {
    const first = await run('export.ts', ['--from', '2026-11-30', '--dataset', 'calls']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ day: '2026-11-30', dataset: 'calls', outcome: 'written', rows: 0 });
    expect(readdirSync(path.join(archiveDir, '2026-11-30')).sort()).toEqual(['calls.ndjson.gz', 'calls.parquet']);
    const again = await run('export.ts', ['--from', '2026-11-30', '--to', '2026-11-30', '--dataset', 'calls']);
    expect(JSON.parse(again.stdout)).toMatchObject({ outcome: 'complete' });
    const [badDay, backwards, badDataset] = await Promise.all([
      run('export.ts', ['--from', '2026-02-30']),
      run('export.ts', ['--from', '2026-11-30', '--to', '2026-11-01']),
      run('export.ts', ['--from', '2026-11-30', '--dataset', 'prices']),
    ]);
    expect([badDay.code, badDay.stderr.split('\n')[0]]).toEqual([2, 'export: --from must be a date written YYYY-MM-DD, got "2026-02-30"']);
    expect([backwards.code, backwards.stderr.split('\n')[0]]).toEqual([2, 'export: --to (2026-11-01) is before --from (2026-11-30)']);
    expect([badDataset.code, badDataset.stderr.split('\n')[0]]).toEqual([2, 'export: --dataset must be one of candles, trades, markets, calls, combos, got "prices"']);
  });
});
