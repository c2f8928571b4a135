/**
 * `npm run soak -- --minutes N`: runs the whole stack as `npm start` does (scripts/start.ts, with its
 * own ports, database and Redis prefix so it runs beside anything else), the demo crowd at ten times
 * its rate, and a steady read load from outside over many client addresses (scripts/lib/soak/load.ts),
 * and samples every process, Redis and Postgres. At the end it prints one line per process and store:
 *   soak <name> rss_start_mb= rss_end_mb= slope_mb_per_h= heap_used_slope_mb_per_h= …
 * (slopes by least squares over the samples after the warm-up), and writes samples.csv, chart.svg and
 * summary.txt to its output folder. A benchmark, not a test: it never fails on a slope.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync, appendFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { createRedis } from '@pm/shared/redis';
// Loaded up front: a Ctrl-C from a terminal reaches tsx's compiler too, and a module first imported
// while the run ends could no longer be compiled.
import { deleteKeysWithPrefix } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { parseCli, positiveOption, usageError } from './lib/cli.js';
import { renderChart, type Panel } from './lib/soak/chart.js';
import { percentile, startLoad } from './lib/soak/load.js';
import { PROCESS_MEASURES, processRows, readProbes, sampleRedis, samplePostgres, scrapeService, type ProcessMeasures, type Row } from './lib/soak/sample.js';
import { fmt, summarise, type Point } from './lib/soak/stats.js';

/** How often the soak vacuums its database when the server's autovacuum is off. */
const VACUUM_EVERY_MS = 5 * 60_000;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const USAGE = `usage: npm run soak -- [--minutes N] [options]

Runs the stack as npm start does (simulator, ingestor, worker, API, the demo crowd at ten times its
rate) on its own ports, database and Redis prefix, puts a steady read load on every endpoint from many
client addresses (streams with reconnects included), samples every process, Redis and Postgres, and
prints one line per process and store with its start, end and slope after the warm-up. Writes
samples.csv, chart.svg and summary.txt to the output folder.

options:
  --minutes N          how long to run, default 60
  --sample-seconds N   between samples, default 30
  --warmup-minutes N   samples before this are left out of the slopes, default 20 (at most a third of the run)
  --rps N              read requests a second, default 100
  --clients N          client addresses the reads come from (X-Forwarded-For), default 120
  --streams N          streams held open (each resumed with Last-Event-ID every ~60 s), default 8
  --crowd-rate N       the demo crowd's speed-up, default 10
  --closed-retention-hours N  CLOSED_RETENTION_HOURS for the run, default 0.25 (the stack's is 24): short,
                       so that a run of an hour or two shows closed events' keys leave Redis
  --port-base N        PORT=N, SIM_PORT=N+1, INGESTOR_PORT=N+2, WORKER_PORT=N+3, API_METRICS_PORT=N+4; default 5300
  --out DIR            output folder, default .data/soak/<start time>
  --heap-profile N     keep V8's sampling heap profiler running in every process and write what it
                       holds every N minutes to probe/<pid>-<minutes>.heapprofile (off by default)
  --keep               keep the soak's database and Redis keys afterwards (default: dropped)
  -h, --help           this text

Environment: DATABASE_URL names the Postgres server (its database part is replaced by soak_<time>),
REDIS_URL the Redis; NODE_OPTIONS passes on to every process.`;

const MEASURES = PROCESS_MEASURES;
const SERVICES = ['api', 'ingestor', 'worker'] as const;
const PROBED = ['exchange-sim', 'crowd', 'run-line'] as const;

function say(line: string) {
  process.stdout.write(`${line}\n`);
}

async function main() {
  const spec = { command: 'soak', usage: USAGE };
  const { values } = parseCli({
    ...spec,
    options: {
      minutes: { type: 'string' },
      'sample-seconds': { type: 'string' },
      'warmup-minutes': { type: 'string' },
      rps: { type: 'string' },
      clients: { type: 'string' },
      streams: { type: 'string' },
      'crowd-rate': { type: 'string' },
      'port-base': { type: 'string' },
      'closed-retention-hours': { type: 'string' },
      out: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'heap-profile': { type: 'string' },
    },
  });
  const minutes = positiveOption(spec, 'minutes', values.minutes, 60, 'number');
  const sampleMs = positiveOption(spec, 'sample-seconds', values['sample-seconds'], 30, 'number') * 1000;
  const warmupMs = Math.min(positiveOption(spec, 'warmup-minutes', values['warmup-minutes'], 20, 'number'), minutes / 3) * 60_000;
  const rps = positiveOption(spec, 'rps', values.rps, 100, 'number');
  const clients = positiveOption(spec, 'clients', values.clients, 120, 'integer');
  const streams = positiveOption(spec, 'streams', values.streams, 8, 'integer');
  const crowdRate = positiveOption(spec, 'crowd-rate', values['crowd-rate'], 10, 'number');
  const retentionHours = positiveOption(spec, 'closed-retention-hours', values['closed-retention-hours'], 0.25, 'number');
  const heapProfileMinutes = values['heap-profile'] === undefined ? null : positiveOption(spec, 'heap-profile', values['heap-profile'], 30, 'number');
  const portBase = positiveOption(spec, 'port-base', values['port-base'], 5300, 'integer');
  if (portBase > 65_530) usageError(spec, '--port-base must leave room for five ports');
  // The rate limit is per client address: keep each address well under it, or the load measures 429s.
  if ((rps * 60) / clients > 100) usageError(spec, `--rps ${rps} over ${clients} clients is ${Math.round((rps * 60) / clients)} requests a minute each, past the rate limit (120): add --clients`);

  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  const out = path.resolve(values.out ?? path.join(root, '.data', 'soak', stamp));
  const probeDir = path.join(out, 'probe');
  mkdirSync(probeDir, { recursive: true });
  const id = `soak_${stamp.replace('-', '_')}`.toLowerCase();
  const serverUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${id}`;
  const prefix = id.replace(/_/g, '');
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
  const ports = { api: portBase, sim: portBase + 1, ingestor: portBase + 2, worker: portBase + 3, metrics: portBase + 4 };
  const metricsUrl: Record<(typeof SERVICES)[number], string> = {
    api: `http://127.0.0.1:${ports.metrics}/metrics`,
    ingestor: `http://127.0.0.1:${ports.ingestor}/metrics`,
    worker: `http://127.0.0.1:${ports.worker}/metrics`,
  };

  say(`soak: ${minutes} min, a sample every ${sampleMs / 1000} s, warm-up ${(warmupMs / 60_000).toFixed(1)} min; ${rps} reads/s over ${clients} addresses, ${streams} streams, crowd ×${crowdRate}, closed events kept ${retentionHours} h`);
  say(`soak: database ${id}, Redis prefix ${prefix}, API on http://127.0.0.1:${ports.api}; output in ${out}`);

  const probe = pathToFileURL(path.join(root, 'scripts', 'lib', 'soak', 'probe.mjs')).href;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(ports.api),
    SIM_PORT: String(ports.sim),
    INGESTOR_PORT: String(ports.ingestor),
    WORKER_PORT: String(ports.worker),
    API_METRICS_PORT: String(ports.metrics),
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    TRUST_PROXY: '1',
    CROWD_RATE: String(crowdRate),
    CLOSED_RETENTION_HOURS: String(retentionHours),
    PRETTY_LOGS: '0',
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${probe}`.trim(),
    SOAK_PROBE_DIR: probeDir,
    SOAK_PROBE_MS: String(Math.min(sampleMs, 10_000)),
    ...(heapProfileMinutes === null ? {} : { SOAK_HEAP_PROFILE_MS: String(heapProfileMinutes * 60_000) }),
  };
  const logFile = path.join(out, 'stack.log');
  writeFileSync(logFile, '');
  const stack = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  stack.stdout.on('data', (chunk: Buffer) => appendFileSync(logFile, chunk));
  stack.stderr.on('data', (chunk: Buffer) => appendFileSync(logFile, chunk));
  let stackExited = false;
  stack.on('exit', (code, signal) => {
    stackExited = true;
    if (!stopping) say(`soak: the run line exited early (${signal ?? `code ${code}`}); see ${logFile}`);
  });
  let stopping = false;
  const stopStack = async () => {
    stopping = true;
    if (stackExited) return;
    const exited = new Promise<void>((resolve) => stack.once('exit', () => resolve()));
    stack.kill('SIGTERM');
    const timer = setTimeout(() => stack.kill('SIGKILL'), 45_000);
    await exited;
    clearTimeout(timer);
  };
  // The first Ctrl-C once sampling has begun ends the run early with its summary, CSV and picture of
  // what was sampled; before that, or a second time, it stops the stack and exits.
  // One Ctrl-C can arrive twice (the terminal signals the whole process group, and tsx relays it to
  // its child): a second one within two seconds is the same.
  let sampling = false;
  let interrupted = false;
  let interruptedAt = 0;
  let wake: () => void = () => {};
  process.on('SIGINT', () => {
    if (interrupted && Date.now() - interruptedAt < 2_000) return;
    if (sampling && !interrupted) {
      interrupted = true;
      interruptedAt = Date.now();
      say('soak: interrupted; summarising what was sampled (Ctrl-C again to stop at once)');
      wake();
      return;
    }
    say('soak: interrupted; stopping the stack');
    void stopStack().then(() => process.exit(130));
  });

  const ready = await until(
    'the API to be ready',
    async () => {
      if (stackExited) throw new Error('the run line exited');
      const res = await fetch(`http://127.0.0.1:${ports.api}/readyz`).catch(() => null);
      return res?.ok === true;
    },
    { timeoutMs: 180_000, everyMs: 1_000 },
  ).then(
    () => true,
    () => false,
  );
  if (!ready) {
    say(`soak: the stack did not become ready in 3 minutes; see ${logFile}`);
    await stopStack();
    process.exit(1);
  }

  const redis = createRedis(redisUrl, { maxRetriesPerRequest: 3 });
  const db = new pg.Client({ connectionString: dbUrl.toString() });
  await db.connect();
  // A server with autovacuum off (this project's CI machines run so) never reclaims the dead rows of
  // the tables a busy stack rewrites all day (window records, outbox, board rows): the database would
  // grow by its churn, which no production server shows. The soak then vacuums its own database as
  // autovacuum would, on a connection of its own, and says so.
  const vacuum = new pg.Client({ connectionString: dbUrl.toString() });
  await vacuum.connect();
  const autovacuum = (await vacuum.query<{ autovacuum: string }>('show autovacuum')).rows[0]?.autovacuum;
  let vacuumTimer: NodeJS.Timeout | undefined;
  if (autovacuum === 'off') {
    say(`soak: this Postgres runs with autovacuum off; the soak runs VACUUM (ANALYZE) on ${id} every ${VACUUM_EVERY_MS / 60_000} min in its stead`);
    vacuumTimer = setInterval(() => void vacuum.query('vacuum (analyze)').catch((err: Error) => say(`soak: vacuum failed: ${err.message}`)), VACUUM_EVERY_MS);
  }

  const load = startLoad({ base: `http://127.0.0.1:${ports.api}`, rps, clients, streams, streamResumeMs: 60_000 });
  const t0 = Date.now();
  const samples: Array<{ t: number; rows: Row[] }> = [];
  const pids = new Map<string, number>();
  const restarts = new Map<string, number>();
  const csv = path.join(out, 'samples.csv');
  writeFileSync(csv, 'elapsed_s,time,name,measure,value\n');

  async function sample(): Promise<void> {
    const t = Date.now() - t0;
    const rows: Row[] = [];
    const probes = readProbes(probeDir);
    const measured = new Map<string, ProcessMeasures>();
    for (const name of SERVICES) {
      const m = await scrapeService(metricsUrl[name]);
      const probed = probes.get(`probe:${name}`);
      // The services' own /metrics, with the probe's breakdown of their RSS by mapping.
      if (m) measured.set(name, { ...m, pid: probed?.pid ?? null, malloc_mb: probed?.malloc_mb, anon_mb: probed?.anon_mb, file_mb: probed?.file_mb });
    }
    for (const name of PROBED) {
      const m = probes.get(name);
      if (m) measured.set(name, m);
    }
    for (const [name, m] of measured) {
      rows.push(...processRows(name, m));
      if (m.pid !== null) {
        const before = pids.get(name);
        if (before !== undefined && before !== m.pid) restarts.set(name, (restarts.get(name) ?? 0) + 1);
        pids.set(name, m.pid);
      }
    }
    rows.push(...(await sampleRedis(redis, prefix).catch(() => [])));
    rows.push(...(await samplePostgres(db).catch(() => [])));
    const latencies = load.takeLatencies();
    const c = load.counts;
    rows.push(
      { name: 'reads', measure: 'requests', value: c.requests },
      { name: 'reads', measure: 'not_ok', value: Object.values(c.failures).reduce((a, b) => a + b, 0) + c.errors },
      { name: 'reads', measure: 'p99_ms', value: percentile(latencies, 99) ?? NaN },
      { name: 'stream', measure: 'gaps', value: c.stream.gaps + c.stream.drops },
    );
    samples.push({ t, rows });
    const iso = new Date(t0 + t).toISOString();
    appendFileSync(csv, rows.map((r) => `${(t / 1000).toFixed(0)},${iso},${r.name},${r.measure},${Number.isFinite(r.value) ? r.value.toFixed(3) : ''}`).join('\n') + '\n');
    const line = (name: string) => rows.find((r) => r.name === name && r.measure === 'rss_mb')?.value;
    say(
      `soak: ${(t / 60_000).toFixed(1)} min  rss api=${fmt(line('api') ?? null, 0)} ingestor=${fmt(line('ingestor') ?? null, 0)} worker=${fmt(line('worker') ?? null, 0)} ` +
        `sim=${fmt(line('exchange-sim') ?? null, 0)} crowd=${fmt(line('crowd') ?? null, 0)} MB  redis=${fmt(rows.find((r) => r.name === 'redis' && r.measure === 'used_mb')?.value ?? null)} MB  ` +
        `reads=${c.requests} not_ok=${rows[rows.length - 3]!.value} stream_gaps=${c.stream.gaps + c.stream.drops}`,
    );
  }

  const endAt = t0 + minutes * 60_000;
  sampling = true;
  await sample();
  // On a fixed cadence from the start, whatever one sample took.
  for (let k = 1; !stackExited && !interrupted; k++) {
    const at = Math.min(t0 + k * sampleMs, endAt);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, at - Date.now()));
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    // Interrupted: a terminal's Ctrl-C reaches the stack too, so what follows is its shutdown, not the soak.
    if (interrupted) break;
    await sample();
    if (at >= endAt) break;
  }
  if (interrupted) say(`soak: ended after ${((Date.now() - t0) / 60_000).toFixed(1)} of ${minutes} min`);
  clearInterval(vacuumTimer);
  await load.stop();
  await stopStack();

  const report = summaryLines(samples, warmupMs, restarts);
  const c = load.counts;
  const notOk = Object.values(c.failures).reduce((a, b) => a + b, 0);
  const elapsedS = (Date.now() - t0) / 1000;
  report.push(
    `soak reads requests=${c.requests} rps=${(c.requests / elapsedS).toFixed(1)} not_2xx_304=${notOk} no_answer=${c.errors} skipped=${c.skipped} statuses=${JSON.stringify(c.byStatus)}` +
      (notOk ? ` failures=${JSON.stringify(c.failures)}` : ''),
    `soak stream opens=${c.stream.opens} resumes=${c.stream.resumes} messages=${c.stream.messages} gaps=${c.stream.gaps} drops=${c.stream.drops} refused=${c.stream.refused}`,
  );
  for (const line of report) say(line);
  writeFileSync(path.join(out, 'summary.txt'), `${report.join('\n')}\n`);
  writeFileSync(path.join(out, 'chart.svg'), renderChart({ title: `soak ${stamp}: ${minutes} min, ${rps} reads/s, crowd ×${crowdRate}`, panels: panels(samples), spanMs: minutes * 60_000, warmupMs }));
  say(`soak: samples in ${csv}, picture in ${path.join(out, 'chart.svg')}, the stack's log in ${logFile}`);

  await db.end();
  await vacuum.end();
  if (!values.keep) {
    const admin = new pg.Client({ connectionString: serverUrl.toString() });
    await admin.connect();
    await admin.query(`drop database if exists ${id} with (force)`);
    await admin.end();
    await deleteKeysWithPrefix(redis, prefix);
    say(`soak: dropped database ${id} and the keys of prefix ${prefix} (--keep keeps them)`);
  }
  await redis.quit();
}

function series(samples: ReadonlyArray<{ t: number; rows: Row[] }>, name: string, measure: string): Point[] {
  const out: Point[] = [];
  for (const s of samples) {
    const row = s.rows.find((r) => r.name === name && r.measure === measure);
    if (row && Number.isFinite(row.value)) out.push({ t: s.t, value: row.value });
  }
  return out;
}

function names(samples: ReadonlyArray<{ rows: Row[] }>, match: (name: string) => boolean): string[] {
  return [...new Set(samples.flatMap((s) => s.rows.map((r) => r.name)).filter(match))];
}

/** The printed lines: one per process, Redis (and each key family that grew), Postgres (and each table that grew). */
export function summaryLines(samples: ReadonlyArray<{ t: number; rows: Row[] }>, warmupMs: number, restarts: ReadonlyMap<string, number>): string[] {
  const lines: string[] = [];
  for (const name of [...SERVICES, ...PROBED]) {
    const s = Object.fromEntries(MEASURES.map((m) => [m, summarise(series(samples, name, m), warmupMs)]));
    if (s.rss_mb!.start === null) continue;
    lines.push(
      `soak ${name} rss_start_mb=${fmt(s.rss_mb!.start)} rss_end_mb=${fmt(s.rss_mb!.end)} slope_mb_per_h=${fmt(s.rss_mb!.slope)} ` +
        `heap_used_start_mb=${fmt(s.heap_used_mb!.start)} heap_used_end_mb=${fmt(s.heap_used_mb!.end)} heap_used_slope_mb_per_h=${fmt(s.heap_used_mb!.slope)} ` +
        `heap_total_end_mb=${fmt(s.heap_total_mb!.end)} heap_total_slope_mb_per_h=${fmt(s.heap_total_mb!.slope)} ` +
        `external_end_mb=${fmt(s.external_mb!.end)} external_slope_mb_per_h=${fmt(s.external_mb!.slope)} ` +
        `loop_p99_start_ms=${fmt(s.loop_p99_ms!.start)} loop_p99_end_ms=${fmt(s.loop_p99_ms!.end)} loop_p99_max_ms=${fmt(s.loop_p99_ms!.max)} ` +
        `handles_start=${fmt(s.handles!.start, 0)} handles_end=${fmt(s.handles!.end, 0)} restarts=${restarts.get(name) ?? 0}` +
        (s.malloc_mb!.start === null
          ? ''
          : ` malloc_end_mb=${fmt(s.malloc_mb!.end)} malloc_slope_mb_per_h=${fmt(s.malloc_mb!.slope)} anon_end_mb=${fmt(s.anon_mb!.end)} anon_slope_mb_per_h=${fmt(s.anon_mb!.slope)} file_end_mb=${fmt(s.file_mb!.end)} file_slope_mb_per_h=${fmt(s.file_mb!.slope)}`),
    );
  }
  const used = summarise(series(samples, 'redis', 'used_mb'), warmupMs);
  const keys = summarise(series(samples, 'redis', 'keys'), warmupMs);
  const own = summarise(series(samples, 'redis', 'stack_mb'), warmupMs);
  lines.push(
    `soak redis stack_start_mb=${fmt(own.start)} stack_end_mb=${fmt(own.end)} stack_slope_mb_per_h=${fmt(own.slope)} ` +
      `used_start_mb=${fmt(used.start)} used_end_mb=${fmt(used.end)} slope_mb_per_h=${fmt(used.slope)} keys_start=${fmt(keys.start, 0)} keys_end=${fmt(keys.end, 0)} keys_slope_per_h=${fmt(keys.slope, 0)}`,
  );
  for (const name of names(samples, (n) => n.startsWith('redis:')).sort()) {
    const k = summarise(series(samples, name, 'keys'), warmupMs);
    const mb = summarise(series(samples, name, 'mb'), warmupMs);
    lines.push(
      `soak ${name} keys_start=${fmt(k.start, 0)} keys_end=${fmt(k.end, 0)} keys_slope_per_h=${fmt(k.slope, 0)} ` +
        `mb_start=${fmt(mb.start, 2)} mb_end=${fmt(mb.end, 2)} mb_slope_per_h=${fmt(mb.slope, 2)}`,
    );
  }
  const size = summarise(series(samples, 'postgres', 'size_mb'), warmupMs);
  lines.push(`soak postgres size_start_mb=${fmt(size.start)} size_end_mb=${fmt(size.end)} slope_mb_per_h=${fmt(size.slope)}`);
  const tables = names(samples, (n) => n.startsWith('postgres:'))
    .map((name) => ({ name, s: summarise(series(samples, name, 'size_mb'), warmupMs) }))
    .filter((x) => (x.s.end ?? 0) >= 1 || Math.abs(x.s.slope ?? 0) >= 1)
    .sort((a, b) => (b.s.end ?? 0) - (a.s.end ?? 0));
  for (const { name, s } of tables) lines.push(`soak ${name} size_start_mb=${fmt(s.start)} size_end_mb=${fmt(s.end)} slope_mb_per_h=${fmt(s.slope)}`);
  return lines;
}

function panels(samples: ReadonlyArray<{ t: number; rows: Row[] }>): Panel[] {
  const procs = [...SERVICES, ...PROBED].filter((n) => series(samples, n, 'rss_mb').length > 0);
  const per = (measure: string) => procs.map((label) => ({ label, points: series(samples, label, measure) }));
  const families = names(samples, (n) => n.startsWith('redis:'))
    .map((label) => ({ label: label.slice(6), points: series(samples, label, 'keys') }))
    .sort((a, b) => (b.points.at(-1)?.value ?? 0) - (a.points.at(-1)?.value ?? 0))
    .slice(0, 8);
  const tables = names(samples, (n) => n.startsWith('postgres:'))
    .map((label) => ({ label: label.slice(9), points: series(samples, label, 'size_mb') }))
    .sort((a, b) => (b.points.at(-1)?.value ?? 0) - (a.points.at(-1)?.value ?? 0))
    .slice(0, 7);
  return [
    { title: 'RSS', unit: 'MB', series: per('rss_mb') },
    { title: 'JS heap used', unit: 'MB', series: per('heap_used_mb') },
    { title: 'JS heap total', unit: 'MB', series: per('heap_total_mb') },
    { title: 'Event-loop delay p99', unit: 'ms', series: per('loop_p99_ms') },
    {
      title: 'Redis memory: server, this stack, largest 6 families',
      unit: 'MB',
      series: [
        { label: 'server (all stacks)', points: series(samples, 'redis', 'used_mb') },
        { label: 'this stack', points: series(samples, 'redis', 'stack_mb') },
        ...names(samples, (n) => n.startsWith('redis:'))
          .map((label) => ({ label: label.slice(6), points: series(samples, label, 'mb') }))
          .sort((a, b) => (b.points.at(-1)?.value ?? 0) - (a.points.at(-1)?.value ?? 0))
          .slice(0, 6),
      ],
    },
    { title: 'Redis keys by family (largest 8)', unit: 'keys', series: families },
    { title: 'Postgres size', unit: 'MB', series: [{ label: 'database', points: series(samples, 'postgres', 'size_mb') }, ...tables] },
    { title: 'Read latency p99 (per sample)', unit: 'ms', series: [{ label: 'reads', points: series(samples, 'reads', 'p99_ms') }] },
  ];
}

main().catch((err: unknown) => {
  process.stderr.write(`soak failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
