import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { portOpen } from '../net.js';
import { freePort } from './index.js';
import { until } from '../wait.js';

/**
 * A redis-server of a test's own, on a free port, without persistence (`--save "" --appendonly no`,
 * like the run line's): for tests that flush, stop or restart Redis, which must never do that to the
 * shared one. One home for it, so every fault test starts, kills and waits for it the same way.
 */
export interface OwnRedis extends AsyncDisposable {
  url: string;
  port: number;
  /** Start it again on the same port after `stop()` (it comes back empty); throws while it runs. Resolves once it answers PING. */
  start(): Promise<void>;
  /** SIGKILL, then wait until its port is closed. Safe to call when already stopped. */
  stop(): Promise<void>;
  /** `stop()` then `start()`. */
  restart(): Promise<void>;
  /** FLUSHALL: every key, queue and snapshot gone. */
  flushAll(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;

async function answersPing(port: number): Promise<boolean> {
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** The server process is alive: spawned here and neither exited nor killed yet. */
function running(c: ChildProcess | undefined): c is ChildProcess {
  return c !== undefined && c.exitCode === null && c.signalCode === null;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}/0`;
  let child: ChildProcess | undefined;

  const own: OwnRedis = {
    url,
    port,
    [Symbol.asyncDispose]: () => own.stop(),
    async start() {
      // A second server on the same port cannot bind and exits, and the first one, no longer held
      // here, would outlive the test (one leaked redis-server per run of a file that did this).
      if (running(child)) throw new Error(`redis-server on port ${port} is already running: stop() it first`);
      const c = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      child = c;
      await until(`redis-server to start on port ${port}`, () => answersPing(port), { timeoutMs: START_TIMEOUT_MS, everyMs: 50 });
    },
    async stop() {
      const c = child;
      child = undefined;
      if (!running(c)) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
      await until(`redis-server on port ${port} to stop`, async () => !(await portOpen('127.0.0.1', port, 200)), { timeoutMs: START_TIMEOUT_MS, everyMs: 50 });
    },
    async restart() {
      await own.stop();
      await own.start();
    },
    async flushAll() {
      const client = new Redis(url);
      try {
        await client.flushall();
      } finally {
        client.disconnect();
      }
    },
  };
  await own.start();
  return own;
}
