import { callListSnapshotSchema, marketCallsSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../errors.js';
import type { Handler } from '../handler.js';

export const RECORDS_NOT_READY = 'records are not built yet; please try again shortly';

/**
 * GET /api/v1/calls: the newest calls from `calls:latest`, or with `market` that market's calls and
 * platform split from `calls:market:<id>`. A market with no snapshot has no calls: 200 with empty
 * lists, unless the records have not been built at all (no `calls:latest` either), which is a 503.
 */
export const listCalls: Handler<'/api/v1/calls'> = async (params, ctx) => {
  const { limit } = params;
  const market = params.market?.trim() || undefined;
  if (market !== undefined) {
    const snapshot = await ctx.snapshots.read(`calls:market:${market}`, marketCallsSnapshotSchema);
    if (snapshot) {
      const calls = snapshot.data.calls.slice(0, limit);
      return { data: { count: calls.length, platform_split: snapshot.data.platform_split, calls } };
    }
  }
  const latest = await ctx.snapshots.read('calls:latest', callListSnapshotSchema);
  if (!latest) throw new ApiError('unavailable', RECORDS_NOT_READY);
  if (market !== undefined) return { data: { count: 0, platform_split: [], calls: [] } };
  const calls = latest.data.calls.slice(0, limit);
  return { data: { count: calls.length, calls } };
};
