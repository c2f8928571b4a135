import { Queue, UnrecoverableError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { sql, type Db } from '@pm/shared/db';
import type { Logger } from '@pm/shared/logger';
import { archiveJobId, queuePrefix, type JobData } from '@pm/shared/queues';
import { LATE_POINT_SECONDS, rollupMark } from '@pm/shared/history';
import { ARCHIVE_DATASETS, ARCHIVE_FORMATS, DAY_PATTERN, dayOfSeconds, incompleteDays, presentDatasets, type ArchiveDay, type DatasetName } from '@pm/shared/archive';
import { exportDay, type ExportDayResult } from '@pm/shared/archive/write';

/**
 * The archive's jobs (docs/archive.md). `archive-plan`, a BullMQ job scheduler (one entry in Redis,
 * whichever worker registers it, plus one plan when a worker starts, so a fresh demo exports the days
 * its backfill holds within a minute or two of starting), finds every closed day from the first the service
 * holds anything of to the last closed one with a dataset not yet in the manifest, and adds an
 * `archive-day` job for each (day, dataset) under a deterministic id: a second plan while it waits
 * or runs adds nothing. `archive-day` writes it (shared/src/archive/write.ts: one writer at a time
 * under a Postgres lock, files aside then renamed, then listed), so a job run twice — a stalled job
 * taken again, a second worker, `npm run export` at the same time — writes it once.
 *
 * A day is closed once it ended more than the late-point margin ago AND the history rollup has
 * passed its end, so its candles are in the tiers (not still raw points the rollup has not reached).
 */

export const ARCHIVE_PLAN_EVERY_MS = 10 * 60_000;

export async function scheduleArchivePlan(connection: Redis, prefix: string, everyMs = ARCHIVE_PLAN_EVERY_MS): Promise<void> {
  const queue = new Queue<JobData['archive-plan']>('archive', { connection, prefix: queuePrefix(prefix) });
  try {
    await queue.upsertJobScheduler('archive-plan', { every: everyMs }, { name: 'archive-plan', data: {}, opts: { removeOnComplete: 10, removeOnFail: 100 } });
    // And one plan now: a scheduler's runs are aligned to its period, and a fresh demo should see its
    // backfilled days at once, not up to ten minutes later. Plans are idempotent: a second is harmless.
    await queue.add('archive-plan', {}, { removeOnComplete: true, removeOnFail: true });
  } finally {
    await queue.close();
  }
}

/** The last closed day at Unix second `now` (null: none yet). inputs: now. outputs: that day. */
export async function lastClosedDay(db: Db, now: number): Promise<ArchiveDay | null> {
  let end = now - LATE_POINT_SECONDS;
  const mark = await rollupMark(db);
  if (mark !== null) end = Math.min(end, mark);
  // The day ending at or before `end`.
  const day = dayOfSeconds(end - 86_400);
  return day < '1970-01-02' ? null : day;
}

/**
 * The first day the service holds anything of: a daily or 5-minute candle (the backfill's tiers; the
 * rollup's 1m and 1h rows make daily ones too) or a call. inputs: none. outputs: that day, or null.
 */
export async function firstHeldDay(db: Db): Promise<ArchiveDay | null> {
  const rows: Array<{ t: number | null }> = await db.query(sql`
    select least(
      (select min(k.p + (i - 1) * 86400) from candles k cross join lateral generate_subscripts(k.o, 1) as i where k.step = 86400 and k.o[i] is not null),
      (select min(p) from candles where step = 300),
      (select floor(extract(epoch from min(made_at)))::int from calls)
    )::float8 as t
  `);
  const t = rows[0]?.t ?? null;
  return t === null ? null : dayOfSeconds(t);
}

/** The (day, dataset) pairs the archive lacks up to the last closed day. inputs: now (Unix s). */
export async function planArchive(db: Db, now: number): Promise<Array<{ day: ArchiveDay; dataset: DatasetName }>> {
  const [first, last] = [await firstHeldDay(db), await lastClosedDay(db, now)];
  if (first === null || last === null || first > last) return [];
  const datasets = await presentDatasets(db);
  const days = await incompleteDays(db, first, last, datasets, ARCHIVE_FORMATS.length);
  return days.flatMap((d) => d.missing.map((dataset) => ({ day: d.day, dataset: dataset as DatasetName })));
}

export function createArchivePlanProcessor(deps: { db: Db; connection: Redis; prefix: string; logger: Logger; clock: { now(): number } }) {
  return async () => {
    const due = await planArchive(deps.db, Math.floor(deps.clock.now() / 1000));
    if (due.length === 0) return { added: 0 };
    const queue = new Queue<JobData['archive-day']>('archive', { connection: deps.connection, prefix: queuePrefix(deps.prefix) });
    try {
      // Oldest first; the manifest, not the job, is the record of a day written, so a finished or
      // failed job is removed and a later plan adds it again if the day is still missing.
      await queue.addBulk(
        due.map(({ day, dataset }) => ({
          name: 'archive-day' as const,
          data: { day, dataset },
          opts: { jobId: archiveJobId(day, dataset), attempts: 3, backoff: { type: 'exponential', delay: 30_000 }, removeOnComplete: true, removeOnFail: true },
        })),
      );
    } finally {
      await queue.close();
    }
    deps.logger.info({ added: due.length, from: due[0]?.day, to: due.at(-1)?.day }, 'archive days queued');
    return { added: due.length };
  };
}

export function createArchiveDayProcessor(deps: { db: Db; dir: string; logger: Logger; onWritten?: (result: ExportDayResult) => void }) {
  return async (job: Job<JobData['archive-day']>) => {
    const { day, dataset } = job.data;
    // A job that names no day or dataset of ours would fail the same way every time.
    if (!DAY_PATTERN.test(day) || !(dataset in ARCHIVE_DATASETS)) throw new UnrecoverableError(`archive-day: no such day or dataset: ${day} ${dataset}`);
    const result = await exportDay({ db: deps.db, dir: deps.dir, day, dataset: dataset as DatasetName });
    if (result.outcome === 'written') deps.logger.info({ day, dataset, rows: result.rows, files: result.files }, 'archive day written');
    deps.onWritten?.(result);
    return { outcome: result.outcome, rows: result.rows };
  };
}
