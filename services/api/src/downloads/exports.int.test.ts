import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { exportListResponseSchema } from '@pm/shared/api';
import { sql } from '@pm/shared/db';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { archivePath, exportDay } from '@pm/shared/archive/write';
import { apiRedis, startApp, type RunningApp } from '../testing/fixtures.js';
import { body, expectError, rawExchange } from '../testing/responses.js';

/**
 * The archive over HTTP against a real Postgres (the manifest) and files the worker's writer made:
 * the manifest list in order with its cursor and its 400s; each file with its immutable headers and
 * its SHA-256 as ETag, whole, resumed with Range (the parts equal the whole), HEAD, 304; a day not
 * written is a 404, and a file on disk that the manifest does not list is never served.
 */

const DAYS = ['2026-11-29', '2026-11-30'];
let tdb: TestDatabase;
let tr: TestRedis;
let redis: Redis;
let api: RunningApp;
let dir: string;

beforeAll(async () => {
  [tdb, tr] = await Promise.all([createTestDatabase('api_exports'), createTestRedis('api_exports')]);
  dir = await mkdtemp(path.join(tmpdir(), 'api-exports-'));
  redis = await apiRedis(tr.url);
  const db = tdb.db;
  await db.query(sql`insert into events (id, slug, title, category) values ('e1', 'ev', 'Ev', 'Crypto')`);
  await db.query(sql`insert into markets (id, event_id, condition_id, position, question) values ('m1', 'e1', 'c1', 0, 'Q?')`);
  await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values ('m1', 0, 'Yes', 't0'), ('m1', 1, 'No', 't1')`);
  const [u] = (await db.query(sql`insert into users (handle, display_name) values ('ann', 'Ann') returning id`)) as Array<{ id: number }>;
  for (let i = 0; i < 400; i++) {
    const day = DAYS[i % 2] as string;
    await db.query(sql`insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
      values (${`c${i}`}, ${u!.id}, 'm1', ${i % 2}, 0.5, ${`thesis number ${i} `.repeat(5)}, ${new Date(`${day}T${String(i % 24).padStart(2, '0')}:00:00Z`)})`);
  }
  for (const day of DAYS) for (const dataset of ['calls', 'markets'] as const) await exportDay({ db, dir, day, dataset });
  api = await startApp({ redis, env: { REDIS_PREFIX: tr.prefix, DATABASE_URL: tdb.url, ARCHIVE_DIR: dir, RATE_LIMIT_PER_MINUTE: '100000' } });
});

afterAll(async () => {
  await api?.close();
  redis?.disconnect();
  await tr?.cleanup();
  await tdb?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const get = (p: string, headers: Record<string, string> = {}, method = 'GET') => fetch(`${api.base}${p}`, { headers, method });
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('GET /api/v1/exports', () => {
  it('lists every file written, newest day first, then dataset and format, as the files are', async () => {
    const list = await body(await get('/api/v1/exports'), exportListResponseSchema);
    expect(list.exports.map((e) => `${e.date}/${e.dataset}.${e.format}`)).toEqual(
      ['2026-11-30', '2026-11-29'].flatMap((d) => ['calls.ndjson.gz', 'calls.parquet', 'markets.ndjson.gz', 'markets.parquet'].map((f) => `${d}/${f}`)),
    );
    expect(list.next_cursor).toBeNull();
    for (const e of list.exports) {
      const file = await readFile(archivePath(dir, e.date, e.dataset, e.format));
      expect(e.url).toBe(`/api/v1/exports/${e.date}/${e.dataset}.${e.format}`);
      expect(e.bytes).toBe(file.length);
      expect(e.sha256).toBe(sha256(file));
      expect(e.rows).toBe(e.dataset === 'calls' ? 200 : 1);
    }
  });

  it('walks with its cursor, every file once; filters by dataset and dates', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof body<typeof exportListResponseSchema>>> = await body(
        await get(`/api/v1/exports?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
        exportListResponseSchema,
      );
      seen.push(...page.exports.map((e) => `${e.date}/${e.dataset}.${e.format}`));
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(seen.length).toBe(8);
    expect(new Set(seen).size).toBe(8);

    const calls = await body(await get('/api/v1/exports?dataset=calls&start=2026-11-29&end=2026-11-29'), exportListResponseSchema);
    expect(calls.exports.map((e) => `${e.date}/${e.dataset}.${e.format}`)).toEqual(['2026-11-29/calls.ndjson.gz', '2026-11-29/calls.parquet']);
  });

  it('refuses bad parameters with a 400 naming them', async () => {
    expect(await expectError(await get('/api/v1/exports?start=2026-12-01&end=2026-11-01'), 400, 'bad_request')).toMatch(/start must not be after end/);
    expect(await expectError(await get('/api/v1/exports?start=2026-02-30'), 400, 'bad_request')).toMatch(/^start /);
    expect(await expectError(await get('/api/v1/exports?end=yesterday'), 400, 'bad_request')).toMatch(/^end /);
    expect(await expectError(await get('/api/v1/exports?dataset=prices'), 400, 'bad_request')).toMatch(/^dataset /);
    expect(await expectError(await get('/api/v1/exports?limit=1001'), 400, 'bad_request')).toMatch(/^limit /);
    const first = await body(await get('/api/v1/exports?limit=2&dataset=calls'), exportListResponseSchema);
    expect(await expectError(await get(`/api/v1/exports?limit=2&dataset=markets&cursor=${encodeURIComponent(first.next_cursor ?? '')}`), 400, 'bad_request')).toMatch(/cursor/);
  });
});

describe('GET /api/v1/exports/{date}/{file}', () => {
  const url = '/api/v1/exports/2026-11-30/calls.parquet';

  it('serves the file whole, immutable, with its SHA-256 as ETag', async () => {
    const whole = await readFile(archivePath(dir, '2026-11-30', 'calls', 'parquet'));
    const res = await get(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('etag')).toBe(`"${sha256(whole)}"`);
    expect(res.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(Buffer.from(await res.arrayBuffer()).equals(whole)).toBe(true);
    const gz = await get('/api/v1/exports/2026-11-30/calls.ndjson.gz');
    expect(gz.headers.get('content-type')).toBe('application/gzip');
    expect(gz.headers.get('content-encoding')).toBeNull();
    expect(sha256(Buffer.from(await gz.arrayBuffer()))).toBe(sha256(await readFile(archivePath(dir, '2026-11-30', 'calls', 'ndjson.gz'))));
  });

  it('a download broken off and resumed with Range equals the whole file', async () => {
    const whole = await readFile(archivePath(dir, '2026-11-30', 'calls', 'ndjson.gz'));
    const etag = `"${sha256(whole)}"`;
    const cut = Math.floor(whole.length / 3);
    const first = await get('/api/v1/exports/2026-11-30/calls.ndjson.gz', { range: `bytes=0-${cut - 1}` });
    expect(first.status).toBe(206);
    expect(first.headers.get('content-range')).toBe(`bytes 0-${cut - 1}/${whole.length}`);
    const rest = await get('/api/v1/exports/2026-11-30/calls.ndjson.gz', { range: `bytes=${cut}-`, 'if-range': etag });
    expect(rest.status).toBe(206);
    const joined = Buffer.concat([Buffer.from(await first.arrayBuffer()), Buffer.from(await rest.arrayBuffer())]);
    expect(joined.equals(whole)).toBe(true);
    // If-Range naming another file: the whole file, not a part of this one.
    const stale = await get('/api/v1/exports/2026-11-30/calls.ndjson.gz', { range: `bytes=${cut}-`, 'if-range': '"0000"' });
    expect(stale.status).toBe(200);
    expect(Buffer.from(await stale.arrayBuffer()).equals(whole)).toBe(true);
    expect((await get(url, { range: 'bytes=99999999-' })).status).toBe(416);
  });

  it('answers HEAD with the headers only and If-None-Match with 304; counts one request each', async () => {
    const whole = await readFile(archivePath(dir, '2026-11-30', 'calls', 'parquet'));
    const head = await get(url, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(whole.length));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    // Over a raw socket: fetch() adds `Cache-Control: no-cache` to a conditional request, which rightly defeats it.
    const again = await rawExchange(api.base, `GET ${url} HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${head.headers.get('etag')}\r\nConnection: close\r\n\r\n`);
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    const remaining = (r: Response) => Number(r.headers.get('x-ratelimit-remaining'));
    const a = await get(url);
    await a.arrayBuffer();
    const b = await get(url);
    await b.arrayBuffer();
    expect(remaining(a) - remaining(b)).toBe(1);
  });

  it('a day not written is a 404, a file the manifest does not list is never served, a bad name is a 400', async () => {
    expect(await expectError(await get('/api/v1/exports/2026-12-01/calls.parquet'), 404, 'not_found')).toMatch(/no calls file for 2026-12-01/);
    // A file in place that is not listed (as a writer killed before its manifest commit would leave it).
    await writeFile(archivePath(dir, '2026-11-30', 'combos', 'parquet'), 'PAR1 not listed');
    await expectError(await get('/api/v1/exports/2026-11-30/combos.parquet'), 404, 'not_found');
    expect(await expectError(await get('/api/v1/exports/2026-11-30/calls.csv'), 400, 'bad_request')).toMatch(/^file must be/);
    expect(await expectError(await get('/api/v1/exports/2026-13-01/calls.parquet'), 400, 'bad_request')).toMatch(/^date must be/);
    expect(await expectError(await get('/api/v1/exports/2026-11-30/..%2Fsecret.parquet'), 400, 'bad_request')).toMatch(/^file must be/);
  });
});
