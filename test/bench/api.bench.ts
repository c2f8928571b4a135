/**
 * npm run bench:api — the real stack against baselines serving the same bytes:
 * a bare node:http server, Fastify and bare Express (bare-server.ts), all driven by wrk (installed
 * with apt-get when missing and allowed; autocannon in its own process otherwise),
 * BENCH_CONNECTIONS (64) connections, each hot path. The API runs with everything on: rate limit (a
 * limit high enough for one client, set by config), CORS, metrics, ETag, request id. Once with one
 * API process, then with one per core. Prints per path
 *   bench:api <path> api=<req/s> raw=<req/s> ratio=<r> p99=<ms> fastify=<r> express=<r> raw_p99=<ms> slice_ratio_median=<r>
 *     api_cpu_us=<µs> raw_cpu_us=<µs> cpu_ratio=<r> feed=live
 * (fastify and express as ratios to raw) and the API's peak RSS (the sum over its processes).
 * Two measures of one thing: requests per second, which on a small machine say as much about the
 * load generator sharing the cores as about the server, and CPU per request, which does not depend
 * on how fast the client asks: each side's server processes' user + system time over a slice
 * (/proc/<pid>/stat), less what the same processes spend over as long with no load (the idle slice,
 * in the same rotation: the feed's background work), divided by the requests served; the median of
 * the slices. `cpu_ratio` is raw's CPU per request over the API's; `--check` exits 1 when a path's
 * falls below its bound (CPU_BOUND), for use before a release — a benchmark, not a test.
 * Each path is measured with the exchange feed live (the simulator moving 5,000 events' books,
 * the ingestor, worker and Postgres working beside the API on the same cores), and again, API and raw
 * baseline only, with the simulator paused (`feed=paused`: nearer the API's own cost per request on a
 * machine of its own; the stack is still up, its catalog syncs still run, and the API still holds 5,000 events).
 * The API and its peers are measured in turn (2-second slices, the order turning each slice,
 * BENCH_SECONDS each in all) so that the stack's changing background work falls on all alike; the
 * peers run on the same node binary with the API's V8 options, and `peers_in_order` says whether
 * they came out in their known order (raw ≥ Fastify ≫ bare Express) — if not, distrust the row.
 * Placement: where `taskset` is there and the API runs on fewer processes than the machine has cores,
 * the server being measured (the API's processes, or each peer in turn) has the last cores to itself
 * and wrk, the rest of the stack and this script share the others (BENCH_PLACE=0: no placement).
 * Unplaced, wrk's one thread and the stack's work land on the measured server's core too, and every
 * side is bounded by the same load generator: the ratios come out compressed towards 1 and the peers
 * out of order. Postgres and Redis are the machine's and are left where the kernel puts them.
 * The simulator keeps BENCH_EVENTS (default 5,000) open events (SIM_EVENTS), the size the API's
 * memory is judged at; the leaderboard is measured only once it has rows (the demo crowd's calls
 * settle within a minute or two), never as an empty board.
 *   BENCH_SECONDS (default 6), BENCH_CONNECTIONS (default 64), BENCH_PROCESSES (default "1,<cores>"),
 *   BENCH_EVENTS (default 5000), BENCH_PLACE (default 1), BENCH_FEED (default "live,paused"),
 *   BENCH_PEERS (default 1)
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtEntry } from '../../scripts/lib/build.js';
import { API_NODE_ARGS } from '../../scripts/lib/api-node-args.js';
import { processAlive } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';
import { LATE_POINT_SECONDS } from '@pm/shared/api';
import { freePort, startStack, type Stack } from '../support/stack.js';
import { benchCli } from './cli.js';
import { CAN_READ_CPU, cpuSeconds, measured, median } from './process-cpu.js';

const { values: cli } = benchCli(
  'bench:api',
  `usage: npm run bench:api [-- --check]
The real stack (one API process, then one per core) against a bare node:http server, Fastify and bare
Express serving the same bytes, driven by wrk (else autocannon), on each hot path; prints
  bench:api <path> api=<req/s> raw=<req/s> ratio=<r> p99=<ms> fastify=<r> express=<r> raw_p99=<ms> slice_ratio_median=<r>
    api_cpu_us=<µs> raw_cpu_us=<µs> cpu_ratio=<r> feed=live
(CPU per request: each side's server processes, less their idle background, median of the slices;
cpu_ratio is raw's over the API's), then API and raw again with the simulator paused (feed=paused),
and the API's peak RSS. Settings (environment):
  BENCH_SECONDS      seconds per target (default 6: three 2-second slices)
  BENCH_CONNECTIONS  connections (default 64)
  BENCH_PROCESSES    API process counts to run, comma list (default "1,<cores>")
  BENCH_EVENTS       open events in the simulator (default 5000)
  BENCH_PLACE        1 (default): the measured server on cores of its own, wrk and the stack on the
                     others (taskset); 0: wherever the kernel puts them
  BENCH_FEED         which phases to run, comma list of live, paused (default "live,paused")
  BENCH_PEERS        1 (default): Fastify and bare Express beside raw on the live phase; 0: raw only
  --check            exit 1 when a path's cpu_ratio is below its bound (${'0.80'}), after the run
  --help             this text`,
  { check: { type: 'boolean', default: false } },
);

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 6);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const openEvents = Number(process.env.BENCH_EVENTS ?? 5000);
const cores = availableParallelism();
const processCounts = (process.env.BENCH_PROCESSES ?? `1,${cores}`).split(',').map(Number);
const feeds = (process.env.BENCH_FEED ?? 'live,paused').split(',').map((f) => f.trim());
if (feeds.some((f) => f !== 'live' && f !== 'paused')) throw new Error(`BENCH_FEED must list live and/or paused; got ${process.env.BENCH_FEED}`);
const withPeers = process.env.BENCH_PEERS !== '0';
/**
 * The least raw ÷ API CPU per request a path may show under `--check`: the API may spend a quarter
 * more than a bare server writing the same bytes, for the rate limit's count, CORS, metrics, the
 * request id and the conditional request.
 */
const CPU_BOUND = 0.8;
const hasWrk = findWrk();
const canPlace = process.env.BENCH_PLACE !== '0' && cores >= 2 && spawnSync('taskset', ['--version']).error === undefined;

/**
 * Which cores the measured server has and which the load generator and the rest share, for an API
 * of `apiProcesses` processes; null when the machine has no core to spare for it.
 */
interface Placement {
  server: string;
  rest: string;
}
function placementFor(apiProcesses: number): Placement | null {
  if (!canPlace || apiProcesses >= cores) return null;
  const list = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => String(from + i)).join(',');
  return { server: list(cores - apiProcesses, cores), rest: list(0, cores - apiProcesses) };
}
let placement: Placement | null = null;

/** Pins a running process, every thread of it, to `cpus`; one that has exited since it was listed is left alone. */
function pin(pid: number, cpus: string): void {
  const result = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
  if (result.status !== 0 && processAlive(pid)) throw new Error(`taskset could not place process ${pid} on cpu ${cpus}`);
}

/** `command args…`, started on `cpus` when given. */
function placed(cpus: string | undefined, command: string, args: readonly string[]): [string, string[]] {
  return cpus === undefined ? [command, [...args]] : ['taskset', ['-c', cpus, command, ...args]];
}
/** Seconds per slice of the peers' rotation (see `inTurn`). */
const SLICE_SECONDS = 2;

interface Load {
  rps: number;
  /** Requests answered in the run. */
  requests: number;
  p99ms: number;
  non2xx: number;
  /** wrk only: the run's requests and the latency (ms) of every 0.1 % of them, to merge runs into one p99. */
  quantiles?: { requests: number; ms: number[] };
}

/** One load run in its own process: wrk, else autocannon's CLI. */
function load(url: string, duration: number): Load {
  if (hasWrk) {
    const args = ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', '-s', path.join(here, 'wrk-quantiles.lua'), url];
    const out = execFileSync(...placed(placement?.rest, 'wrk', args), { encoding: 'utf8' });
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
    const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
    const p99ms = p99 ? Number(p99[1]) * (p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1) : NaN;
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
    const q = /QUANTILES (\d+) ([\d.,]+)/.exec(out);
    const quantiles = q ? { requests: Number(q[1]), ms: q[2]!.split(',').map((us) => Number(us) / 1000) } : undefined;
    return { rps, requests, p99ms, non2xx, ...(quantiles ? { quantiles } : {}) };
  }
  const out = execFileSync('npx', ['autocannon', '-j', '-c', String(connections), '-d', String(duration), url], { encoding: 'utf8' });
  const r = JSON.parse(out) as { requests: { average: number; total: number }; latency: { p99: number }; non2xx: number };
  return { rps: r.requests.average, requests: r.requests.total, p99ms: r.latency.p99, non2xx: r.non2xx };
}

/**
 * The p99 of several runs together: each run's 0.1 % quantiles, weighted by its requests, merged;
 * the worst run's p99 when a run has no quantiles (autocannon).
 */
function mergedP99(runs: readonly Load[]): number {
  if (runs.some((r) => r.quantiles === undefined)) return Math.max(...runs.map((r) => r.p99ms));
  const points = runs.flatMap((r) => r.quantiles!.ms.map((ms) => ({ ms, weight: r.quantiles!.requests / r.quantiles!.ms.length })));
  points.sort((a, b) => a.ms - b.ms);
  const total = points.reduce((sum, p) => sum + p.weight, 0);
  let seen = 0;
  for (const p of points) {
    seen += p.weight;
    if (seen >= 0.99 * total) return p.ms;
  }
  return points.at(-1)?.ms ?? NaN;
}

/** One server under load in `inTurn`: its URL and the processes that serve it. */
interface Server {
  url: string;
  pids: readonly number[];
}

/** One side's figures over a path's slices. */
interface Side {
  all: Load;
  slices: Load[];
  /** CPU µs per request served: the median over the slices, the idle background taken out. */
  cpuUs: number;
}

/**
 * Every server in the same slices of SLICE_SECONDS, in turn, the order turning by one each slice
 * (API, raw, Fastify, Express, idle; raw, Fastify, Express, idle, API; …; BENCH_SECONDS each in
 * all): the stack's own work (the history backfill after start, snapshot builds, the periodic full
 * build, catalog syncs) and the other load on the machine come in bursts of a second or two, and a
 * peer measured on its own, before or after the others, got whichever state the machine was in then:
 * Fastify measured after the API/raw pair came out below bare Express, and raw, measured beside the
 * API alone, was the one peer every burst fell on. Requests/s are averaged over the slices; p99 is
 * over all of a side's requests (mergedP99).
 *
 * The idle slice loads nothing: what each server's processes spend in it is their background (for
 * the API, the feed: price messages, snapshot announcements, catalog syncs), taken out of every
 * slice's CPU at its rate before dividing by the requests served.
 */
function inTurn(servers: readonly Server[]): Side[] {
  const slices = Math.max(2, Math.round(seconds / SLICE_SECONDS));
  const slice = Math.max(1, Math.round(seconds / slices));
  for (const s of servers) load(s.url, 2); // warm, each alike
  const runs = servers.map((): Array<{ load: Load; cpu: number; wall: number }> => []);
  // Per server: CPU seconds and wall seconds of its processes in the idle slices.
  const idle = servers.map(() => ({ cpu: 0, wall: 0 }));
  const turn = servers.length + 1;
  for (let i = 0; i < slices; i++) {
    for (let k = 0; k < turn; k++) {
      const which = (i + k) % turn;
      if (which === servers.length) {
        const before = servers.map((s) => cpuSeconds(s.pids));
        const started = performance.now();
        execFileSync('sleep', [String(slice)]);
        const wall = (performance.now() - started) / 1000;
        servers.forEach((s, n) => {
          idle[n]!.cpu += cpuSeconds(s.pids) - before[n]!;
          idle[n]!.wall += wall;
        });
        continue;
      }
      const server = servers[which]!;
      const m = measured(server.pids, () => load(server.url, slice));
      runs[which]!.push({ load: m.result, cpu: m.cpu, wall: m.wall });
    }
  }
  return runs.map((rs, n) => {
    const ls = rs.map((r) => r.load);
    const background = idle[n]!.wall > 0 ? idle[n]!.cpu / idle[n]!.wall : 0;
    return {
      slices: ls,
      all: {
        rps: ls.reduce((sum, l) => sum + l.rps, 0) / ls.length,
        requests: ls.reduce((sum, l) => sum + l.requests, 0),
        p99ms: mergedP99(ls),
        non2xx: ls.reduce((sum, l) => sum + l.non2xx, 0),
      },
      cpuUs: median(rs.map((r) => ((r.cpu - background * r.wall) / r.load.requests) * 1e6)),
    };
  });
}

/** The median over slices of the API's requests/s over raw's in the same slice: whether one burst decided a row. */
function sliceMedian(api: readonly Load[], raw: readonly Load[]): number {
  return median(api.map((a, i) => a.rps / raw[i]!.rps));
}

/** Paths whose CPU ratio fell below CPU_BOUND (`--check`). */
const failures: string[] = [];

async function startBaseline(kind: 'raw' | 'fastify' | 'express', routes: Record<string, Buffer>) {
  const port = await freePort();
  // The node binary and V8 options the stack starts the API with: the peers differ from it in their code only.
  const child = spawn(...placed(placement?.server, process.execPath, [...API_NODE_ARGS, '--import', 'tsx', path.join(here, 'bare-server.ts')]), { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.end(JSON.stringify({ kind, port, routes: Object.fromEntries(Object.entries(routes).map(([p, b]) => [p, b.toString('base64')])) }));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`${kind} baseline exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, pids: [child.pid!], stop: () => child.kill() };
}

/** Every process under the run line `rootPid` (itself included), with its resident memory (KB), and whether it is the API. */
function stackProcesses(rootPid: number): Array<{ pid: number; rss: number; api: boolean }> {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,rss=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), rss: Number(m[3]), args: m[4] ?? '' }));
  const mine = new Set([rootPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rows) {
      if (mine.has(r.pid) || !mine.has(r.ppid)) continue;
      mine.add(r.pid);
      grew = true;
    }
  }
  return rows.filter((r) => mine.has(r.pid)).map((r) => ({ pid: r.pid, rss: r.rss, api: r.args.includes(builtEntry('api')) }));
}

/** Resident memory (KB) of every API process under the run line `rootPid`. */
function apiRssKb(rootPid: number): number {
  return stackProcesses(rootPid)
    .filter((p) => p.api)
    .reduce((sum, p) => sum + p.rss, 0);
}

/** The API's processes on the server's cores; the rest of the stack and this script on the others. */
function placeStack(rootPid: number, where: Placement): void {
  pin(process.pid, where.rest);
  for (const p of stackProcesses(rootPid)) pin(p.pid, p.api ? where.server : where.rest);
}

/** Pauses (or resumes) the simulator's walk: books, trades and match clocks stand still meanwhile. */
async function pauseFeed(stack: Stack, paused: boolean): Promise<void> {
  const res = await stack.simControl(paused ? '/_sim/pause' : '/_sim/resume', {});
  if (res.status !== 200) throw new Error(`simulator ${paused ? 'pause' : 'resume'} answered ${res.status}`);
}

async function benchStack(apiProcesses: number): Promise<void> {
  const metricsPort = await freePort();
  process.stdout.write(`\nstarting the stack with API_PROCESSES=${apiProcesses}…\n`);
  const stack = await startStack({
    env: {
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'warn',
      API_PROCESSES: String(apiProcesses),
      API_METRICS_PORT: String(metricsPort),
      SIM_EVENTS: String(openEvents),
    },
    readyTimeoutMs: 300_000,
  });
  placement = placementFor(apiProcesses);
  process.stdout.write(
    placement === null
      ? `placement: none (${canPlace ? `${apiProcesses} API processes on ${cores} cores` : 'BENCH_PLACE=0, one core or no taskset'}): wrk and the stack share the measured server's cores\n`
      : `placement: the measured server on cpu ${placement.server}; wrk, the rest of the stack and this script on cpu ${placement.rest}\n`,
  );
  if (placement !== null) placeStack(stack.pid, placement);
  const baselines: Array<Awaited<ReturnType<typeof startBaseline>>> = [];
  let peakKb = 0;
  const sampler = setInterval(() => (peakKb = Math.max(peakKb, apiRssKb(stack.pid))), 500);
  try {
    // The first build may be empty; every hot path must answer 200 with content before it is
    // measured: an empty leaderboard (47 bytes) until the crowd's first calls have settled.
    const slug = await until(
      'the first events and a leaderboard with rows',
      async () => {
        const list = (await (await fetch(`${stack.apiUrl}/api/v1/markets`)).json()) as { events?: Array<{ slug: string }> };
        const leaderboard = await fetch(`${stack.apiUrl}/api/v1/leaderboard`);
        if (leaderboard.status !== 200) return undefined;
        const board = (await leaderboard.json()) as { rows?: unknown[] };
        return (board.rows?.length ?? 0) > 0 ? list.events?.[0]?.slug : undefined;
      },
      { timeoutMs: 600_000, everyMs: 1000, context: () => stack.logs().slice(-4000) },
    );
    const paths = ['/api/v1/markets', `/api/v1/markets/${slug}`, '/api/v1/leaderboard', '/api/v1/odds?chance=0.25'];
    // The catalog's hot paths: a market's order book, 100 markets by id in one request, and an
    // hour of a market's minute candles that ended before the last late point could land (a closed
    // window: immutable, held like a snapshot).
    paths.push(`/api/v1/markets/${slug}/book`, await hundredIdsPath(stack.apiUrl), closedCandlesPath(slug));
    const bodies: Record<string, Buffer> = {};
    for (const p of paths) {
      const res = await fetch(`${stack.apiUrl}${p}`, { headers: { 'accept-encoding': 'identity' } });
      if (res.status !== 200) throw new Error(`${p} answered ${res.status}`);
      bodies[p] = Buffer.from(await res.arrayBuffer());
    }
    const [raw, fastify, express] = await Promise.all([startBaseline('raw', bodies), startBaseline('fastify', bodies), startBaseline('express', bodies)]);
    baselines.push(raw, fastify, express);
    const apiPids = stackProcesses(stack.pid)
      .filter((p) => p.api)
      .map((p) => p.pid);
    const api = { url: stack.apiUrl, pids: apiPids };
    const line = (p: string, sides: Side[], feed: string) => {
      const [a, r, f, e] = sides as [Side, Side, Side?, Side?];
      // The peers' known order (raw ≥ Fastify ≫ bare Express, within noise): when it does not hold,
      // the machine, not the API, decided the row, and its ratio is not to be trusted.
      const peers =
        f && e
          ? ` fastify=${(f.all.rps / r.all.rps).toFixed(2)} express=${(e.all.rps / r.all.rps).toFixed(2)} peers_in_order=${f.all.rps <= 1.1 * r.all.rps && e.all.rps < 0.8 * f.all.rps ? 'yes' : 'no'}`
          : '';
      const cpuRatio = r.cpuUs / a.cpuUs;
      const name = p.replace(slug, '{slug}').replace(/ids=[^&]*/, 'ids=<100 ids>');
      if (cli.check && CAN_READ_CPU && !(cpuRatio >= CPU_BOUND)) failures.push(`${name} feed=${feed} processes=${apiProcesses}: cpu_ratio ${cpuRatio.toFixed(2)} < ${CPU_BOUND}`);
      process.stdout.write(
        `bench:api ${name} api=${Math.round(a.all.rps)} raw=${Math.round(r.all.rps)} ratio=${(a.all.rps / r.all.rps).toFixed(2)} p99=${a.all.p99ms.toFixed(1)}${peers}` +
          ` raw_p99=${r.all.p99ms.toFixed(1)} slice_ratio_median=${sliceMedian(a.slices, r.slices).toFixed(2)}` +
          (CAN_READ_CPU ? ` api_cpu_us=${a.cpuUs.toFixed(1)} raw_cpu_us=${r.cpuUs.toFixed(1)} cpu_ratio=${cpuRatio.toFixed(2)}` : '') +
          ` feed=${feed} processes=${apiProcesses} bytes=${bodies[p]!.length}${a.all.non2xx ? ` non2xx=${a.all.non2xx}` : ''}\n`,
      );
    };
    const servers = (p: string) => [api, raw, ...(withPeers ? [fastify, express] : [])].map((s) => ({ url: `${s.url}${p}`, pids: s.pids }));
    for (const feed of feeds) {
      // Paused: no book moves, so no price ingest and no price builds. The catalog syncs go on (every
      // 30 s): the first one after the pause still brings back the events whose volumes and catalog
      // prices the live phase moved, and they are rebuilt as usual.
      if (feed === 'paused') await pauseFeed(stack, true);
      try {
        for (const p of paths) line(p, inTurn(feed === 'live' ? servers(p) : servers(p).slice(0, 2)), feed);
      } finally {
        if (feed === 'paused') await pauseFeed(stack, false);
      }
    }
    peakKb = Math.max(peakKb, apiRssKb(stack.pid));
    const state = (await (await stack.simControl('/_sim/state')).json()) as { openEvents?: number };
    process.stdout.write(`bench:api rss_peak_mb=${(peakKb / 1024).toFixed(1)} processes=${apiProcesses} open_events=${state.openEvents ?? '?'}\n`);
  } catch (err) {
    // What the stack said last: a service that stopped answering says why there.
    process.stderr.write(`${stack.logs().slice(-4000)}\n`);
    throw err;
  } finally {
    clearInterval(sampler);
    for (const b of baselines) b.stop();
    await stack.stop();
  }
}

async function main() {
  process.stdout.write(
    `bench:api — ${hasWrk ? 'wrk -t1' : 'autocannon'}, ${connections} connections, ${seconds} s per target, node ${process.version}; rate limit, CORS, metrics, ETag and request id on; feed ${feeds.join(' then ')}; load ${loadAverage()}\n`,
  );
  for (const n of processCounts) await benchStack(n);
  if (cli.check && !CAN_READ_CPU) throw new Error('--check needs /proc to read CPU time (Linux)');
  for (const f of failures) process.stdout.write(`bench:api check failed: ${f}\n`);
  if (cli.check) process.stdout.write(`bench:api check: ${failures.length === 0 ? 'every path' : `${failures.length} path(s) not`} within cpu_ratio ${CPU_BOUND}\n`);
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);

/** `/api/v1/markets/by-id?ids=` with 100 market ids of the open list (its cards' markets, walking its pages). */
async function hundredIdsPath(apiUrl: string): Promise<string> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100 && ids.length < 100; page++) {
    const res = await fetch(`${apiUrl}/api/v1/markets?limit=60${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    const body = (await res.json()) as { events?: Array<{ markets: Array<{ id: string }> }>; next_cursor?: string | null };
    for (const e of body.events ?? []) for (const m of e.markets) if (ids.length < 100) ids.push(m.id);
    cursor = body.next_cursor ?? null;
    if (cursor === null) break;
  }
  if (ids.length < 100) throw new Error(`only ${ids.length} market ids on the open list`);
  return `/api/v1/markets/by-id?ids=${ids.join(',')}`;
}

/** An hour of minute candles of the event's markets, ending before the last late point could land: a closed window. */
function closedCandlesPath(slug: string): string {
  const now = Math.floor(Date.now() / 1000);
  const end = Math.floor((now - LATE_POINT_SECONDS) / 60) * 60 - 60;
  return `/api/v1/markets/${slug}/candles?interval=1m&start=${end - 3600}&end=${end}`;
}

/** The load average (1, 5, 15 minutes), to print beside the figures: other work on the machine moves them. */
function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/**
 * wrk's path, installing Debian's package first when it is missing and this runs as root with
 * apt-get (as on the project's CI machines); false when there is still none (autocannon is used).
 */
function findWrk(): boolean {
  const has = () => spawnSync('wrk', ['--version']).error === undefined;
  if (has()) return true;
  if (process.getuid?.() !== 0 || spawnSync('apt-get', ['--version']).error !== undefined) return false;
  process.stdout.write('wrk is missing: installing it with apt-get…\n');
  spawnSync('sh', ['-c', 'apt-get update -qq && apt-get install -y -qq wrk'], { stdio: 'inherit' });
  return has();
}
