/**
 * `npm run export -- --from D --to D`: writes the archive's files of closed days (docs/archive.md)
 * from what Postgres holds now — the backfill of days the worker has not written, or of days before
 * it ran. The same writer as the worker's `archive-day` job, under the same per-(day, dataset) lock,
 * so it is safe beside running workers: a (day, dataset) is written once. Against DATABASE_URL and
 * ARCHIVE_DIR.
 */
import path from 'node:path';
import { loadConfig } from '@pm/shared/config';
import { createDb, migrate } from '@pm/shared/db';
import { DATASET_NAMES, isRealDay, nextDay, presentDatasets, type DatasetName } from '@pm/shared/archive';
import { exportDay } from '@pm/shared/archive/write';
import { parseCli, printJson, usageError } from './lib/cli.js';

const USAGE = `usage: npm run export -- --from YYYY-MM-DD [--to YYYY-MM-DD] [--dataset NAME] [--force]

Writes the archive's files (Parquet and gzipped NDJSON) of every UTC day from --from to --to
(inclusive; default --to = --from) into ARCHIVE_DIR (default .data/archive), from what Postgres
holds now, and lists them in the manifest that GET /api/v1/exports serves. A day must be over (and
its candles rolled up by a running worker) for its files to be whole; the tiers keep 1-minute
candles 7 days, 5-minute 60 days, hourly and daily for good, and each day's candles come from the
finest tier still holding them. Prints a JSON object per (day, dataset): written, complete (listed
already: left alone), unchanged (--force, same rows: files left as they are) or absent (trades,
before the service records them).

options:
  --from DAY        the first day (UTC), YYYY-MM-DD
  --to DAY          the last day (UTC), YYYY-MM-DD; default --from
  --dataset NAME    only this dataset: ${DATASET_NAMES.join(', ')}
  --force           write days already listed again (the files change only if their rows did)
  -h, --help        this text`;

/** Most days one run writes: a typo in a year should not start a decade of work. */
const MAX_DAYS = 3_660;

async function main(): Promise<void> {
  const spec = {
    command: 'export',
    usage: USAGE,
    options: { from: { type: 'string' }, to: { type: 'string' }, dataset: { type: 'string' }, force: { type: 'boolean' } },
  } as const;
  const { values } = parseCli(spec);
  const from = values.from;
  const to = values.to ?? from;
  if (from === undefined) usageError(spec, '--from is required');
  for (const [name, day] of [['from', from], ['to', to]] as const) if (!isRealDay(day as string)) usageError(spec, `--${name} must be a date written YYYY-MM-DD, got ${JSON.stringify(day)}`);
  if ((to as string) < from) usageError(spec, `--to (${to}) is before --from (${from})`);
  const dataset = values.dataset;
  if (dataset !== undefined && !(DATASET_NAMES as string[]).includes(dataset)) usageError(spec, `--dataset must be one of ${DATASET_NAMES.join(', ')}, got ${JSON.stringify(dataset)}`);

  const config = loadConfig();
  await migrate(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, { poolSize: 3 });
  const dir = path.resolve(config.ARCHIVE_DIR);
  try {
    const datasets: DatasetName[] = dataset === undefined ? await presentDatasets(db) : [dataset as DatasetName];
    let days = 0;
    for (let day = from; day <= (to as string); day = nextDay(day)) {
      if (++days > MAX_DAYS) usageError(spec, `at most ${MAX_DAYS} days at once`);
      for (const d of datasets) {
        const r = await exportDay({ db, dir, day, dataset: d, force: values.force === true });
        printJson({ day: r.day, dataset: r.dataset, outcome: r.outcome, rows: r.rows, files: r.files });
      }
    }
  } finally {
    await db.dispose();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`export failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
