import type { Job } from 'bullmq';
import { z } from 'zod';
import type { JobData } from '@pm/shared/queues';
import type { SnapshotBuilder } from './builder.js';

const jobDataSchema = z.object({ reason: z.string() });

/**
 * The `build-snapshots` processor. The job carries no work list: the dirty set in Redis does, so a
 * job deduplicated away loses nothing. Idempotent by construction (it rebuilds from the current
 * state), which is what at-least-once delivery needs.
 */
export function createBuildSnapshotsProcessor(builder: SnapshotBuilder) {
  return async (job: Job<JobData['build-snapshots'], unknown, 'build-snapshots'>): Promise<void> => {
    // The data only labels the log line; a malformed payload still triggers a correct build.
    const parsed = jobDataSchema.safeParse(job.data);
    await builder.build({ reason: parsed.success ? parsed.data.reason : 'unknown' });
  };
}
