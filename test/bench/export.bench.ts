/**
 * npm run bench:export — one closed day of the archive for BENCH_TOKENS tokens (default 20,000), in
 * a database of its own: every token's 1-minute candles for the day (24 packed hourly rows each,
 * generated set-based as bench:history does; hashed values, so they compress like real ones), and
 * its trades when the tape exists (BENCH_TRADES_PER_TOKEN per token, default 50). Then, each in a process of
 * its own (its peak RSS is the figure):
 *   - the baseline: the day's rows read through the history reader and counted, nothing written;
 *   - the export: both files of the day (NDJSON gzip, then Parquet by DuckDB), as the worker writes them.
 * Prints
 *   bench:export tokens=<n> rows=<n> read_s=<n> export_s=<n> peak_rss_mb=<n> parquet_bytes_per_token_day=<n> ndjson_gz_bytes_per_token_day=<n>
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDb, dropDatabase, ensureDatabase, migrate, sql, type Db } from '@pm/shared/db';
import { dayStart, hasTradeTape } from '@pm/shared/archive';
import { testServices, uniqueSuffix } from '@pm/shared/testing';
import { benchCli } from './cli.js';

benchCli('bench:export', `usage: npm run bench:export
One closed day of the archive for BENCH_TOKENS tokens: 1-minute candles for every token (and its
trades once the tape exists) generated in a database of its own, then the day's rows read alone (the
baseline) and the day's files written (Parquet and NDJSON gzip), each in a process of its own; prints
the time and peak RSS of each and the bytes per token-day of each format:
  bench:export tokens=<n> rows=<n> read_s=<n> export_s=<n> peak_rss_mb=<n> parquet_bytes_per_token_day=<n> ndjson_gz_bytes_per_token_day=<n>
Settings (environment):
  BENCH_TOKENS  tokens (default 20000)
  BENCH_TRADES_PER_TOKEN  trades per token in the day, once the tape exists (default 50)
  --help        this text`);

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_TOKENS ?? 20_000);
const TRADES = Number(process.env.BENCH_TRADES_PER_TOKEN ?? 50);
const DAY = '2026-11-30';
const D = dayStart(DAY);
const say = (line: string) => process.stdout.write(`${line}\n`);

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const value = await work();
  say(`  ${label.padEnd(50)} ${String(Math.round(performance.now() - t0)).padStart(8)} ms`);
  return value;
}

/** The world: N markets of two outcomes (100 per event), the first outcome's series, its 1m candles for the day. */
async function generate(db: Db): Promise<void> {
  await db.query(sql`insert into events (id, slug, title, category) select 'e' || e, 'event-' || e, 'Event ' || e, 'Crypto' from generate_series(0, ${Math.ceil(N / 100) - 1}::int) e`);
  await db.query(sql`
    insert into markets (id, event_id, condition_id, position, question)
    select (500000 + m)::text, 'e' || (m / 100), 'c' || m, m % 100, 'Will ' || m || ' happen?' from generate_series(0, ${N - 1}::int) m
  `);
  await db.query(sql`
    insert into outcomes (market_id, outcome_index, name, token_id, catalog_price)
    select (500000 + m)::text, o, case o when 0 then 'Yes' else 'No' end, '9' || lpad(m::text, 70, '0') || o::text, 0.5
    from generate_series(0, ${N - 1}::int) m cross join generate_series(0, 1) o
  `);
  await db.query(sql`insert into series (id, token_id) overriding system value select m + 1, '9' || lpad(m::text, 70, '0') || '0' from generate_series(0, ${N - 1}::int) m`);
  // 1m rows: 24 an hour-row per series, each of 60 slots; values hashed per (series, slot).
  await db.query(sql`
    insert into candles (series, step, p, o, h, l, c, n)
    select s, 60, p, a.o, a.h, a.l, a.c, a.n
    from generate_series(1, ${N}::int) s
    cross join generate_series(${D}::int, ${D + 23 * 3600}::int, 3600) p
    cross join lateral (
      select array_agg(v::smallint order by i) as o, array_agg(least(v + 40, 10000)::smallint order by i) as h,
             array_agg(greatest(v - 40, 0)::smallint order by i) as l, array_agg((v + 7)::smallint order by i) as c, array_agg(1 + (v % 12) order by i) as n
      from (select i, 3000 + (hashint8(s::bigint * 1000003 + p + i) & 4095)::int as v from generate_series(0, 59) i) x
    ) a
  `);
  await db.query(sql`insert into history_progress (name, done_until) values ('rollup', ${D + 86_400 + 3600}::int)`);
}

/** BENCH_TRADES_PER_TOKEN prints per token in the day, through the tape's own table (one packed row per token). */
async function generateTrades(db: Db): Promise<void> {
  await db.query(sql`select trades_partition(${D / 86_400}::int)`);
  await db.query(sql`
    insert into trades (series, lo, hi, off, px, sz, k)
    select s, ${D * 1000}::bigint, ${D * 1000}::bigint + max(i) * 1000,
           array_agg((i * 1000)::int order by i), array_agg((300000 + (hashint8(s::bigint * 7 + i) & 262143))::int order by i),
           array_agg(case when i % 3 = 0 then -1 else 1 end * (1 + (hashint8(s::bigint * 11 + i) & 1023))::float8 order by i),
           array_agg(hashint8(s::bigint * 1000003 + i) order by i)
    from generate_series(1, ${N}::int) s cross join generate_series(0, ${TRADES - 1}::int) i
    group by s
  `);
}

function run(config: object): Promise<{ rows: number; ms: number; maxRssMb: number; files: Array<{ format: string; bytes: number }> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'export-run.ts'), JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1) as string)) : reject(new Error(`export-run exited ${code}`))));
  });
}

async function main(): Promise<void> {
  const { postgresUrl } = await testServices();
  const url = new URL(postgresUrl);
  url.pathname = `/pm_bench_export_${uniqueSuffix()}`;
  const databaseUrl = url.toString();
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-export-'));
  await ensureDatabase(databaseUrl);
  await migrate(databaseUrl);
  const db = createDb(databaseUrl, { poolSize: 2 });
  try {
    say(`bench:export: ${N} tokens, day ${DAY}`);
    await timed('generate (1m candles of the day)', () => generate(db));
    const tape = await hasTradeTape(db);
    if (tape) await timed(`generate (${TRADES} trades per token)`, () => generateTrades(db));
    const datasets = tape ? (['candles', 'trades'] as const) : (['candles'] as const);
    let rows = 0;
    let readMs = 0;
    let exportMs = 0;
    let peak = 0;
    const bytes = { parquet: 0, 'ndjson.gz': 0 } as Record<string, number>;
    for (const dataset of datasets) {
      const read = await run({ databaseUrl, dir, day: DAY, dataset, mode: 'read' });
      say(`  baseline ${dataset}: read ${read.rows} rows in ${(read.ms / 1000).toFixed(1)} s, peak RSS ${read.maxRssMb.toFixed(0)} MB`);
      const written = await run({ databaseUrl, dir, day: DAY, dataset, mode: 'export' });
      say(`  export ${dataset}: ${written.rows} rows in ${(written.ms / 1000).toFixed(1)} s, peak RSS ${written.maxRssMb.toFixed(0)} MB, ${written.files.map((f) => `${f.format} ${(f.bytes / 1e6).toFixed(1)} MB`).join(', ')}`);
      rows += written.rows;
      readMs += read.ms;
      exportMs += written.ms;
      peak = Math.max(peak, written.maxRssMb);
      for (const f of written.files) bytes[f.format] = (bytes[f.format] ?? 0) + f.bytes;
    }
    say(
      `bench:export tokens=${N} rows=${rows} read_s=${(readMs / 1000).toFixed(1)} export_s=${(exportMs / 1000).toFixed(1)} peak_rss_mb=${peak.toFixed(0)} ` +
        `parquet_bytes_per_token_day=${Math.round((bytes['parquet'] ?? 0) / N)} ndjson_gz_bytes_per_token_day=${Math.round((bytes['ndjson.gz'] ?? 0) / N)}`,
    );
  } finally {
    await db.dispose();
    await dropDatabase(databaseUrl);
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:export failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
