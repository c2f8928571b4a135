import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { liveSnapshotSchema } from '../snapshots/snapshot-schemas.js';

/** GET /api/v1/live: every match in play, from the worker's `live` snapshot (written on every build, empty or not). */
export const listLiveMatches: Handler<'/api/v1/live'> = async (_params, ctx) => {
  const snapshot = await ctx.snapshots.read('live', liveSnapshotSchema);
  if (!snapshot) throw new ApiError('unavailable', 'match data is not ready yet; please try again shortly');
  const { matches } = snapshot.data;
  return { data: { count: matches.length, matches } };
};
