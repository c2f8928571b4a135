/**
 * A process the rollup test kills mid-slice (SIGKILL): it rolls up with a pause inside the first
 * slice's transaction, after the candles and the mark were written and before the commit, and says
 * so on stdout. Configuration arrives as JSON on argv[2].
 */
import { createDb } from '@pm/shared/db';
import { runRollup } from '@pm/shared/history';

const { databaseUrl, now } = JSON.parse(process.argv[2] ?? '{}') as { databaseUrl: string; now: number };
const db = createDb(databaseUrl, { poolSize: 1 });
await runRollup(db, {
  now,
  beforeCommit: async (slice) => {
    process.stdout.write(`in-slice ${slice}\n`);
    await new Promise((resolve) => setTimeout(resolve, 60_000));
  },
});
