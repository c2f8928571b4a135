import { COMBO_LIST_SIZE, comboListSnapshotSchema, comboSchema } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { RECORDS_NOT_READY } from './list-calls.js';
import { firstPageHasMore, itemsOf } from './paging.js';

/**
 * GET /api/v1/combos: the newest combos of one status (default open) from `combos:<status>`; with
 * `cursor`, the page after the combo it names (Postgres, pages/pages.ts).
 */
export const listCombos: Handler<'/api/v1/combos'> = async (params, ctx) => {
  const status = params.status ?? 'open';
  const { limit } = params;
  const identity = { list: 'combos', status } as const;
  const cursorAfter = (id: string) => ctx.cursors.make({ ...identity, after: id });
  if (params.cursor !== undefined) {
    const { after } = ctx.cursors.read(params.cursor, identity);
    const page = await ctx.pages.combos({ status, after, limit });
    const combos = itemsOf(page.bodies, comboSchema);
    return { data: { status, count: combos.length, combos, next_cursor: page.nextAfter === null ? null : cursorAfter(String(page.nextAfter)) } };
  }
  const snapshot = await ctx.snapshots.read(`combos:${status}`, comboListSnapshotSchema);
  if (!snapshot) throw new ApiError('unavailable', RECORDS_NOT_READY);
  const combos = snapshot.data.combos.slice(0, limit);
  const last = combos.at(-1);
  const more = last !== undefined && firstPageHasMore(combos.length, snapshot.data.combos.length, COMBO_LIST_SIZE);
  return { data: { status, count: combos.length, combos, next_cursor: more ? cursorAfter(last.id) : null } };
};
