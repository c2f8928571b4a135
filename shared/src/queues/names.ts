/**
 * Queue and job names: a closed union, so a producer cannot enqueue a job nobody processes and a
 * worker registry can refuse to start with a job that has no processor. Job ids are deterministic
 * and contain no ':' (BullMQ reserves it).
 */
export const queues = {
  /** Coalesced market snapshot rebuilds; added with BullMQ deduplication so a burst makes one job. */
  snapshots: { jobs: ['build-snapshots'] },
  /**
   * Coalesced record snapshot rebuilds (calls, users, leaderboard, combos), likewise. A queue of their
   * own: a settlement's thousands of people never hold up a market build (prices) waiting behind them.
   */
  records: { jobs: ['build-record-snapshots'] },
  /** One MarketResolved job per market, id `settle-<marketId>` (added by the worker's outbox relay and reconciler). */
  settlement: { jobs: ['settle-market'] },
  /** Projection refreshes for affected handles; the window records' upkeep (a job scheduler). */
  projections: { jobs: ['project-users', 'rebuild-all', 'window-upkeep'] },
  /** Price history upkeep: raw partitions made and dropped, closed hours rolled up into candles (a job scheduler). */
  history: { jobs: ['history-rollup'] },
  /**
   * The archive of closed days (docs/archive.md): `archive-plan` (a job scheduler) finds closed days
   * with a dataset not yet written and adds one `archive-day` job each, id `archive-<day>-<dataset>`.
   */
  archive: { jobs: ['archive-plan', 'archive-day'] },
} as const;

export type QueueName = keyof typeof queues;
export type JobName<Q extends QueueName> = (typeof queues)[Q]['jobs'][number];

export interface JobData {
  'build-snapshots': { reason: string };
  /** The market only: its resolution is read from Postgres, where it was recorded with the outbox row that made this job. */
  'settle-market': { marketId: string };
  /** Users whose records to recompute and markets whose splits to recompute (ids as strings). */
  'project-users': { userIds: string[]; marketIds?: string[] };
  /** Record snapshots (calls, users, leaderboard, combos) to rebuild: the dirty set `<prefix>:dirty:records`, or everything with `full`. */
  'build-record-snapshots': { full?: boolean };
  'rebuild-all': Record<string, never>;
  'window-upkeep': Record<string, never>;
  'history-rollup': Record<string, never>;
  'archive-plan': Record<string, never>;
  /** A closed UTC day (`YYYY-MM-DD`) and one dataset of the archive. */
  'archive-day': { day: string; dataset: string };
}

/**
 * BullMQ prefix for this stack; queues of different stacks or test files never meet. Hash-tagged
 * (`{<prefix>:bull}`, as BullMQ's docs ask for Redis Cluster) so that every key of every queue is in
 * one slot, apart from the stack's other keys (`{<prefix>}`, redis/keys.ts), which then sit on
 * another shard when the cluster has more than one.
 */
export function queuePrefix(redisPrefix: string): string {
  return `{${redisPrefix}:bull}`;
}

export const settleJobId = (marketId: string) => `settle-${marketId.replace(/:/g, '_')}`;
export const SNAPSHOT_DEDUP_ID = 'build-snapshots';
export const archiveJobId = (day: string, dataset: string) => `archive-${day}-${dataset}`;
