import type { Job } from 'bullmq';
import { z } from 'zod';
import type { JobData } from '@pm/shared/queues';
import type { RecordSnapshotBuilder } from './builder.js';

const jobDataSchema = z.object({ full: z.boolean().optional() });

/**
 * The `build-record-snapshots` processor (queue `records`). The work list is the dirty set in
 * Redis, not the job, so a deduplicated job loses nothing; `{full: true}` (from `npm run rebuild`)
 * rebuilds every record snapshot. Idempotent: it rebuilds from the current state of Postgres.
 */
export function createBuildRecordSnapshotsProcessor(builder: RecordSnapshotBuilder) {
  return async (job: Job<JobData['build-record-snapshots'], unknown, 'build-record-snapshots'>): Promise<void> => {
    // A malformed payload still deserves a correct (incremental) build rather than a failed job.
    const parsed = jobDataSchema.safeParse(job.data);
    const full = parsed.success && parsed.data.full === true;
    await builder.build({ full, reason: full ? 'job-full' : 'job' });
  };
}
