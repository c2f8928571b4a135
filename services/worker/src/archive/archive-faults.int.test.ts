import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, sql } from '@pm/shared/db';
import { createTestDatabase, type TestDatabase } from '@pm/shared/testing';
import { manifestOf, type DatasetName } from '@pm/shared/archive';
import { archivePath, dayDir, exportDay } from '@pm/shared/archive/write';
import { DAY, readNdjson, simulateDay } from './archive-fixture.js';

/**
 * Exactly one whole file per (day, dataset, format) whatever happens to the writers: a writer killed
 * (SIGKILL) mid-write leaves nothing listed and nothing in the day's directory, and the next writer
 * makes the files; a writer killed while rewriting a listed day leaves the listed files whole; two
 * writers at once make the files once. Counted on disk and in the manifest.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
let tdb: TestDatabase;
let dir: string;
beforeAll(async () => {
  tdb = await createTestDatabase('archive_faults');
  await simulateDay(tdb.db);
});
afterAll(async () => {
  await tdb?.drop();
});
beforeEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = await mkdtemp(path.join(tmpdir(), 'archive-faults-'));
  await tdb.db.query(sql`delete from archive_files`);
});

/** A writer in a process of its own, stopped after its first batch of rows is written aside; killed with SIGKILL. */
async function killMidWrite(dataset: DatasetName, force = false): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'export-child.ts'), JSON.stringify({ databaseUrl: tdb.url, dir, day: DAY, dataset, force })], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('mid-write')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`child exited early (${code})`)));
  });
  // Mid-write: something is aside, nothing is listed or in place that was not before.
  expect((await readdir(path.join(dir, '.tmp'))).length).toBeGreaterThan(0);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
}

const sha256 = async (file: string) => createHash('sha256').update(await readFile(file)).digest('hex');

/** Every file in the day's directory, and whether each listed entry's sha256 is its file's. */
async function onDisk(): Promise<{ files: string[]; listedWhole: boolean; listed: number }> {
  const files = (await readdir(dayDir(dir, DAY)).catch(() => [] as string[])).sort();
  let whole = true;
  let listed = 0;
  for (const dataset of ['calls', 'candles'] as const) {
    for (const e of await manifestOf(tdb.db, DAY, dataset)) {
      listed++;
      if ((await sha256(archivePath(dir, DAY, dataset, e.format)).catch(() => 'missing')) !== e.sha256) whole = false;
    }
  }
  return { files, listedWhole: whole, listed };
}

describe('the archive under kills and two writers', () => {
  it('a writer killed mid-write leaves nothing listed or in place; the next one writes the day once', async () => {
    await killMidWrite('calls');
    expect(await manifestOf(tdb.db, DAY, 'calls')).toEqual([]);
    expect((await onDisk()).files).toEqual([]);

    // The killed writer's lock went with its connection; the next writer clears what it left aside.
    const result = await exportDay({ db: tdb.db, dir, day: DAY, dataset: 'calls' });
    expect(result.outcome).toBe('written');
    expect(await onDisk()).toEqual({ files: ['calls.ndjson.gz', 'calls.parquet'], listedWhole: true, listed: 2 });
    expect(await readdir(path.join(dir, '.tmp'))).toEqual([]);
    expect((await readNdjson(archivePath(dir, DAY, 'calls', 'ndjson.gz'))).length).toBe(result.rows);
  });

  it('a writer killed while rewriting a listed day leaves the listed files whole', async () => {
    await exportDay({ db: tdb.db, dir, day: DAY, dataset: 'calls' });
    const listed = await manifestOf(tdb.db, DAY, 'calls');
    await tdb.db.query(sql`update calls set thesis = 'rewritten' where id = 'k-day-open'`);
    try {
      await killMidWrite('calls', true);
      expect(await manifestOf(tdb.db, DAY, 'calls')).toEqual(listed);
      expect(await onDisk()).toEqual({ files: ['calls.ndjson.gz', 'calls.parquet'], listedWhole: true, listed: 2 });
    } finally {
      await tdb.db.query(sql`update calls set thesis = 'because k-day-open' where id = 'k-day-open'`);
    }
  });

  it('two writers of the same day at once write it once', async () => {
    const other = createDb(tdb.url, { poolSize: 3 });
    try {
      const results = await Promise.all(
        (['candles', 'calls'] as const).flatMap((dataset) => [
          exportDay({ db: tdb.db, dir, day: DAY, dataset }),
          exportDay({ db: other, dir, day: DAY, dataset }),
        ]),
      );
      expect(results.map((r) => `${r.dataset}:${r.outcome}`).sort()).toEqual(['calls:complete', 'calls:written', 'candles:complete', 'candles:written']);
      expect(await onDisk()).toEqual({ files: ['calls.ndjson.gz', 'calls.parquet', 'candles.ndjson.gz', 'candles.parquet'], listedWhole: true, listed: 4 });
      expect(await readdir(path.join(dir, '.tmp'))).toEqual([]);
    } finally {
      await other.dispose();
    }
  });
});
