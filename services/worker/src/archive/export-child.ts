/**
 * A process the archive's fault test kills (SIGKILL) mid-export: it exports one (day, dataset) with
 * a pause after the first batch of rows is written aside, and says so on stdout. Configuration
 * arrives as JSON on argv[2].
 */
import { createDb } from '@pm/shared/db';
import type { DatasetName } from '@pm/shared/archive';
import { exportDay } from '@pm/shared/archive/write';

const { databaseUrl, dir, day, dataset, force } = JSON.parse(process.argv[2] ?? '{}') as { databaseUrl: string; dir: string; day: string; dataset: DatasetName; force?: boolean };
const db = createDb(databaseUrl, { poolSize: 2 });
await exportDay({
  db,
  dir,
  day,
  dataset,
  force: force === true,
  onBatch: async (rows) => {
    process.stdout.write(`mid-write ${rows}\n`);
    await new Promise((resolve) => setTimeout(resolve, 60_000));
  },
});
