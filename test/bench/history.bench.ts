/**
 * npm run bench:history — price history at a year's steady state, in a database of its own:
 *   - every tier as retention leaves it after a year, generated set-based (generate_series): 1d and
 *     1h candles for 365 days, 5m for 60 days, 1m for 7 days; plus 48 hours of raw points with 10 %
 *     of tokens moving every 5 s and the rest at the one-a-minute floor;
 *   - beside it, the old layout (one row per point, text token id, numeric chance) holding the same
 *     48 hours of points, measured in the same run and taken to a year per token;
 *   - the rollup over closed hours of those raw points (points per second of one process);
 *   - candles over HTTP through an API process (this process is the client): 1d at 1m, 60d at 1h and
 *     1y at 1d, for one market and for an event of ten;
 *   - the `max` history range of a batch of 250 markets read from the 1d tier.
 * Prints the storage by tier, then
 *   bench:history tokens=<n> bytes_per_token_year=<n> rollup_points_per_s=<n> feed_points_per_s=<n> candles_p50_ms=<n> candles_p99_ms=<n> history_max_rebuild_ms=<n>
 *   BENCH_TOKENS (default 20000), BENCH_REQUESTS per window (default 100), BENCH_PORT (default 43090)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createDb, dropDatabase, ensureDatabase, migrate, sql, type Db } from '@pm/shared/db';
import { HISTORY_RANGE_TIERS, readCandles, runRollup } from '@pm/shared/history';
import { queueSnapshotWrites } from '@pm/shared/redis';
import { deleteKeysWithPrefix, testServices, uniqueSuffix } from '@pm/shared/testing';
import { event } from '../../services/api/src/testing/fixtures.js';
import { until } from '@pm/shared/wait';
import { benchCli } from './cli.js';

benchCli('bench:history', `usage: npm run bench:history
A year of price history for BENCH_TOKENS tokens at steady state (every tier, generated in SQL, and 48
hours of raw points), the old one-row-a-point layout beside it, the rollup's rate, candles over HTTP
through an API process and the max history range; prints the storage by tier and
  bench:history tokens=<n> bytes_per_token_year=<n> rollup_points_per_s=<n> feed_points_per_s=<n> candles_p50_ms=<n> candles_p99_ms=<n> history_max_rebuild_ms=<n>
Settings (environment):
  BENCH_TOKENS    tokens (default 20000)
  BENCH_REQUESTS  requests per window and market count (default 100)
  BENCH_PORT      the API's port (default 43090)
  --help          this text`);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const N = Number(process.env.BENCH_TOKENS ?? 20_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const PORT = Number(process.env.BENCH_PORT ?? 43_090);
const DAY = 86_400;
const say = (line: string) => process.stdout.write(`${line}\n`);
// The clock of the generated world: now, on an hour plus 30 minutes.
const NOW = Math.floor(Date.now() / 1000 / 3600) * 3600 + 1_800;
const TODAY = Math.floor(NOW / DAY) * DAY;
const RAW_FROM = NOW - 48 * 3600;
/** Tokens that move every 5 s (10 %): the lowest ids. */
const MOVERS = Math.ceil(N / 10);

async function timed<T>(label: string, work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await work();
  const ms = performance.now() - t0;
  say(`  ${label.padEnd(60)} ${String(Math.round(ms)).padStart(8)} ms`);
  return { value, ms };
}

/** A pseudo-random chance in units for (series, slot): hashed, so arrays compress like real ones. */
const V = (s: string, slot: string) => sql.__dangerous__rawValue(`(3000 + (hashint8((${s})::bigint * 1000003 + (${slot})::bigint) & 4095)::int)`);

/**
 * Candles of one step for every series: `rows` periods per series from `firstP` on, each with
 * `slots` candles. One statement per step; the arrays are made per row with a lateral subquery.
 */
async function generateTier(db: Db, step: number, period: number, firstP: number, lastP: number): Promise<void> {
  const slots = period / step;
  await db.query(sql`
    insert into candles (series, step, p, o, h, l, c, n)
    select s, ${step}::int, p, a.o, a.h, a.l, a.c, a.n
    from generate_series(1, ${N}::int) s
    cross join generate_series(${firstP}::int, ${lastP}::int, ${period}::int) p
    cross join lateral (
      select array_agg(v::smallint order by i) as o, array_agg((v + 40)::smallint order by i) as h, array_agg((v - 40)::smallint order by i) as l,
             array_agg((v + 7)::smallint order by i) as c, array_agg((1 + (v % 12))::int order by i) as n
      from (select i, ${V('s', 'p / ' + String(step) + ' + i')} as v from generate_series(0, ${slots - 1}::int) i) x
    ) a
  `);
}

async function sizes(db: Db): Promise<Array<{ name: string; bytes: number }>> {
  const rows: Array<{ name: string; bytes: string }> = await db.query(sql`
    select relname as name, pg_total_relation_size(c.oid)::text as bytes from pg_class c
    where relkind in ('r', 'p') and relnamespace = 'public'::regnamespace
      and (relname in ('series', 'candles', 'price_points_old') or relname like 'raw_points_d%')
  `);
  return rows.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
}

function startApi(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'services/api/src/main.ts')], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  return child;
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  const { postgresUrl, redisUrl } = await testServices();
  const url = new URL(postgresUrl);
  url.pathname = `/pm_bench_history_${uniqueSuffix()}`;
  const dbUrl = url.toString();
  await ensureDatabase(dbUrl);
  await migrate(dbUrl);
  const db = createDb(dbUrl, { poolSize: 4 });
  const prefix = `bench_history_${uniqueSuffix()}`;
  const redis = new Redis(redisUrl);
  let api: ReturnType<typeof startApi> | undefined;
  try {
    say(`bench:history generating ${N} tokens (${MOVERS} moving every 5 s), the clock at ${new Date(NOW * 1000).toISOString()}`);
    await timed('series', () => db.query(sql`insert into series (id, token_id) select s, '9' || lpad(s::text, 76, '0') from generate_series(1, ${N}::int) s`));
    await db.query(sql`select setval(pg_get_serial_sequence('series', 'id'), ${N}::int)`);
    // Steady state after a year: 1d for 365 days (64-day rows), 1h for 365 days, 5m for 60, 1m for 7.
    const D = 86_400;
    await timed('1d tier: 365 days', () => generateTier(db, D, 64 * D, Math.floor((TODAY - 365 * D) / (64 * D)) * 64 * D, TODAY));
    await timed('1h tier: 365 days', () => generateTier(db, 3600, D, TODAY - 365 * D, TODAY - D));
    await timed('5m tier: 60 days', () => generateTier(db, 300, D, TODAY - 60 * D, TODAY - D));
    await timed('1m tier: 7 days', () => generateTier(db, 60, 3600, NOW - 1_800 - 7 * D, NOW - 1_800 - 3 * 3600));
    // 48 h of raw points: movers every 5 s, the rest every 60 s.
    for (let d = Math.floor(RAW_FROM / D); d <= Math.floor(NOW / D) + 2; d++) await db.query(sql`select history_raw_partition(${d}::int)`);
    const raw = await timed('raw points: 48 hours', async () => {
      for (let t0 = RAW_FROM; t0 < NOW; t0 += 6 * 3600) {
        const t1 = Math.min(NOW, t0 + 6 * 3600);
        await db.query(sql`
          insert into raw_points (series, t, chance)
          select s, t, (3000 + (hashint8(s::bigint * 1000003 + t) & 4095)) / 10000.0
          from generate_series(1, ${N}::int) s
          cross join lateral generate_series(${t0}::int, ${t1 - 1}::int, case when s <= ${MOVERS}::int then 5 else 60 end) t
        `);
      }
      const rows: Array<{ n: string }> = await db.query(sql`select count(*)::text as n from raw_points`);
      return Number(rows[0]?.n);
    });
    // The old layout holding the same points.
    await db.query(sql`create table price_points_old (token_id text not null, t timestamptz not null, chance numeric not null check (chance between 0 and 1), primary key (token_id, t))`);
    await timed('old layout: the same 48 hours, one row a point', () =>
      db.query(sql`insert into price_points_old select s.token_id, to_timestamp(r.t), r.chance::numeric(6,4) from raw_points r join series s on s.id = r.series`),
    );
    await db.query(sql`vacuum analyze`);

    // Rollup: the hours of the raw window, from its start, for up to 3 hours of slices; then the mark
    // as steady state leaves it (the last closed hour).
    await db.query(sql`insert into history_progress (name, done_until) values ('rollup', ${RAW_FROM + 1_800}::int) on conflict (name) do update set done_until = excluded.done_until`);
    const rolled = await timed('rollup: 3 closed hours', () => runRollup(db, { now: NOW, maxSlices: 3 }));
    const rollupRate = rolled.value.points / (rolled.ms / 1000);
    await db.query(sql`update history_progress set done_until = ${NOW - 1_800 - 3600}::int`);
    await db.query(sql`vacuum analyze`);

    // Storage: every tier and its indexes; per tier, the candles' share by the bytes of their rows.
    const all = await sizes(db);
    const total = (pred: (n: string) => boolean) => all.filter((r) => pred(r.name)).reduce((s, r) => s + r.bytes, 0);
    const rawBytes = total((n) => n.startsWith('raw_points_d'));
    const candleBytes = total((n) => n === 'candles');
    const seriesBytes = total((n) => n === 'series');
    const oldBytes = total((n) => n === 'price_points_old');
    const shares: Array<{ step: number; bytes: string }> = await db.query(sql`select step, sum(pg_column_size(k.*))::text as bytes from candles k group by step order by step`);
    const shareTotal = shares.reduce((s, r) => s + Number(r.bytes), 0);
    say('storage by tier (bytes per token, indexes and TOAST shared out by row bytes):');
    for (const r of shares) say(`  ${{ 60: '1m (7 d)', 300: '5m (60 d)', 3600: '1h (365 d)', 86400: '1d (365 d)' }[r.step]?.padEnd(12)} ${Math.round((candleBytes * Number(r.bytes)) / shareTotal / N)}`);
    say(`  ${'raw (48 h)'.padEnd(12)} ${Math.round(rawBytes / N)}  (${raw.value} points)`);
    say(`  ${'series'.padEnd(12)} ${Math.round(seriesBytes / N)}`);
    const perTokenYear = Math.round((rawBytes + candleBytes + seriesBytes) / N);
    const oldPerPoint = oldBytes / raw.value;
    const pointsPerTokenYear = 365 * DAY * (0.1 / 5 + 0.9 / 60);
    say(`  old layout: ${oldPerPoint.toFixed(1)} bytes a point with its index; a year of the same feed (${Math.round(pointsPerTokenYear)} points a token) = ${Math.round(oldPerPoint * pointsPerTokenYear)} bytes per token-year`);

    // Candles over HTTP through an API process.
    const one = event('bench-one', 'One market', 'Crypto', ['One?']);
    const ten = event('bench-ten', 'Ten markets', 'Crypto', Array.from({ length: 10 }, (_, i) => `Q${i}?`));
    await db.query(sql`insert into events (id, slug, title, category) values ('e-one', 'bench-one', 'One', 'Crypto'), ('e-ten', 'bench-ten', 'Ten', 'Crypto')`);
    const markets = [...one.markets.map((m) => ({ id: m.id, event: 'e-one' })), ...ten.markets.map((m) => ({ id: m.id, event: 'e-ten' }))];
    for (const [i, m] of markets.entries()) {
      // Series 1.. are the movers: the event's markets are busy ones.
      await db.query(sql`insert into markets (id, event_id, condition_id, position, question) values (${m.id}, ${m.event}, ${'c' + i}, ${i}, 'Q')`);
      await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) select ${m.id}, 0, 'Yes', token_id from series where id = ${i + 1}::int`);
      await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values (${m.id}, 1, 'No', ${'no' + i})`);
    }
    const tx = redis.multi();
    queueSnapshotWrites(tx, prefix, [one, ten].map((e) => ({ name: `event:${e.slug}` as const, body: JSON.stringify({ event: e }), etag: `"${e.slug}"` })), Date.now());
    await tx.exec();
    api = startApi({ PORT: String(PORT), DATABASE_URL: dbUrl, REDIS_URL: redisUrl, REDIS_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: 'warn', API_PROCESSES: '1' });
    const base = `http://127.0.0.1:${PORT}`;
    await until('the API answers candles', async () => (await fetch(`${base}/api/v1/markets/bench-one/candles`)).status === 200, { timeoutMs: 60_000 });
    const windows = [
      { name: '1d at 1m', q: `interval=1m&start=${NOW - DAY}&end=${NOW}` },
      { name: '60d at 1h', q: `interval=1h&start=${NOW - 60 * DAY}&end=${NOW}` },
      { name: '1y at 1d', q: `interval=1d&start=${NOW - 365 * DAY}&end=${NOW}` },
    ];
    const latencies: number[] = [];
    for (const w of windows) {
      for (const slug of ['bench-one', 'bench-ten']) {
        const mine: number[] = [];
        let candles = 0;
        for (let i = 0; i < REQUESTS; i++) {
          const t0 = performance.now();
          const res = await fetch(`${base}/api/v1/markets/${slug}/candles?${w.q}`);
          const text = await res.text();
          mine.push(performance.now() - t0);
          if (res.status !== 200) throw new Error(`${slug} ${w.name}: ${res.status} ${text.slice(0, 200)}`);
          if (i === 0) candles = (JSON.parse(text) as { markets: Array<{ candles: unknown[] }> }).markets.reduce((n, m) => n + m.candles.length, 0);
        }
        mine.sort((a, b) => a - b);
        latencies.push(...mine);
        say(`  candles ${w.name.padEnd(10)} ${slug === 'bench-one' ? '1 market ' : '10 markets'} ${String(candles).padStart(6)} candles  p50=${quantile(mine, 0.5).toFixed(1)} ms  p99=${quantile(mine, 0.99).toFixed(1)} ms`);
      }
    }
    latencies.sort((a, b) => a - b);

    // The max history range of a batch of 250 markets, as the worker's builder reads it.
    const tier = HISTORY_RANGE_TIERS.max;
    const batch = Array.from({ length: Math.min(250, N) }, (_, i) => i + 1);
    const maxRead = await timed('history max: 250 markets from the 1d tier', () => readCandles(db, { series: batch, step: tier.step, bucket: tier.bucket, start: 0, end: NOW + 1, now: NOW }));

    const feedRate = N * (0.1 / 5 + 0.9 / 60);
    say(
      `bench:history tokens=${N} bytes_per_token_year=${perTokenYear} rollup_points_per_s=${Math.round(rollupRate)} feed_points_per_s=${Math.round(feedRate)} candles_p50_ms=${quantile(latencies, 0.5).toFixed(1)} candles_p99_ms=${quantile(latencies, 0.99).toFixed(1)} history_max_rebuild_ms=${Math.round(maxRead.ms)}`,
    );
  } finally {
    if (api) {
      const exited = new Promise((resolve) => api?.once('exit', resolve));
      api.kill('SIGTERM');
      await exited;
    }
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
    await db.dispose();
    await dropDatabase(dbUrl);
  }
}

await main();
