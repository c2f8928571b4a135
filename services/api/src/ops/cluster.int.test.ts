import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRedis, freePort, type TestRedis } from '@pm/shared/testing';
import { until } from '@pm/shared/wait';

/**
 * API_PROCESSES=2 runs two processes on one port (node:cluster), and /metrics on
 * API_METRICS_PORT counts the requests of both; the public port no longer serves /metrics.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
let redis: TestRedis;
let api: ChildProcess;
let output = '';
let base: string;
let metricsBase: string;

beforeAll(async () => {
  redis = await createTestRedis('api_cluster');
  const [port, metricsPort] = await Promise.all([freePort(), freePort()]);
  base = `http://127.0.0.1:${port}`;
  metricsBase = `http://127.0.0.1:${metricsPort}`;
  api = spawn(process.execPath, ['--import', 'tsx', 'services/api/src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      PRETTY_LOGS: '0',
      REDIS_URL: redis.url,
      REDIS_PREFIX: redis.prefix,
      PORT: String(port),
      HOST: '127.0.0.1',
      API_PROCESSES: '2',
      API_METRICS_PORT: String(metricsPort),
      RATE_LIMIT_PER_MINUTE: '100000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  api.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  api.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const healthy = (url: string) => fetch(`${url}/healthz`).then((r) => r.ok, () => false);
  await until(
    'the API processes and their metrics port',
    async () => {
      if (api.exitCode !== null) throw new Error(`API exited with ${api.exitCode}`);
      return (await healthy(base)) && (await healthy(metricsBase));
    },
    { timeoutMs: 60_000, everyMs: 200, context: () => output },
  );
}, 90_000);

afterAll(async () => {
  if (api && api.exitCode === null) {
    const exited = new Promise((r) => api.once('exit', r));
    api.kill('SIGTERM');
    await exited;
  }
  await redis?.cleanup();
});

function count(text: string, status: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes('route="/api/v1/odds"') && l.includes(`status="${status}"`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('API_PROCESSES=2', () => {
  it('answers from two processes and sums their requests on the metrics port', async () => {
    const requests = 200;
    // New connections each time, so the kernel spreads them over both processes.
    const statuses = await Promise.all(
      Array.from({ length: requests }, (_, i) => fetch(`${base}/api/v1/odds?chance=0.${(i % 9) + 1}`, { headers: { connection: 'close' } }).then((r) => r.status)),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
    const text = await (await fetch(`${metricsBase}/metrics`)).text();
    console.log(`cluster: ${requests} requests, metrics port counted ${count(text, '200')}`);
    expect(count(text, '200')).toBe(requests);
    // One series per label set: the processes' values were summed, not listed twice.
    const helpLines = text.split('\n').filter((l) => l.startsWith('# HELP http_request_duration_seconds '));
    expect(helpLines).toHaveLength(1);
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
  });
});
