import { comboListSnapshotSchema } from '@pm/shared/api';
import { ApiError } from '../errors.js';
import type { Handler } from '../handler.js';
import { RECORDS_NOT_READY } from './list-calls.js';

/** GET /api/v1/combos: the newest combos of one status (default open) from `combos:<status>`. */
export const listCombos: Handler<'/api/v1/combos'> = async (params, ctx) => {
  const status = params.status ?? 'open';
  const { limit } = params;
  const snapshot = await ctx.snapshots.read(`combos:${status}`, comboListSnapshotSchema);
  if (!snapshot) throw new ApiError('unavailable', RECORDS_NOT_READY);
  const combos = snapshot.data.combos.slice(0, limit);
  return { data: { status, count: combos.length, combos } };
};
