import { ARCHIVE_DATASETS, ARCHIVE_FORMATS, isRealDay, type ArchiveFormat, type DatasetName } from '../archive/datasets.js';

/**
 * `GET /api/v1/exports/{date}/{file}` (docs/archive.md): one file of the archive, as written. Defined
 * here once — its path, how its parameters are read, its headers — for the API's route and for the
 * OpenAPI document. It is not a row of the JSON endpoint table because its body is a file: bytes with
 * ranges, an ETag that is the file's SHA-256 and a cache policy of its own (a file never changes).
 */

export const EXPORT_FILE_PATH = '/api/v1/exports/{date}/{file}';
export const EXPORT_FILE_EXPRESS_PATH = '/api/v1/exports/:date/:file';

/** A file never changes once listed: a year, and `immutable`. */
export const EXPORT_FILE_CACHE = 'public, max-age=31536000, immutable';

export const EXPORT_CONTENT_TYPES: Readonly<Record<ArchiveFormat, string>> = {
  parquet: 'application/vnd.apache.parquet',
  // Served as the gzip file it is (no Content-Encoding), so the bytes saved are the bytes listed.
  'ndjson.gz': 'application/gzip',
};

const FILE_RULE = `file must be <dataset>.<format>: dataset one of ${Object.keys(ARCHIVE_DATASETS).join(', ')}; format one of ${ARCHIVE_FORMATS.join(', ')} (e.g. candles.parquet)`;
const DATE_RULE = 'date must be a day written YYYY-MM-DD, e.g. 2026-11-30';

/** The route's parameters, or the 400's message naming the one that is wrong and its rule. */
export function parseExportFile(date: string, file: string): { day: string; dataset: DatasetName; format: ArchiveFormat } | { error: string } {
  if (!isRealDay(date)) return { error: DATE_RULE };
  const dot = file.indexOf('.');
  const dataset = file.slice(0, dot);
  const format = file.slice(dot + 1);
  if (dot < 1 || !(dataset in ARCHIVE_DATASETS) || !(ARCHIVE_FORMATS as readonly string[]).includes(format)) return { error: FILE_RULE };
  return { day: date, dataset: dataset as DatasetName, format: format as ArchiveFormat };
}

const rateLimitHeaders = {
  'x-ratelimit-limit': { $ref: '#/components/headers/RateLimitLimit' },
  'x-ratelimit-remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'x-ratelimit-reset': { $ref: '#/components/headers/RateLimitReset' },
  'x-request-id': { $ref: '#/components/headers/RequestId' },
};

/** The file route's OpenAPI operation (openapi.ts puts it beside the table's). */
export function exportFileOperation(): Record<string, unknown> {
  const content = Object.fromEntries(ARCHIVE_FORMATS.map((f) => [EXPORT_CONTENT_TYPES[f], { schema: { type: 'string', contentMediaType: EXPORT_CONTENT_TYPES[f] } }]));
  const fileHeaders = {
    'Cache-Control': { description: EXPORT_FILE_CACHE, schema: { type: 'string', const: EXPORT_FILE_CACHE } },
    ETag: { description: 'The file\'s SHA-256 (lowercase hex), quoted: the manifest\'s `sha256`', schema: { type: 'string' } },
    'Accept-Ranges': { description: 'bytes', schema: { type: 'string', const: 'bytes' } },
    ...rateLimitHeaders,
  };
  return {
    operationId: 'getExportFile',
    summary: 'Download one file of the archive',
    description: [
      'One dataset of one closed UTC day as it was written (`/api/v1/exports` lists them with their rows, bytes and SHA-256; docs/archive.md gives every dataset\'s columns). `file` is `<dataset>.parquet` (Parquet, zstd) or `<dataset>.ndjson.gz` (one JSON object a line, gzipped; served as `application/gzip`, not decompressed on the way).',
      'A file never changes: `Cache-Control: public, max-age=31536000, immutable`, `ETag` is its SHA-256. `Range` (one range of bytes) answers 206 with that part, so a broken download resumes where it stopped (`If-Range` with the ETag makes sure it is the same file); `If-None-Match` answers 304; `HEAD` gives the headers only. A download counts as one request against the rate limit.',
      'A day not written (yet) is a 404; a `date` or `file` that cannot be one is a 400 naming the rule.',
    ].join('\n\n'),
    tags: ['Archive'],
    'x-examples': [{ summary: 'Candles of a day', request: 'GET /api/v1/exports/2026-11-30/candles.parquet' }],
    parameters: [
      { name: 'date', in: 'path', required: true, description: 'The UTC day, YYYY-MM-DD', schema: { type: 'string', format: 'date' }, example: '2026-11-30' },
      { name: 'file', in: 'path', required: true, description: '`<dataset>.<format>`: dataset candles, trades, markets, calls or combos; format parquet or ndjson.gz', schema: { type: 'string' }, example: 'candles.parquet' },
      { name: 'Range', in: 'header', required: false, description: 'One range of bytes, e.g. `bytes=1048576-`: answered 206 with that part.', schema: { type: 'string' } },
      { name: 'If-Range', in: 'header', required: false, description: 'The ETag: the range is sent only if the file is still that one (else the whole file).', schema: { type: 'string' } },
      { name: 'If-None-Match', in: 'header', required: false, description: 'The ETag of a copy held: 304 with no body when it is this file.', schema: { type: 'string' } },
    ],
    responses: {
      '200': { description: 'The whole file.', headers: fileHeaders, content },
      '206': { description: 'The part of the file the `Range` asked for (`Content-Range` says which).', headers: { ...fileHeaders, 'Content-Range': { description: 'bytes first-last/size', schema: { type: 'string' } } }, content },
      '304': { description: 'Not modified: `If-None-Match` matched the ETag.', headers: { ETag: fileHeaders.ETag, ...rateLimitHeaders } },
      '400': { $ref: '#/components/responses/BadRequest' },
      '404': { $ref: '#/components/responses/NotFound' },
      '416': { description: 'The `Range` is past the end of the file (`Content-Range: bytes */size`).', headers: rateLimitHeaders },
      '429': { $ref: '#/components/responses/RateLimited' },
      '500': { $ref: '#/components/responses/Internal' },
      '503': { $ref: '#/components/responses/Unavailable' },
    },
  };
}
