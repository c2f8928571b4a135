/**
 * Regenerates shared/src/db/__generated__ (pg-typed table types) from the migrations:
 * creates a scratch database, migrates it, introspects it with @databases/pg-schema-cli, drops it.
 *   npm run db:types            write the types
 *   npm run db:types -- --check exit 1 when the committed types differ from the migrations
 * The generator's settings are the "pg" key of the root package.json (@databases/pg-config): every
 * table's row and insert types go to the one file __generated__/index.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDatabase, dropDatabase, migrate } from './migrate.js';
import { testServices, uniqueSuffix } from '../testing/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const target = path.join(root, 'shared/src/db/__generated__');

export async function generateTypes(outDir: string): Promise<void> {
  const { postgresUrl } = await testServices();
  const url = new URL(postgresUrl);
  url.pathname = `/pm_types_${uniqueSuffix()}`;
  await ensureDatabase(url.toString());
  try {
    await migrate(url.toString());
    execFileSync(path.join(root, 'node_modules/.bin/pg-schema'), ['--database', url.toString(), '--directory', outDir], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } finally {
    await dropDatabase(url.toString());
  }
}

function filesOf(dir: string): Map<string, string> {
  return new Map(readdirSync(dir).sort().map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]));
}

/** Returns the names of generated files that differ from the committed ones (empty = current). */
export async function staleTypeFiles(): Promise<string[]> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'pm-types-'));
  try {
    await generateTypes(scratch);
    const fresh = filesOf(scratch);
    const committed = filesOf(target);
    const names = new Set([...fresh.keys(), ...committed.keys()]);
    return [...names].filter((n) => fresh.get(n) !== committed.get(n));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main() {
  if (process.argv.includes('--check')) {
    const stale = await staleTypeFiles();
    if (stale.length) {
      console.error(`generated db types are stale (${stale.join(', ')}): run npm run db:types`);
      process.exit(1);
    }
    console.log('generated db types are current');
    return;
  }
  const scratch = mkdtempSync(path.join(tmpdir(), 'pm-types-'));
  try {
    await generateTypes(scratch);
    rmSync(target, { recursive: true, force: true });
    cpSync(scratch, target, { recursive: true });
    console.log(`wrote ${readdirSync(target).length} files to ${path.relative(root, target)}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().then(() => process.exit(0), (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
