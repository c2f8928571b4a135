/**
 * One measured pass of bench:export in a process of its own, so its peak RSS is the export's alone
 * (a worker's, DuckDB included): `read` streams the day's candles through the history reader and
 * counts them (the baseline: what reading costs before anything is written), `export` writes the
 * day's files as the worker's job does. Prints one JSON line. Configuration: JSON on argv[2].
 */
import { createDb } from '@pm/shared/db';
import { dayStart, type DatasetName } from '@pm/shared/archive';
import { datasetRows, exportDay } from '@pm/shared/archive/write';

const { databaseUrl, dir, day, dataset, mode } = JSON.parse(process.argv[2] ?? '{}') as { databaseUrl: string; dir: string; day: string; dataset: DatasetName; mode: 'read' | 'export' };
const db = createDb(databaseUrl, { poolSize: 3 });
const t0 = performance.now();
let rows = 0;
let files: Array<{ format: string; bytes: number }> = [];
if (mode === 'read') {
  for await (const batch of datasetRows(db, dataset, dayStart(day))) rows += batch.length;
} else {
  const result = await exportDay({ db, dir, day, dataset, force: true });
  rows = result.rows;
  files = result.files;
}
const ms = performance.now() - t0;
await db.dispose();
process.stdout.write(`${JSON.stringify({ mode, dataset, rows, ms, maxRssMb: process.resourceUsage().maxRSS / 1024, files })}\n`);
