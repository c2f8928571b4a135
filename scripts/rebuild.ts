/**
 * `npm run rebuild`: re-derive everything from Postgres by queueing the worker's own `rebuild-all`
 * job (the one its reconciler queues), so the CLI and the worker rebuild by one route: settle every
 * resolved market whose settlement has not committed, truncate and recompute every projection
 * (user_records, market_splits, leaderboard_rows), then rebuild every record snapshot and every open
 * event's snapshot. Waits for a worker to finish it and prints the job's summary; with no worker
 * running the job stays queued, and the next worker to start runs it.
 * Against the stack's REDIS_URL / REDIS_PREFIX.
 */
import { Queue, QueueEvents } from 'bullmq';
import { loadConfig } from '@pm/shared/config';
import { createRedis } from '@pm/shared/redis';
import { queuePrefix, type JobData } from '@pm/shared/queues';
import { parseCli, printJson } from './lib/cli.js';

const USAGE = `usage: npm run rebuild

Re-derives everything from Postgres: queues the worker's own rebuild-all job (REDIS_URL,
REDIS_PREFIX), which settles resolved markets not yet settled, recomputes every projection and
rebuilds the record and event snapshots, then waits for a worker to finish it and prints the job's
JSON summary. With no worker running, the job waits in the queue for the next one to start. Safe
to run while the stack runs.

options:
  -h, --help  this text`;

/** How long to wait for a worker to finish the job (the target at a million calls is a minute on a quiet machine; a loaded one takes several). */
const WAIT_MS = 10 * 60_000;

async function main(): Promise<void> {
  parseCli({ command: 'rebuild', usage: USAGE, options: {} });
  const config = loadConfig();
  const connection = createRedis(config.REDIS_URL, { maxRetriesPerRequest: null });
  const prefix = queuePrefix(config.REDIS_PREFIX);
  const queue = new Queue<JobData['rebuild-all'], unknown, 'rebuild-all'>('projections', { connection, prefix });
  // QueueEvents blocks on its connection: one of its own, closed here (BullMQ leaves a passed one open).
  const eventsConnection = connection.duplicate();
  const events = new QueueEvents('projections', { connection: eventsConnection, prefix });
  try {
    await events.waitUntilReady();
    const job = await queue.add('rebuild-all', {}, { jobId: `rebuild-all-cli-${Date.now()}`, removeOnComplete: 10, removeOnFail: 100 });
    process.stderr.write(`queued rebuild-all as job ${job.id}; waiting for a worker to run it\n`);
    printJson(await job.waitUntilFinished(events, WAIT_MS));
  } finally {
    await events.close();
    await queue.close();
    eventsConnection.disconnect();
    connection.disconnect();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`rebuild failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
