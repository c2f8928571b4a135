/**
 * `npm run rebuild`: settle every resolved market whose settlement has not committed (each in its own
 * transaction, exactly once, as the worker would), then truncate and recompute every projection
 * (user_records, market_splits, leaderboard_rows) from the source tables in one transaction, then
 * request a full rebuild of every
 * record snapshot and of every open event's snapshot (their platform_split). The snapshot work is
 * queued for the worker: if none is running, its start-up build does the same.
 * Against the stack's DATABASE_URL / REDIS_URL / REDIS_PREFIX.
 */
import { createSnapshotTrigger } from '@pm/shared/queues';
import { loadConfig } from '@pm/shared/config';
import { createRedis } from '@pm/shared/redis';
import { createDb, migrate, sql } from '@pm/shared/db';
import { createRecordsTrigger } from '@pm/shared/records';
import { rebuildProjections } from '../services/worker/src/projections/index.js';
import { marketsPendingSettlement, settleMarket } from '../services/worker/src/settlement/index.js';
import { parseCli, printJson } from './lib/cli.js';

const USAGE = `usage: npm run rebuild

Re-derives everything from Postgres (DATABASE_URL, REDIS_URL, REDIS_PREFIX): settles resolved
markets not yet settled, recomputes every projection, and queues a full rebuild of the record and
event snapshots for the worker. Prints a JSON summary. Safe to run while the stack runs.

options:
  -h, --help  this text`;

async function main(): Promise<void> {
  parseCli({ command: 'rebuild', usage: USAGE, options: {} });
  const config = loadConfig();
  await migrate(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, { poolSize: 2 });
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: null });
  const records = createRecordsTrigger({ redis, prefix: config.REDIS_PREFIX });
  const snapshots = createSnapshotTrigger({ redis, prefix: config.REDIS_PREFIX });
  try {
    const started = performance.now();
    let settled = 0;
    for (const marketId of await marketsPendingSettlement(db, 100_000)) {
      try {
        await settleMarket(db, marketId, new Date());
        settled++;
      } catch (err) {
        // A resolution the settlement refuses (no winner, not void) is reported, not a reason to stop.
        process.stderr.write(`market ${marketId} not settled: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
    const { ms } = await rebuildProjections(db, new Date());
    // Input: none. Output: the projection tables' row counts, for the summary.
    const [counts]: Array<{ user_records: number; leaderboard_rows: number; market_splits: number }> = await db.query(sql`
      select (select count(*) from user_records)::int as user_records,
             (select count(*) from leaderboard_rows)::int as leaderboard_rows,
             (select count(*) from market_splits)::int as market_splits
    `);
    await records.requestFullSnapshotBuild();
    const events: Array<{ id: string }> = await db.query(sql`select id from events where closed = false`);
    await snapshots.markEventsDirty(events.map((e) => e.id));
    printJson({ settledMarkets: settled, rebuilt: counts, ms: { ...ms, total: Math.round(performance.now() - started) }, snapshots: 'full record build and open events queued' });
  } finally {
    await records.close();
    await snapshots.close();
    await db.dispose();
    redis.disconnect();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`rebuild failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
