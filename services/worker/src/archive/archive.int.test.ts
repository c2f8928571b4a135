import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@pm/shared/db';
import { createTestDatabase, type TestDatabase } from '@pm/shared/testing';
import { ARCHIVE_DATASETS, ARCHIVE_FORMATS, manifestOf, presentDatasets, type DatasetName } from '@pm/shared/archive';
import { archivePath, exportDay } from '@pm/shared/archive/write';
import { DAY, readNdjson, readParquet, simulateDay, type SimulatedDay } from './archive-fixture.js';

/**
 * The archive of a simulated day against a real Postgres: every dataset's Parquet file, read back by
 * hyparquet (DuckDB writes it), holds exactly the rows the day has in Postgres, in order; its NDJSON
 * twin the same; the manifest's rows, bytes and sha256 are the files'; a rerun leaves the files as
 * they are; and the trades dataset is absent, not empty, in a database without the tape.
 */

let tdb: TestDatabase;
let dir: string;
let day: SimulatedDay;
beforeAll(async () => {
  tdb = await createTestDatabase('archive');
  dir = await mkdtemp(path.join(tmpdir(), 'archive-'));
  day = await simulateDay(tdb.db);
});
afterAll(async () => {
  await tdb?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sha256 = async (file: string) => createHash('sha256').update(await readFile(file)).digest('hex');

describe('a closed day', () => {
  const datasets = ['candles', 'trades', 'markets', 'calls', 'combos'] as const;

  it.each(datasets)('%s: the Parquet file and its NDJSON twin hold the day as Postgres has it, and the manifest describes them', async (dataset) => {
    const result = await exportDay({ db: tdb.db, dir, day: DAY, dataset });
    expect(result.outcome).toBe('written');
    const want = day.expected[dataset];
    expect(want.length).toBeGreaterThan(0);

    const parquet = await readParquet(archivePath(dir, DAY, dataset, 'parquet'), dataset);
    expect(parquet.columns).toEqual(ARCHIVE_DATASETS[dataset].columns.map((c) => c.name));
    expect(parquet.rows).toEqual(want);
    expect(await readNdjson(archivePath(dir, DAY, dataset, 'ndjson.gz'))).toEqual(want);

    const listed = await manifestOf(tdb.db, DAY, dataset);
    expect(listed.map((e) => e.format).sort()).toEqual([...ARCHIVE_FORMATS].sort());
    for (const entry of listed) {
      const file = archivePath(dir, DAY, dataset, entry.format);
      expect(entry.rows).toBe(want.length);
      expect(entry.bytes).toBe((await stat(file)).size);
      expect(entry.sha256).toBe(await sha256(file));
      expect(entry.schema_version).toBe(ARCHIVE_DATASETS[dataset].schemaVersion);
    }
  });

  it('a rerun yields the same rows and leaves the files and the manifest as they were', async () => {
    for (const dataset of datasets) await exportDay({ db: tdb.db, dir, day: DAY, dataset });
    const before = await Promise.all(datasets.map(async (d) => ({ d, listed: await manifestOf(tdb.db, DAY, d), ino: (await stat(archivePath(dir, DAY, d, 'parquet'))).ino })));
    for (const dataset of datasets) {
      expect((await exportDay({ db: tdb.db, dir, day: DAY, dataset })).outcome).toBe('complete');
      expect((await exportDay({ db: tdb.db, dir, day: DAY, dataset, force: true })).outcome).toBe('unchanged');
    }
    for (const b of before) {
      expect(await manifestOf(tdb.db, DAY, b.d)).toEqual(b.listed);
      expect((await stat(archivePath(dir, DAY, b.d, 'parquet'))).ino).toBe(b.ino);
    }
    expect((await readdir(path.join(dir, '.tmp'))).length).toBe(0);
  });

  it('a forced rerun after the rows changed rewrites the files and the manifest', async () => {
    await exportDay({ db: tdb.db, dir, day: DAY, dataset: 'calls' });
    await tdb.db.query(sql`update calls set thesis = 'changed my mind' where id = 'k-day-open'`);
    const before = await manifestOf(tdb.db, DAY, 'calls');
    expect((await exportDay({ db: tdb.db, dir, day: DAY, dataset: 'calls', force: true })).outcome).toBe('written');
    const after = await manifestOf(tdb.db, DAY, 'calls');
    expect(after.map((e) => e.sha256)).not.toEqual(before.map((e) => e.sha256));
    const rows = await readNdjson(archivePath(dir, DAY, 'calls', 'ndjson.gz'));
    expect(rows.find((r) => r['call_id'] === 'k-day-open')?.['thesis']).toBe('changed my mind');
    expect((await readParquet(archivePath(dir, DAY, 'calls', 'parquet'), 'calls')).rows).toEqual(rows);
    await tdb.db.query(sql`update calls set thesis = 'because k-day-open' where id = 'k-day-open'`);
  });

  it('trades is absent, not empty, while the tape does not exist', async () => {
    const bare = await createTestDatabase('archive_no_tape');
    try {
      await bare.db.query(sql`drop view trade_prints`);
      expect(await presentDatasets(bare.db)).not.toContain('trades' satisfies DatasetName);
      expect((await exportDay({ db: bare.db, dir, day: '2026-10-02', dataset: 'trades' })).outcome).toBe('absent');
      await expect(stat(archivePath(dir, '2026-10-02', 'trades', 'parquet'))).rejects.toThrow();
      expect(await manifestOf(bare.db, '2026-10-02', 'trades')).toEqual([]);
      expect(await presentDatasets(tdb.db)).toContain('trades' satisfies DatasetName);
    } finally {
      await bare.drop();
    }
  });

  it('an empty day is written as files with no rows', async () => {
    const empty = '2026-10-01';
    const result = await exportDay({ db: tdb.db, dir, day: empty, dataset: 'calls' });
    expect(result).toMatchObject({ outcome: 'written', rows: 0 });
    expect((await readParquet(archivePath(dir, empty, 'calls', 'parquet'), 'calls')).rows).toEqual([]);
    expect(await readNdjson(archivePath(dir, empty, 'calls', 'ndjson.gz'))).toEqual([]);
  });
});
