/**
 * npm run bench:history — price history at a year's steady state, in a database of its own:
 *   - every tier as retention leaves it after a year, generated set-based (generate_series) on two
 *     connections: 1d and 1h candles for 365 days, 5m for 60 days, 1m for 7 days (each row's arrays
 *     one of 1,024 hashed variants: copied, not computed slot by slot; each row is still stored and
 *     compressed on its own); plus 48 hours of raw points with 10 % of tokens moving every 5 s and the
 *     rest at the one-a-minute floor;
 *   - beside it, the old layout (one row per point, text token id, numeric chance) holding the same
 *     48 hours of points of a sample of tokens (every (N/1000)th, so at most 1,000 and the same share
 *     of movers), measured in the same run and taken to a year per token;
 *   - the rollup over closed hours of those raw points (points per second of one process);
 *   - candles over HTTP through an API process (this process is the client): 1d at 1m, 60d at 1h and
 *     1y at 1d, for one market and for an event of ten. Every request asks a window of its own (its
 *     start one step earlier than the one before, back to the first every 60 requests as its end
 *     moves a step on), reaching past now: live data, which no cache holds, so every figure is a
 *     read from Postgres, a body made and encoded. The client accepts br
 *     and gzip and decodes each body whole; one unmeasured request per window warms the process.
 *     Then, apart from those figures: the heaviest window through Node's fetch, and one closed
 *     (immutable) window asked again and again: the ready cache's answer;
 *   - the `max` history range of a batch of 250 markets read from the 1d tier.
 * Prints the storage by tier, then
 *   bench:history tokens=<n> bytes_per_token_year=<n> rollup_points_per_s=<n> feed_points_per_s=<n> candles_p50_ms=<n> candles_p99_ms=<n> history_max_rebuild_ms=<n>
 *   BENCH_TOKENS (default 20000), BENCH_REQUESTS per window (default 300), BENCH_PORT (default 43090)
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { Redis } from 'ioredis';
import { createDb, dropDatabase, ensureDatabase, migrate, sql, type Db } from '@pm/shared/db';
import { HISTORY_RANGE_TIERS, readCandles, runRollup } from '@pm/shared/history';
import { queueSnapshotWrites } from '@pm/shared/redis';
import { deleteKeysWithPrefix, testServices, uniqueSuffix } from '@pm/shared/testing';
import { event } from '../../services/api/src/testing/fixtures.js';
import { until } from '@pm/shared/wait';
import { benchCli } from './cli.js';
import { generateTiers } from './candle-tiers.js';

benchCli('bench:history', `usage: npm run bench:history
A year of price history for BENCH_TOKENS tokens at steady state (every tier, generated in SQL, and 48
hours of raw points), the old one-row-a-point layout beside it, the rollup's rate, candles over HTTP
through an API process and the max history range; prints the storage by tier and
  bench:history tokens=<n> bytes_per_token_year=<n> rollup_points_per_s=<n> feed_points_per_s=<n> candles_p50_ms=<n> candles_p99_ms=<n> history_max_rebuild_ms=<n>
Settings (environment):
  BENCH_TOKENS    tokens (default 20000)
  BENCH_REQUESTS  requests per window and market count (default 300)
  BENCH_PORT      the API's port (default 43090)
  --help          this text`);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const N = Number(process.env.BENCH_TOKENS ?? 20_000);
// 300: a p99 of 100 requests is their slowest one.
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const PORT = Number(process.env.BENCH_PORT ?? 43_090);
const DAY = 86_400;
const say = (line: string) => process.stdout.write(`${line}\n`);
// The clock of the generated world: now, on an hour plus 30 minutes.
const NOW = Math.floor(Date.now() / 1000 / 3600) * 3600 + 1_800;
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

/** [first, last] series ranges of about equal points for the two generating connections (movers apart from the rest). */
const HALF = Math.floor(MOVERS / 2);
const REST_HALF = MOVERS + Math.floor((N - MOVERS) / 2);
const LANES: ReadonlyArray<ReadonlyArray<readonly [number, number]>> = [
  [[1, HALF], [MOVERS + 1, REST_HALF]],
  [[HALF + 1, MOVERS], [REST_HALF + 1, N]],
];

/** Raw points of series first..last over [RAW_FROM, NOW): movers every 5 s, the rest every 60 s. */
async function generateRaw(db: Db, first: number, last: number): Promise<void> {
  await db.query(sql`
    insert into raw_points (series, t, chance)
    select s, t, (3000 + (hashint8(s::bigint * 1000003 + t) & 4095))::float8 / 10000
    from generate_series(${first}::int, ${last}::int) s
    cross join lateral generate_series(${RAW_FROM}::int, ${NOW - 1}::int, case when s <= ${MOVERS}::int then 5 else 60 end) t
  `);
}

/** Raw points of series first..last, as generateRaw makes them. */
function rawPointsOf(first: number, last: number): number {
  const movers = Math.max(0, Math.min(last, MOVERS) - first + 1);
  const rest = Math.max(0, last - Math.max(first, MOVERS + 1) + 1);
  return movers * Math.ceil((NOW - RAW_FROM) / 5) + rest * Math.ceil((NOW - RAW_FROM) / 60);
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
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'services/api/src/main.ts')], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
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
    // The chance's candles (what the history's reads here are timed on); the tiers with volume and
    // quotes are measured by bench:trades (candle-tiers.ts).
    const D = 86_400;
    await generateTiers(db, N, NOW, false, timed);
    // 48 h of raw points: movers every 5 s, the rest every 60 s; each connection half the movers and half the rest.
    for (let d = Math.floor(RAW_FROM / D); d <= Math.floor(NOW / D) + 2; d++) await db.query(sql`select history_raw_partition(${d}::int)`);
    await timed('raw points: 48 hours', () => Promise.all(LANES.map(async (ranges) => {
      for (const [first, last] of ranges) await generateRaw(db, first, last);
    })));
    const rawPoints = rawPointsOf(1, N);
    // The old layout holding the same points of a sample of tokens: every `every`th, so the movers' share is the same.
    const every = Math.max(1, Math.floor(N / 1_000));
    const sampled = Math.floor(N / every);
    await db.query(sql`create table price_points_old (token_id text not null, t timestamptz not null, chance numeric not null check (chance between 0 and 1), primary key (token_id, t))`);
    await timed(`old layout: the same 48 hours of ${sampled} tokens, one row a point`, () =>
      db.query(sql`
        insert into price_points_old select s.token_id, to_timestamp(r.t), r.chance::numeric(6,4)
        from generate_series(${every}::int, ${N}::int, ${every}::int) g(id) join series s on s.id = g.id join raw_points r on r.series = g.id
      `),
    );
    const oldPoints: Array<{ n: number }> = await db.query(sql`select count(*)::int as n from price_points_old`);
    // The planner's statistics; no vacuum: nothing is dead yet, and a vacuum of tens of GB takes minutes.
    await db.query(sql`analyze`);

    // Rollup: the hours of the raw window, from its start, for up to 3 hours of slices; then the mark
    // as steady state leaves it (the last closed hour).
    await db.query(sql`insert into history_progress (name, done_until) values ('rollup', ${RAW_FROM + 1_800}::int) on conflict (name) do update set done_until = excluded.done_until`);
    const rolled = await timed('rollup: 3 closed hours', () => runRollup(db, { now: NOW, maxSlices: 3 }));
    const rollupRate = rolled.value.points / (rolled.ms / 1000);
    await db.query(sql`update history_progress set done_until = ${NOW - 1_800 - 3600}::int`);
    await db.query(sql`analyze`);

    // Storage: every tier and its indexes; per tier, the candles' share by the bytes of their rows.
    const all = await sizes(db);
    const total = (pred: (n: string) => boolean) => all.filter((r) => pred(r.name)).reduce((s, r) => s + r.bytes, 0);
    const rawBytes = total((n) => n.startsWith('raw_points_d'));
    const candleBytes = total((n) => n === 'candles');
    const seriesBytes = total((n) => n === 'series');
    const oldBytes = total((n) => n === 'price_points_old');
    // Every series has the same rows: the shares of the sample's rows are everyone's.
    const shares: Array<{ step: number; bytes: string }> = await db.query(
      sql`select step, sum(pg_column_size(k.*))::text as bytes from candles k where series = any(${Array.from({ length: sampled }, (_, i) => (i + 1) * every)}::int[]) group by step order by step`,
    );
    const shareTotal = shares.reduce((s, r) => s + Number(r.bytes), 0);
    say(`storage by tier (bytes per token, indexes and TOAST shared out by the row bytes of ${sampled} tokens):`);
    for (const r of shares) say(`  ${{ 60: '1m (7 d)', 300: '5m (60 d)', 3600: '1h (365 d)', 86400: '1d (365 d)' }[r.step]?.padEnd(12)} ${Math.round((candleBytes * Number(r.bytes)) / shareTotal / N)}`);
    say(`  ${'raw (48 h)'.padEnd(12)} ${Math.round(rawBytes / N)}  (${rawPoints} points)`);
    say(`  ${'series'.padEnd(12)} ${Math.round(seriesBytes / N)}`);
    const perTokenYear = Math.round((rawBytes + candleBytes + seriesBytes) / N);
    const oldPerPoint = oldBytes / (oldPoints[0]?.n ?? NaN);
    const pointsPerTokenYear = 365 * DAY * (0.1 / 5 + 0.9 / 60);
    say(
      `  old layout: ${oldPerPoint.toFixed(1)} bytes a point with its index (measured on ${sampled} tokens, ${Math.floor(MOVERS / every)} of them moving: ${oldPoints[0]?.n} points); a year of the same feed (${Math.round(pointsPerTokenYear)} points a token) = ${Math.round(oldPerPoint * pointsPerTokenYear)} bytes per token-year`,
    );

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
    // The generated tens of GB written out before anything is timed over HTTP.
    await timed('checkpoint', () => db.query(sql`checkpoint`));
    api = startApi({ PORT: String(PORT), DATABASE_URL: dbUrl, REDIS_URL: redisUrl, REDIS_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: 'warn', API_PROCESSES: '1' });
    const base = `http://127.0.0.1:${PORT}`;
    // An API that exits (its port taken, say) fails the run at once rather than after the wait.
    const started = api;
    const early = new Promise<never>((_, reject) => started.once('exit', (code) => reject(new Error(`the API exited (code ${code}) before answering on port ${PORT}`))));
    await Promise.race([early, until('the API answers candles', async () => (await fetch(`${base}/api/v1/markets/bench-one/candles`)).status === 200, { timeoutMs: 60_000 })]);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    /**
     * One request as a browser makes it (br or gzip accepted, the connection kept alive): its latency
     * to the last byte, decoded, and its candles. The body is decoded in one go once it is all in;
     * Node's fetch (`viaFetch`) decodes it in 16 KB steps, each a round trip to the thread pool,
     * which on this 2-core machine adds ~5 ms to a 1 MB body and 20–40 ms at its tail: the client's
     * cost, not the API's, so it is measured apart, on one window.
     */
    const ask = async (slug: string, query: string, viaFetch = false) => {
      const url = `${base}/api/v1/markets/${slug}/candles?${query}`;
      const t0 = performance.now();
      const { status, headers, text } = viaFetch ? await fetched(url) : await got(url);
      const ms = performance.now() - t0;
      if (status !== 200) throw new Error(`${slug} ${query}: ${status} ${text.slice(0, 200)}`);
      // Candles counted by their first key (a quote inside a string is escaped), not parsed: 14,000
      // objects a request would load this process's collector, which shares the machine.
      let candles = 0;
      for (let at = text.indexOf('{"t":'); at >= 0; at = text.indexOf('{"t":', at + 5)) candles++;
      return { ms, headers, candles };
    };
    const got = (url: string) =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
        http
          .get(url, { agent, headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('error', reject);
            res.on('end', () => {
              const raw = Buffer.concat(chunks);
              const coding = res.headers['content-encoding'];
              const body = coding === 'br' ? zlib.brotliDecompressSync(raw) : coding === 'gzip' ? zlib.gunzipSync(raw) : raw;
              resolve({ status: res.statusCode ?? 0, headers: res.headers, text: body.toString() });
            });
          })
          .on('error', reject);
      });
    const fetched = async (url: string) => {
      const res = await fetch(url);
      return { status: res.status, headers: Object.fromEntries(res.headers) as http.IncomingHttpHeaders, text: await res.text() };
    };
    // Each request's window is a target of its own of about the same size: its start steps back one
    // step a request, back to the first every 60, and its end (an hour or more past the generated
    // clock) steps forward at each wrap. Past now, so it is live data, never held, and the steps past
    // now add no candle (the run's clock is the wall's, at most half an hour behind the generated
    // one, moving on while the run lasts).
    const windows = [
      { name: '1d at 1m', interval: '1m', step: 60, span: DAY },
      { name: '60d at 1h', interval: '1h', step: 3600, span: 60 * DAY },
      { name: '1y at 1d', interval: '1d', step: DAY, span: 365 * DAY },
    ];
    const latencies: number[] = [];
    for (const w of windows) {
      for (const slug of ['bench-one', 'bench-ten']) {
        const query = (i: number) => `interval=${w.interval}&start=${NOW - w.span - (i % 60) * w.step}&end=${NOW + 3600 + Math.floor(i / 60) * w.step}`;
        await ask(slug, query(REQUESTS));
        const mine: number[] = [];
        const counts: number[] = [];
        for (let i = 0; i < REQUESTS; i++) {
          const { ms, headers, candles } = await ask(slug, query(i));
          if (headers['cache-control']?.includes('immutable')) throw new Error(`${slug} ${query(i)}: a live window answered as immutable`);
          mine.push(ms);
          counts.push(candles);
        }
        mine.sort((a, b) => a - b);
        latencies.push(...mine);
        const range = `${Math.min(...counts)}–${Math.max(...counts)}`;
        say(`  candles ${w.name.padEnd(10)} ${slug === 'bench-one' ? '1 market ' : '10 markets'} ${range.padStart(11)} candles  p50=${quantile(mine, 0.5).toFixed(1)} ms  p99=${quantile(mine, 0.99).toFixed(1)} ms`);
      }
    }
    latencies.sort((a, b) => a - b);
    // Apart from those: the heaviest window again through Node's fetch (see `ask`).
    {
      const query = (i: number) => `interval=1m&start=${NOW - DAY - (i % 60) * 60}&end=${NOW + 3600 + Math.floor(i / 60) * 60}`;
      await ask('bench-ten', query(REQUESTS), true);
      const viaFetch: number[] = [];
      for (let i = 0; i < REQUESTS; i++) viaFetch.push((await ask('bench-ten', query(i), true)).ms);
      viaFetch.sort((a, b) => a - b);
      say(`  candles through Node's fetch instead (1d at 1m, 10 markets): p50=${quantile(viaFetch, 0.5).toFixed(1)} ms  p99=${quantile(viaFetch, 0.99).toFixed(1)} ms`);
    }
    // Apart from those: one closed window (ended two hours before the generated clock) asked again and
    // again, answered from the ready cache after the first.
    {
      const query = `interval=1m&start=${NOW - 7_200 - DAY}&end=${NOW - 7_200}`;
      const first = await ask('bench-ten', query);
      const held: number[] = [];
      for (let i = 0; i < REQUESTS; i++) held.push((await ask('bench-ten', query)).ms);
      held.sort((a, b) => a - b);
      agent.destroy();
      say(`  candles held: one closed window asked again (1d at 1m, 10 markets, ${first.candles} candles): first ${first.ms.toFixed(1)} ms, then from the ready cache p50=${quantile(held, 0.5).toFixed(1)} ms  p99=${quantile(held, 0.99).toFixed(1)} ms`);
    }

    // The max history range of a batch of 250 markets, as the worker's builder reads it.
    const tier = HISTORY_RANGE_TIERS.max;
    const batch = Array.from({ length: Math.min(250, N) }, (_, i) => i + 1);
    const maxRead = await timed('history max: 250 markets from the 1d tier', () => readCandles(db, { series: batch, step: tier.step, bucket: tier.bucket, start: 0, end: NOW + 1, now: NOW }));

    const feedRate = N * (0.1 / 5 + 0.9 / 60);
    say(
      `bench:history tokens=${N} bytes_per_token_year=${perTokenYear} rollup_points_per_s=${Math.round(rollupRate)} feed_points_per_s=${Math.round(feedRate)} candles_p50_ms=${quantile(latencies, 0.5).toFixed(1)} candles_p99_ms=${quantile(latencies, 0.99).toFixed(1)} history_max_rebuild_ms=${Math.round(maxRead.ms)}`,
    );
  } finally {
    if (api && api.exitCode === null && api.signalCode === null) {
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
