import { ApiError } from '../http/errors.js';
import type { Handler } from '../app/handler.js';
import { exportEntry, readExportPage } from '../pages/exports.js';

/**
 * GET /api/v1/exports: the archive's manifest (docs/archive.md), newest day first, then dataset and
 * format, read from the manifest table the worker writes once each file is whole and in place. The
 * cursor names the filter and the last file shown (keyset: a walk never repeats or skips a file,
 * and days written meanwhile are newer, before its first page).
 */
export const listExports: Handler<'/api/v1/exports'> = async (params, ctx) => {
  const { dataset, start, end, limit } = params;
  if (start !== undefined && end !== undefined && start > end) throw new ApiError('bad_request', `start must not be after end (${start} > ${end})`);
  const filter = new URLSearchParams(Object.entries({ dataset, start, end }).filter((e): e is [string, string] => e[1] !== undefined)).toString();
  const identity = { list: 'exports', filter } as const;
  const after = params.cursor === undefined ? undefined : ctx.cursors.read(params.cursor, identity);
  const rows = await readExportPage(ctx.readDb, { dataset, start, end, limit: limit + 1, after: after && { day: after.day, dataset: after.dataset, format: after.format } });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: {
      exports: page.map(exportEntry),
      next_cursor: rows.length > limit && last ? ctx.cursors.make({ ...identity, day: last.day, dataset: last.dataset, format: last.format }) : null,
    },
  };
};
