/**
 * npm run bench:stream — fan-out of `GET /api/v1/stream` from ONE API process to
 * BENCH_STREAM_CLIENTS (2,000) open streams, beside a baseline measured in the same run on the same
 * Redis Stream: a bare node:http SSE server with one XREAD loop (stream-baseline.ts).
 *
 * For each server in turn: the clients (stream-clients.ts, two processes of their own) open their
 * streams; BENCH_STREAM_MESSAGES (200) price messages are appended at BENCH_STREAM_RATE (20) a second
 * through the writers' own module; every client notes each message's delay from its XADD. Prints
 *   bench:stream clients=<n> fanout_p50=<ms> p99=<ms> baseline_p50=<ms> baseline_p99=<ms> rss_mb=<n> delivered=<fraction>
 * where rss_mb is the API process's peak resident memory while serving them. Redis is the shared
 * one, under a prefix of its own that is deleted at the end. Figures taken while other work runs on
 * the machine are indicative only.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { redisKeys } from '@pm/shared/redis';
import { createStreamWriter, priceMessage } from '@pm/shared/stream';
import { deleteKeysWithPrefix, testServices, uniqueSuffix } from '@pm/shared/testing';
import { sleep, until } from '@pm/shared/wait';
import { freePort } from '../support/stack.js';
import { benchCli } from './cli.js';

benchCli('bench:stream', `usage: npm run bench:stream
GET /api/v1/stream fan-out from one API process to many open streams, beside a bare node:http SSE
server on the same Redis Stream; prints
  bench:stream clients=<n> fanout_p50=<ms> p99=<ms> baseline_p50=<ms> baseline_p99=<ms> rss_mb=<n> delivered=<fraction>
Settings (environment):
  BENCH_STREAM_CLIENTS   open streams (default 2000)
  BENCH_STREAM_MESSAGES  messages appended (default 200)
  BENCH_STREAM_RATE      messages a second (default 20)
  --help                 this text`);

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const clients = Number(process.env.BENCH_STREAM_CLIENTS ?? 2_000);
const messages = Number(process.env.BENCH_STREAM_MESSAGES ?? 200);
const rate = Number(process.env.BENCH_STREAM_RATE ?? 20);
const CLIENT_PROCESSES = 2;

interface Result {
  delays: number[];
  complete: number;
  opened: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function startProcess(script: string, input: unknown, env: NodeJS.ProcessEnv = process.env): { child: ChildProcess; ready: Promise<void>; output: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, script)], { cwd: root, env, stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin!.end(JSON.stringify(input));
  let out = '';
  let readyResolve: () => void = () => {};
  const ready = new Promise<void>((resolve) => (readyResolve = resolve));
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    if (out.includes('ready\n')) readyResolve();
  });
  const output = new Promise<string>((resolve) => child.once('exit', () => resolve(out)));
  return { child, ready, output };
}

/** Resident memory (MB) of one process. */
function rssMb(pid: number): number {
  const kb = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim());
  return Math.round(kb / 1024);
}

/** Opens the clients on `url`, appends the messages, returns every delay and how many clients got all. */
async function measure(url: string, redis: Redis, prefix: string, watchPid?: number): Promise<Result & { peakRssMb: number }> {
  const per = Math.ceil(clients / CLIENT_PROCESSES);
  const procs = Array.from({ length: CLIENT_PROCESSES }, (_, i) =>
    startProcess('stream-clients.ts', { url, clients: Math.min(per, clients - i * per), messages }),
  );
  await Promise.race([
    Promise.all(procs.map((p) => p.ready)),
    new Promise((_, reject) => setTimeout(() => reject(new Error('clients did not all open within 60 s')), 60_000)),
  ]);
  const writer = createStreamWriter({ redis, prefix, logger: pino({ level: 'warn' }) });
  let peakRssMb = watchPid === undefined ? 0 : rssMb(watchPid);
  const started = Date.now();
  for (let i = 0; i < messages; i++) {
    const due = started + (i * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    writer.append(priceMessage({ eventSlug: 'bench-event', marketId: `m${i % 50}`, outcomeIndex: 0, name: 'Yes' }, (i % 98) / 100 + 0.01, Date.now()));
    if (watchPid !== undefined && i % rate === 0) peakRssMb = Math.max(peakRssMb, rssMb(watchPid));
  }
  await writer.close();
  const results = (await Promise.all(procs.map((p) => p.output))).map((o) => JSON.parse(o.trim().split('\n').pop()!) as Result);
  if (watchPid !== undefined) peakRssMb = Math.max(peakRssMb, rssMb(watchPid));
  return {
    delays: results.flatMap((r) => r.delays).sort((a, b) => a - b),
    complete: results.reduce((n, r) => n + r.complete, 0),
    opened: results.reduce((n, r) => n + r.opened, 0),
    peakRssMb,
  };
}

const services = await testServices();
const prefix = `bench_stream_${uniqueSuffix()}`;
const redis = new Redis(services.redisUrl);
const stops: Array<() => Promise<void>> = [];
try {
  // The API: one process, limits high enough for one machine opening every stream.
  const apiPort = await freePort();
  const api = spawn(process.execPath, ['--import', 'tsx', 'services/api/src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      REDIS_URL: services.redisUrl,
      REDIS_PREFIX: prefix,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      API_PROCESSES: '1',
      RATE_LIMIT_PER_MINUTE: String(clients * 10),
      STREAM_MAX_PER_IP: String(clients * 2),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  stops.push(async () => {
    api.kill('SIGTERM');
    await new Promise((r) => api.once('exit', r));
  });
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  await until('the API', () => fetch(`${apiUrl}/healthz`).then((r) => r.ok), { timeoutMs: 30_000, everyMs: 100 });
  const idleRss = rssMb(api.pid!);
  const served = await measure(`${apiUrl}/api/v1/stream?topics=price`, redis, prefix, api.pid!);
  await stops.pop()!();

  const basePort = await freePort();
  const baseline = startProcess('stream-baseline.ts', { port: basePort, redisUrl: services.redisUrl, key: redisKeys(prefix).stream });
  stops.push(async () => {
    baseline.child.kill();
    await baseline.output;
  });
  await baseline.ready;
  const base = await measure(`http://127.0.0.1:${basePort}/`, redis, prefix);
  await stops.pop()!();

  const expected = clients * messages;
  console.log(
    `bench:stream clients=${clients} messages=${messages} rate=${rate}/s fanout_p50=${percentile(served.delays, 50)} p99=${percentile(served.delays, 99)} ` +
      `max=${served.delays[served.delays.length - 1]} baseline_p50=${percentile(base.delays, 50)} baseline_p99=${percentile(base.delays, 99)} ` +
      `rss_mb=${served.peakRssMb} idle_rss_mb=${idleRss} delivered=${(served.delays.length / expected).toFixed(4)} baseline_delivered=${(base.delays.length / expected).toFixed(4)}`,
  );
  if (served.opened < clients || served.complete < clients) console.log(`bench:stream warning: ${served.opened} opened, ${served.complete} got every message`);
} finally {
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await deleteKeysWithPrefix(redis, prefix);
  redis.disconnect();
}
