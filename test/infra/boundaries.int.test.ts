import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The architecture's boundaries are lint rules (eslint.boundaries.js), not conventions: in a temp copy
 * of the tree, each boundary is broken once by a planted import, and the linter must fail on it with
 * the boundary's own rule; the same files unplanted must lint clean.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let copy: string;
let eslint: ESLint;

beforeAll(() => {
  copy = mkdtempSync(path.join(tmpdir(), 'pm-boundaries-'));
  // The tree as it is in this clone (tracked and new files), without node_modules: linked instead.
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    try {
      cpSync(path.join(root, f), path.join(copy, f));
    } catch {
      // a file deleted in the work tree but still in the index
    }
  }
  symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  eslint = new ESLint({ cwd: copy });
});

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

interface Plant {
  boundary: string;
  file: string;
  /** Appended to the file (or its whole text when the file is new). */
  line: string;
  /** Words of the rule's message, so the failure is this boundary's and not another rule's. */
  says: RegExp;
}

const plants: Plant[] = [
  { boundary: 'domain is pure: no I/O module', file: 'shared/src/domain/odds.ts', line: "export { readFileSync } from 'node:fs';", says: /domain is pure/ },
  { boundary: 'domain is pure: no Redis client', file: 'shared/src/domain/money.ts', line: "export { Redis } from 'ioredis';", says: /domain is pure/ },
  { boundary: 'domain imports only domain', file: 'shared/src/domain/categories.ts', line: "export { categorySchema } from '../api/resources.js';", says: /imports only domain/ },
  { boundary: 'a service never imports another service (relative path)', file: 'services/worker/src/jobs.ts', line: "export { createApp } from '../../api/src/app/app.js';", says: /never imports another service/ },
  { boundary: 'a service never imports another service (package)', file: 'services/ingestor/src/main.ts', line: "export * from '@pm/worker';", says: /never imports another service/ },
  { boundary: 'the API never loads pg', file: 'services/api/src/app/app.ts', line: "export { default as pg } from 'pg';", says: /API never loads pg/ },
  { boundary: 'the API never loads the db layer outside pages/', file: 'services/api/src/routes/get-call.ts', line: "export { sql } from '@pm/shared/db';", says: /API never loads pg/ },
  { boundary: 'the API never loads BullMQ', file: 'services/api/src/server.ts', line: "export { Queue } from 'bullmq';", says: /never loads BullMQ/ },
  { boundary: 'the API never loads queues (BullMQ) through shared', file: 'services/api/src/app/handler.ts', line: "export { queuePrefix } from '@pm/shared/queues';", says: /never loads pg or BullMQ/ },
  { boundary: 'keyset pages never load BullMQ', file: 'services/api/src/pages/planted.ts', line: "export { Queue } from 'bullmq';", says: /never loads BullMQ/ },
  { boundary: 'keyset pages never write', file: 'services/api/src/pages/planted-write.ts', line: "export { createRecords } from '@pm/shared/records';", says: /reads Postgres only/ },
  { boundary: 'shared areas the API loads stay free of pg', file: 'shared/src/redis/keys.ts', line: "export { sql } from '../db/index.js';", says: /must not reach db/ },
  { boundary: 'shared areas the API loads stay free of BullMQ', file: 'shared/src/ops/ops.ts', line: "export { Queue } from 'bullmq';", says: /never loads BullMQ/ },
  { boundary: 'scripts use public entry points only', file: 'scripts/rebuild.ts', line: "export { createWorker } from '../services/worker/src/worker.js';", says: /public entry points only/ },
  { boundary: 'shared is imported through its entry points', file: 'services/worker/src/jobs.ts', line: "export { queues } from '../../../shared/src/queues/names.js';", says: /entry points/ },
];

async function restrictedImports(file: string): Promise<string[]> {
  const [result] = await eslint.lintFiles([path.join(copy, file)]);
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

async function problems(files: string[]): Promise<string[]> {
  const results = await eslint.lintFiles(files.map((f) => path.join(copy, f)));
  return results.flatMap((r) => r.messages.filter((m) => m.severity === 2).map((m) => `${path.relative(copy, r.filePath)}: ${m.ruleId} ${m.message}`));
}

describe('lint boundaries', () => {
  it('passes on the clean tree, and on keyset pages reading Postgres (the one read-only way in)', async () => {
    mkdirSync(path.join(copy, 'services/api/src/pages'), { recursive: true });
    writeFileSync(path.join(copy, 'services/api/src/pages/allowed.ts'), "import { sql } from '@pm/shared/db';\n\nexport const firstId = sql`select 1`;\n");
    const targets = [...new Set(plants.map((p) => p.file).filter((f) => !f.includes('/pages/')))];
    expect(await problems([...targets, 'services/api/src/pages/allowed.ts'])).toEqual([]);
  });

  for (const plant of plants) {
    it(`fails on a planted violation: ${plant.boundary}`, async () => {
      const file = path.join(copy, plant.file);
      let before: string | undefined;
      try {
        before = readFileSync(file, 'utf8');
      } catch {
        mkdirSync(path.dirname(file), { recursive: true });
      }
      writeFileSync(file, `${before ?? ''}\n${plant.line}\n`);
      try {
        const messages = await restrictedImports(plant.file);
        expect(messages.some((m) => plant.says.test(m)), messages.join('\n') || 'no restricted import reported').toBe(true);
      } finally {
        if (before === undefined) rmSync(file);
        else writeFileSync(file, before);
      }
    });
  }
});
