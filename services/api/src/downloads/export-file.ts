import path from 'node:path';
import type { Request, RequestHandler, Response } from 'express';
import { EXPORT_CONTENT_TYPES, EXPORT_FILE_CACHE, EXPORT_FILE_PATH, parseExportFile } from '@pm/shared/api';
import type { HandlerContext } from '../app/handler.js';
import { ApiError } from '../http/errors.js';
import { sendError } from '../http/respond.js';

/** What `send` hands the callback of `res.sendFile` on failure. */
type SendError = Error & { code?: string; status?: number; headers?: Record<string, string> };
import { readExportFile } from '../pages/exports.js';

/**
 * GET/HEAD /api/v1/exports/{date}/{file} (shared/src/api/exports.ts, docs/archive.md): a file of the
 * archive, served from ARCHIVE_DIR only when the manifest lists it — the worker lists a file once
 * it is whole and in place, so a file being written, or one a killed writer left aside, is never
 * served. Ranges, HEAD, If-None-Match and If-Range are Express's `send` (a well-kept implementation
 * of RFC 9110's byte ranges and conditionals), with the manifest's SHA-256 as the ETag.
 */
export function exportFileRoute(ctx: Pick<HandlerContext, 'readDb' | 'config' | 'logger'>): RequestHandler {
  const root = path.resolve(ctx.config.ARCHIVE_DIR);
  return async (req: Request, res: Response) => {
    res.locals['route'] = EXPORT_FILE_PATH;
    const parsed = parseExportFile(String(req.params['date']), String(req.params['file']));
    if ('error' in parsed) throw new ApiError('bad_request', parsed.error);
    const { day, dataset, format } = parsed;
    const entry = await readExportFile(ctx.readDb, day, dataset, format);
    if (entry === null) throw new ApiError('not_found', `no ${dataset} file for ${day}: a day is written after it ends; /api/v1/exports lists the days written`);
    res.setHeader('Cache-Control', EXPORT_FILE_CACHE);
    res.setHeader('ETag', `"${entry.sha256}"`);
    res.setHeader('Content-Type', EXPORT_CONTENT_TYPES[format]);
    await new Promise<void>((resolve, reject) => {
      res.sendFile(path.join(root, day, `${dataset}.${format}`), { etag: false, lastModified: false, cacheControl: false, acceptRanges: true, dotfiles: 'deny' }, (err?: SendError) => {
        if (!err) return resolve();
        if (res.headersSent) return resolve(); // the client went away mid-body
        // A range past the end of the file: 416 with the size (`Content-Range: bytes */<size>`).
        if (err.status === 416) {
          res.setHeader('Content-Range', String(err.headers?.['Content-Range'] ?? ''));
          sendError(res, 'bad_request', `the range asked for is past the end of the file (${entry.bytes} bytes)`, 416);
          return resolve();
        }
        // Listed but not on this server's disk: a directory that was not synced here.
        if (err.code === 'ENOENT') {
          ctx.logger.warn({ day, dataset, format, root }, 'archive file listed but missing from ARCHIVE_DIR');
          res.removeHeader('Cache-Control');
          res.removeHeader('ETag');
          return reject(new ApiError('not_found', `the ${dataset} file of ${day} is not on this server`));
        }
        reject(err);
      });
    });
  };
}
