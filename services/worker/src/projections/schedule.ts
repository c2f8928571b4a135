import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { queuePrefix, type JobData } from '@pm/shared/queues';
import { tables, type Db } from '@pm/shared/db';
import { PROJECTIONS } from './run.js';

/** How often a projection batch runs even when nothing happens, so profit_7d follows the clock. */
export const WEEK_ROLLOVER_EVERY_MS = 10 * 60_000;

/**
 * Register (idempotently: a job scheduler with a fixed id) a `project-users` batch every 10 minutes.
 * It carries no ids; the batch checks which settled calls left the 7-day window since the last check.
 * Any number of worker processes may call this: the scheduler is one entry in Redis.
 */
export async function scheduleWeekRollover(connection: Redis, prefix: string): Promise<void> {
  const queue = new Queue<JobData['project-users']>('projections', { connection, prefix: queuePrefix(prefix) });
  try {
    await queue.upsertJobScheduler(
      'week-rollover',
      { every: WEEK_ROLLOVER_EVERY_MS },
      { name: 'project-users', data: { userIds: [], marketIds: [] }, opts: { removeOnComplete: 10, removeOnFail: 100 } },
    );
  } finally {
    await queue.close();
  }
}

/** How often the window records' upkeep runs: the calls it has not yet added or taken out are the API's to correct. */
export const WINDOW_UPKEEP_EVERY_MS = 60_000;

/**
 * Register (idempotently, as above) a `window-upkeep` job every minute: the calls settled since
 * the last run added to user_window_records, those that left the day, week and month windows taken
 * out (window-records.ts).
 */
export async function scheduleWindowUpkeep(connection: Redis, prefix: string, everyMs = WINDOW_UPKEEP_EVERY_MS): Promise<void> {
  const queue = new Queue<JobData['window-upkeep']>('projections', { connection, prefix: queuePrefix(prefix) });
  try {
    await queue.upsertJobScheduler('window-upkeep', { every: everyMs }, { name: 'window-upkeep', data: {}, opts: { removeOnComplete: 10, removeOnFail: 100 } });
  } finally {
    await queue.close();
  }
}

/**
 * At start: when a projection has never been built, or was built by another version of its code,
 * queue one `rebuild-all` (so projections exist over data written before them, and a changed
 * projection's meaning applies to every row). The job id names the versions, so several workers
 * starting together queue it once. Returns whether a rebuild was requested.
 */
export async function requestRebuildIfStale(db: Db, connection: Redis, prefix: string): Promise<boolean> {
  // Input: none. Output: the version each projection was last rebuilt with.
  const rows = await tables.projection_versions(db).find().select('name', 'version').all();
  const built = new Map(rows.map((r) => [r.name, r.version]));
  const stale = PROJECTIONS.filter((p) => built.get(p.name) !== p.version);
  if (stale.length === 0) return false;
  const queue = new Queue<JobData['rebuild-all']>('projections', { connection, prefix: queuePrefix(prefix) });
  try {
    const versions = PROJECTIONS.map((p) => `${p.name}-${p.version}`).join('_');
    await queue.add('rebuild-all', {}, { jobId: `rebuild-all-${versions}`, attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnFail: 100 });
  } finally {
    await queue.close();
  }
  return true;
}
