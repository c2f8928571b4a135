import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropDatabase } from '@pm/shared/db';
import { redisKeys } from '@pm/shared/redis';
import { deleteKeysWithPrefix, freePort, testServices, uniqueSuffix } from '@pm/shared/testing';
import { Redis } from 'ioredis';
import { until } from '@pm/shared/wait';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export { freePort } from '@pm/shared/testing';

export interface Stack {
  apiUrl: string;
  simUrl: string;
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  /**
   * The simulator's test controls (`/_sim/*`): GET without a body, POST with one (`{}` for a bare
   * action). The one place tests reach them, so that how they are authorised lives here only.
   */
  simControl(path: `/_sim/${string}`, body?: unknown): Promise<Response>;
  /** The run line's process id (its children are the services). */
  pid: number;
  /** Everything the services printed so far (for failure messages). */
  logs(): string;
  stop(): Promise<void>;
}

/**
 * Starts the whole stack through the README's own run line (scripts/start.ts), on free ports, with
 * a database and a Redis prefix of its own, and waits until the API serves the market list.
 *
 * A test may hand it a DATABASE_URL, REDIS_URL or REDIS_PREFIX of its own (a restart on the same
 * data, a Redis it stops): the stack then reports those, since they are where its services live,
 * and `stop()` leaves them to the test — it drops and deletes only what it made itself.
 */
export async function startStack(opts: { env?: Record<string, string>; readyTimeoutMs?: number; args?: string[] } = {}): Promise<Stack> {
  const services = await testServices();
  const [freeApiPort, freeSimPort, ingestorPort, workerPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const ownDb = new URL(services.postgresUrl);
  ownDb.pathname = `/pm_stack_${uniqueSuffix()}`;
  const ownPrefix = `stack_${uniqueSuffix()}`;
  // The simulator's controls need this token (the run line hands it to the simulator and the crowd).
  const simToken = randomBytes(24).toString('base64url');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: ownDb.toString(),
    REDIS_URL: services.redisUrl,
    REDIS_PREFIX: ownPrefix,
    PORT: String(freeApiPort),
    SIM_PORT: String(freeSimPort),
    INGESTOR_PORT: String(ingestorPort),
    WORKER_PORT: String(workerPort),
    PRETTY_LOGS: '0',
    LOG_LEVEL: 'warn',
    SIM_CONTROL_TOKEN: simToken,
    ...opts.env,
  };
  const databaseUrl = env.DATABASE_URL!;
  const redisUrl = env.REDIS_URL!;
  const prefix = env.REDIS_PREFIX!;
  const ownsDatabase = databaseUrl === ownDb.toString();
  const ownsKeys = redisUrl === services.redisUrl && prefix === ownPrefix;
  // A test may choose the ports itself (the cluster mode needs PORT + 100 free as well).
  const port = Number(env.PORT);
  const simPort = Number(env.SIM_PORT);
  let output = '';
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts', ...(opts.args ?? [])], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: false,
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const apiUrl = `http://127.0.0.1:${port}`;
  const stack: Stack = {
    apiUrl,
    simUrl: `http://127.0.0.1:${simPort}`,
    databaseUrl,
    redisUrl,
    prefix,
    simControl: (p, body) => {
      const authorization = `Bearer ${env.SIM_CONTROL_TOKEN ?? ''}`;
      return body === undefined
        ? fetch(`http://127.0.0.1:${simPort}${p}`, { headers: { authorization } })
        : fetch(`http://127.0.0.1:${simPort}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify(body) });
    },
    pid: child.pid!,
    logs: () => output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      if (ownsDatabase) await dropDatabase(databaseUrl).catch(() => {});
      if (ownsKeys) {
        const redis = new Redis(redisUrl);
        await deleteKeysWithPrefix(redis, prefix);
        redis.disconnect();
      }
    },
  };

  try {
    await until(
      `the stack to serve /api/v1/markets within ${opts.readyTimeoutMs ?? 60_000} ms`,
      async () => {
        if (child.exitCode !== null) throw new Error(`stack exited early:\n${output}`);
        return (await fetch(`${apiUrl}/api/v1/markets`)).status === 200;
      },
      { timeoutMs: opts.readyTimeoutMs ?? 60_000, context: () => output.slice(-4000) },
    );
    return stack;
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

/** The run line's child processes now (the services it runs), each with its command line. */
export function runLineChildren(stack: Pick<Stack, 'pid'>): Array<{ pid: number; args: string }> {
  let listing: string;
  try {
    listing = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(stack.pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is no child at all
  }
  return listing
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ pid: Number(m[1]), args: m[2]! }));
}

/** Wait until the ingestor's market socket is subscribed: the feed hash says connected. */
export async function untilMarketConnected(stack: Stack, timeoutMs = 30_000): Promise<void> {
  const redis = new Redis(stack.redisUrl);
  try {
    const feedKey = redisKeys(stack.prefix).feed;
    await until('the ingestor subscribed', async () => (await redis.hget(feedKey, 'market_connected')) === '1', {
      timeoutMs,
      everyMs: 100,
      context: () => stack.logs(),
    });
  } finally {
    redis.disconnect();
  }
}
