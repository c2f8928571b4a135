import { leaderboardSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../errors.js';
import type { Handler } from '../handler.js';
import { RECORDS_NOT_READY } from './list-calls.js';

/** GET /api/v1/leaderboard: the top rows of one sort (default profit) from `leaderboard:<sort>`. */
export const getLeaderboard: Handler<'/api/v1/leaderboard'> = async (params, ctx) => {
  const sort = params.sort ?? 'profit';
  const { limit } = params;
  const snapshot = await ctx.snapshots.read(`leaderboard:${sort}`, leaderboardSnapshotSchema);
  if (!snapshot) throw new ApiError('unavailable', RECORDS_NOT_READY);
  const rows = snapshot.data.rows.slice(0, limit);
  return { data: { sort, count: rows.length, rows } };
};
