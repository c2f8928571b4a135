import { mkdtempSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { portOpen } from '@pm/shared/net';
import { until } from '@pm/shared/wait';
import { freePort } from '../../test/support/stack.js';
import { ensureInfra, InfraError } from './infra.js';

/**
 * The run line's promise (docs/operations.md "Running it"): use what is configured, else the local servers,
 * else start Redis from PATH or an embedded Postgres, else say in one line how to get Redis.
 * Probed ports point at free ports here so the fallbacks really run.
 */
const root = path.resolve(import.meta.dirname, '../..');
const lines: string[] = [];
const log = (line: string) => lines.push(line);
const scratch: string[] = [];

afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

describe('the run line finds or starts its databases', () => {
  it('uses DATABASE_URL and REDIS_URL as given, starting nothing', async () => {
    const infra = await ensureInfra(root, { DATABASE_URL: 'postgres://x@db.example:5432/p', REDIS_URL: 'redis://cache.example:6379/0' }, log);
    expect(infra.databaseUrl).toBe('postgres://x@db.example:5432/p');
    expect(infra.redisUrl).toBe('redis://cache.example:6379/0');
    await infra.stop();
  });

  it('starts redis-server on the Redis port when nothing answers there, and stops it again', async () => {
    const redisPort = await freePort();
    const infra = await ensureInfra(root, { DATABASE_URL: 'postgres://x@db.example/p', PATH: process.env.PATH }, log, { redisPort });
    expect(infra.redisUrl).toBe(`redis://127.0.0.1:${redisPort}/0`);
    const client = new Redis(infra.redisUrl);
    expect(await client.ping()).toBe('PONG');
    client.disconnect();
    await infra.stop();
    await until('the Redis port to close', async () => !(await portOpen('127.0.0.1', redisPort)), { timeoutMs: 5_000, everyMs: 50 });
  });

  it('stops with one line saying how to get Redis when none answers and redis-server is not on PATH', async () => {
    const redisPort = await freePort();
    const run = ensureInfra(root, { DATABASE_URL: 'postgres://x@db.example/p', PATH: '/nonexistent' }, log, { redisPort });
    await expect(run).rejects.toBeInstanceOf(InfraError);
    await expect(run).rejects.toThrow(/No Redis found: set REDIS_URL, or install Redis/);
  });

  it('starts an embedded Postgres when no server answers on the Postgres port', async () => {
    const dataRoot = mkdtempSync(path.join(tmpdir(), 'pm-embedded-'));
    chmodSync(dataRoot, 0o755);
    scratch.push(dataRoot);
    const [postgresPort, embeddedPostgresPort] = [await freePort(), await freePort()];
    const infra = await ensureInfra(root, { REDIS_URL: 'redis://127.0.0.1:6379/0' }, log, { postgresPort, embeddedPostgresPort, dataRoot });
    try {
      expect(infra.databaseUrl).toBe(`postgres://postgres:postgres@127.0.0.1:${embeddedPostgresPort}/predictions`);
      const client = new pg.Client({ connectionString: infra.databaseUrl.replace('/predictions', '/postgres') });
      await client.connect();
      const { rows } = await client.query<{ v: string }>('select current_setting($1) as v', ['server_version_num']);
      await client.end();
      expect(Number(rows[0]?.v)).toBeGreaterThan(150000);
    } finally {
      await infra.stop();
    }
  }, 120_000);
});
