export { PROJECTIONS, projectChanges, rebuildProjections, tidyRecords, TIDY_RECORDS_AFTER, usersLeavingWeek } from './run.js';
export { createWindowUpkeepProcessor, createProjectUsersProcessor, createRebuildAllProcessor, weekEdgeKey, type ProjectionProcessorDeps } from './processor.js';
export { requestRebuildIfStale, scheduleWeekRollover, scheduleWindowUpkeep, WEEK_ROLLOVER_EVERY_MS, WINDOW_UPKEEP_EVERY_MS } from './schedule.js';
export { LEADERBOARD_DEPTH, LEADERBOARD_SORTS, RIGHT_MIN_SETTLED, type LeaderboardSort } from './leaderboard.js';
export type { Projection, ProjectionScope, ProjectedEvent } from './projection.js';
