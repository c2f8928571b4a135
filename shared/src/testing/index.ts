import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import { ensureDatabase, dropDatabase, migrate } from '../db/migrate.js';
import { createDb, type Db } from '../db/connection.js';
import { queuePrefix } from '../queues/names.js';
import { redisKeyBase } from '../redis/keys.js';
import { resolveTestServices, type TestServices } from './services.js';

let services: Promise<TestServices> | undefined;

/**
 * Real Postgres and Redis for tests — never mocks: the URLs given, else containers where a Docker
 * engine answers, else the local servers (services.ts says how it chooses). Resolved once per process.
 */
export function testServices(): Promise<TestServices> {
  services ??= resolveTestServices();
  return services;
}

/** Ports this process has handed out: the kernel gives a closed port back, and two of ours must never meet. */
const handedOut = new Set<number>();

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now (for a server a test starts, or one that
 * must refuse), never one this process handed out before: a bench that picks a metrics port and then
 * starts a stack that picks four more once got the same port twice, and the ingestor could not listen.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await unusedPort();
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

function unusedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Whether a process with this pid is running (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function uniqueSuffix(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/**
 * Test resources are `AsyncDisposable`: a file registers each where it makes it
 * (`teardown.use(await createTestDatabase('x'))` on an `AsyncDisposableStack`) and disposes them
 * all, newest first, in one `afterAll`.
 */
export interface TestDatabase extends AsyncDisposable {
  url: string;
  db: Db;
  /** Disposes the pool and drops the database. */
  drop(): Promise<void>;
}

/** A fresh, migrated database of its own for one test file. */
export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  const { postgresUrl } = await testServices();
  const url = new URL(postgresUrl);
  url.pathname = `/pm_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${uniqueSuffix()}`;
  const dbUrl = url.toString();
  await ensureDatabase(dbUrl);
  await migrate(dbUrl);
  const db = createDb(dbUrl, { poolSize: 5 });
  const drop = async () => {
    await db.dispose();
    await dropDatabase(dbUrl);
  };
  return {
    url: dbUrl,
    db,
    drop,
    [Symbol.asyncDispose]: drop,
  };
}

export interface TestRedis extends AsyncDisposable {
  url: string;
  /** Key prefix of its own (also pass it as REDIS_PREFIX / queue prefix). */
  prefix: string;
  redis: Redis;
  /** Deletes every key under the prefix and closes the connection. */
  cleanup(): Promise<void>;
}

export async function createTestRedis(label = 'test'): Promise<TestRedis> {
  const { redisUrl } = await testServices();
  const prefix = `t_${label.replace(/[^a-z0-9_]/gi, '_')}_${uniqueSuffix()}`;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const cleanup = async () => {
    await deleteKeysWithPrefix(redis, prefix);
    redis.disconnect();
  };
  return {
    url: redisUrl,
    prefix,
    redis,
    cleanup,
    [Symbol.asyncDispose]: cleanup,
  };
}

/**
 * Deletes every key of the stack `prefix`: `{prefix}:…` (its state), `{prefix:bull}:…` (its queues)
 * and `prefix:…` (its rate-limit counters) — SCAN, never KEYS, so a shared Redis is not blocked.
 */
export async function deleteKeysWithPrefix(redis: Redis, prefix: string): Promise<void> {
  for (const pattern of [`${redisKeyBase(prefix)}:*`, `${queuePrefix(prefix)}:*`, `${prefix}:*`]) {
    let cursor = '0';
    do {
      // The prefix is letters, digits, _ and - (config.ts), so no glob character needs escaping.
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  }
}
export { createTestRedisPrefixes, resetDatabase, type TestRedisPrefix, type TestRedisPrefixes } from './reset.js';
export { startOwnRedis, type OwnRedis } from './own-redis.js';
export { startCommitCutter, type CommitCutter } from './commit-cutter.js';
export {
  chooseTestServices,
  dockerReachable,
  givenUrls,
  POSTGRES_IMAGE,
  REDIS_IMAGE,
  startTestContainers,
  type ServiceSource,
  type TestContainers,
  type TestServices,
} from './services.js';
