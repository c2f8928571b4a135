import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { WEEK_MS } from '@pm/shared/domain';
import type { JobData, SnapshotTrigger } from '@pm/shared/queues';
import type { Logger } from '@pm/shared/logger';
import { redisKeyBase, takeSets } from '@pm/shared/redis';
import { anyOf, tables, type Db } from '@pm/shared/db';
import { projectionMarketsDirtyKey, projectionUsersDirtyKey, type RecordsTrigger } from '@pm/shared/records';
import { upkeepWindows, projectChanges, rebuildProjections, usersLeavingWeek } from './run.js';
import { marketsPendingSettlement, settleMarket } from '../settlement/settle-market.js';

/** The 7-day window's edge is checked at most this often (it costs one pass over settled calls). */
const WEEK_EDGE_EVERY_MS = 60_000;
/** With no edge recorded yet (a new Redis), look back this far for calls that left the window. */
const WEEK_EDGE_CATCH_UP_MS = 24 * 3600 * 1000;
/** Where the last check of the window's edge is recorded (Unix ms). */
export const weekEdgeKey = (prefix: string) => `${redisKeyBase(prefix)}:projections:week-edge`;

const projectUsersSchema = z.object({
  userIds: z.array(z.union([z.string(), z.number()])).default([]),
  marketIds: z.array(z.string()).default([]),
});

export interface ProjectionProcessorDeps {
  db: Db;
  redis: Redis;
  prefix: string;
  trigger: RecordsTrigger;
  /**
   * Event snapshots to rebuild once their markets' platform_split committed: after a batch, the events
   * of its markets; after a full rebuild, every open event.
   */
  snapshots: Pick<SnapshotTrigger, 'markEventsDirty'>;
  logger: Logger;
  now?: () => Date;
}

/** Positive integer ids only: a malformed member of the dirty set is dropped, not a failed batch. */
function userIdsOf(values: Array<string | number>): number[] {
  return values.map(Number).filter((n) => Number.isSafeInteger(n) && n > 0);
}

/**
 * `project-users`: one batch for everything that is stale. The job's own ids plus every id in the
 * dirty sets (ids of jobs deduplicated into this one — see shared/src/records/trigger.ts), taken
 * atomically, are projected in one transaction with one re-rank; a failed attempt puts the taken ids
 * back for the retry. Then the snapshots they feed are marked dirty: the record snapshots (a market's
 * call list, the boards) and the event pages of the markets whose split moved.
 */
export function createProjectUsersProcessor(deps: ProjectionProcessorDeps) {
  const now = deps.now ?? (() => new Date());
  const usersKey = projectionUsersDirtyKey(deps.prefix);
  const marketsKey = projectionMarketsDirtyKey(deps.prefix);
  return async (job: Job<JobData['project-users'], unknown, 'project-users'>): Promise<void> => {
    const parsed = projectUsersSchema.safeParse(job.data);
    // Malformed data still leaves the dirty sets to work on: never a reason to drop the batch.
    const own = parsed.success ? parsed.data : { userIds: [], marketIds: [] };
    // Take the sets atomically (read and delete in one MULTI), as the record snapshot builder does:
    // removing only the members read, after the work, would also remove a member added again
    // meanwhile — whose job was deduplicated into a later one that then never saw it.
    const {
      members: [dirtyUsers = [], dirtyMarkets = []],
    } = await takeSets(deps.redis, [usersKey, marketsKey]);
    const at = now();
    // profit_7d also changes with the clock alone, when a settled call turns 7 days old: those
    // people join the batch (the job scheduler in schedule.ts makes sure a batch runs when quiet).
    const edge = Number(await deps.redis.get(weekEdgeKey(deps.prefix))) || at.getTime() - WEEK_EDGE_CATCH_UP_MS;
    const checkEdge = at.getTime() - edge >= WEEK_EDGE_EVERY_MS;
    const ageing = checkEdge ? await usersLeavingWeek(deps.db, new Date(edge - WEEK_MS), new Date(at.getTime() - WEEK_MS)) : [];
    const userIds = [...new Set(userIdsOf([...own.userIds, ...dirtyUsers, ...ageing]))];
    const marketIds = [...new Set([...own.marketIds, ...dirtyMarkets])];
    try {
      if (userIds.length > 0 || marketIds.length > 0) await projectChanges(deps.db, { userIds, marketIds }, at);
    } catch (err) {
      // A failed attempt leaves the ids for the retry.
      if (dirtyUsers.length > 0) await deps.redis.sadd(usersKey, ...dirtyUsers).catch(() => {});
      if (dirtyMarkets.length > 0) await deps.redis.sadd(marketsKey, ...dirtyMarkets).catch(() => {});
      throw err;
    }
    if (checkEdge) await deps.redis.set(weekEdgeKey(deps.prefix), String(at.getTime()));
    deps.logger.debug({ users: userIds.length, markets: marketIds.length }, 'projections updated');
    // People's records are read from Postgres by the API: the market lists (their split) and the boards are owed.
    await deps.trigger.snapshotsDirty([
      ...marketIds.map((id) => `market:${id}` as const),
      'leaderboard',
    ]);
    // An event page (and /markets/by-id, which reads it) shows its markets' platform_split, and the
    // market snapshot builder re-reads splits only for the events marked dirty. Unmarked, a new call
    // reached the page at the event's next price change or the periodic full build: seconds to 30 s.
    if (marketIds.length > 0) {
      const events = await tables.markets(deps.db).find({ id: anyOf(marketIds) }).select('event_id').all();
      await deps.snapshots.markEventsDirty(new Set(events.map((m) => m.event_id)));
    }
  };
}

/** What a `rebuild-all` did: its job's return value, which `npm run rebuild` prints. */
export interface RebuildSummary {
  settledMarkets: number;
  /** Markets whose settlement refused their resolution (no winner, not void): reported, not fatal. */
  unsettled: Array<{ marketId: string; error: string }>;
  rebuilt: { user_records: number; leaderboard_rows: number; market_splits: number };
  ms: Record<string, number>;
}

/**
 * `rebuild-all`: re-derive everything from Postgres. Settle every resolved market whose settlement has
 * not committed (each in its own transaction, as `settle-market` does), truncate and recompute every
 * projection, then rebuild every record snapshot and every open event's snapshot (their
 * platform_split). `npm run rebuild` enqueues this same job, so the CLI and the worker take one route.
 */
export function createRebuildAllProcessor(deps: ProjectionProcessorDeps) {
  const now = deps.now ?? (() => new Date());
  return async (_job: Job<JobData['rebuild-all'], unknown, 'rebuild-all'>): Promise<RebuildSummary> => {
    const started = performance.now();
    const at = now();
    let settledMarkets = 0;
    const unsettled: RebuildSummary['unsettled'] = [];
    for (const marketId of await marketsPendingSettlement(deps.db, 100_000)) {
      try {
        await settleMarket(deps.db, marketId, at);
        settledMarkets++;
      } catch (err) {
        unsettled.push({ marketId, error: err instanceof Error ? err.message : String(err) });
      }
    }
    const { ms } = await rebuildProjections(deps.db, at);
    await deps.redis.set(weekEdgeKey(deps.prefix), String(at.getTime()));
    const rebuilt = {
      user_records: await tables.user_records(deps.db).count(),
      leaderboard_rows: await tables.leaderboard_rows(deps.db).count(),
      market_splits: await tables.market_splits(deps.db).count(),
    };
    deps.logger.info({ ms, settledMarkets, unsettled: unsettled.length }, 'projections rebuilt');
    await deps.trigger.requestFullSnapshotBuild();
    const open = await tables.events(deps.db).find({ closed: false }).select('id').all();
    await deps.snapshots.markEventsDirty(open.map((e) => e.id));
    return { settledMarkets, unsettled, rebuilt, ms: { ...ms, total: Math.round(performance.now() - started) } };
  };
}

/**
 * `window-upkeep` (a job scheduler, schedule.ts): the calls settled since the last run added to
 * user_window_records and user_field_records, those that left the day, week and month windows taken
 * out. The window and field boards are ranked by the API from those rows, so no snapshot is owed.
 */
export function createWindowUpkeepProcessor(deps: Pick<ProjectionProcessorDeps, 'db' | 'logger' | 'now'>) {
  const now = deps.now ?? (() => new Date());
  return async (_job: Job<JobData['window-upkeep'], unknown, 'window-upkeep'>): Promise<{ added: number; aged: number; fieldsAdded: number; ms: number }> => {
    const done = await upkeepWindows(deps.db, now());
    if (done.added > 0 || done.aged > 0 || done.fieldsAdded > 0) deps.logger.debug(done, 'window and field records kept up');
    return done;
  };
}
