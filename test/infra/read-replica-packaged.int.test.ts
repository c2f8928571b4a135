import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startPostgresReplica, type PostgresReplica } from '../../scripts/lib/pg-replica.js';
import { chownTree, postgresOsUser, startPackagedLayoutPostgres, type PackagedLayoutPostgres } from '../../scripts/lib/pg-packaged.js';
import { freePort } from '../support/stack.js';
import { until } from '@pm/shared/wait';

/**
 * The cluster mode's read replica of a packaged Postgres (Debian's and Ubuntu's layout: postgresql.conf,
 * pg_hba.conf and pg_ident.conf outside the data folder, so a base backup carries none of them). A
 * server of that layout of the test's own, with the machine's packaged binaries, on a free port.
 */

let root: string;
let primary: PackagedLayoutPostgres;
let replica: PostgresReplica | undefined;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'pm-packaged-pg-'));
  const owner = postgresOsUser();
  if (owner) chownTree(root, owner);
  primary = await startPackagedLayoutPostgres(root, await freePort());
}, 60_000);

afterAll(async () => {
  await replica?.stop();
  await primary?.stop();
  rmSync(root, { recursive: true, force: true });
});

async function one<T extends pg.QueryResultRow>(url: string, text: string): Promise<T | undefined> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text)).rows[0];
  } finally {
    await c.end();
  }
}

describe('a read replica of a packaged-layout Postgres', () => {
  it('starts from pg_basebackup although the primary\'s configuration is not in its data folder, and streams what the primary commits', async () => {
    const settings = await one<{ config_file: string; data_directory: string }>(primary.url, `select current_setting('config_file') as config_file, current_setting('data_directory') as data_directory`);
    // The layout this is about: the configuration is not in the data folder.
    expect(path.dirname(settings!.config_file)).not.toBe(settings!.data_directory);
    await one(primary.url, 'create table seen (n int)');
    replica = await startPostgresReplica({ primaryUrl: primary.url, port: await freePort() });
    await one(primary.url, 'insert into seen values (42)');
    const replicated = await until('the row on the replica', async () => (await one<{ n: number }>(replica!.url, 'select n from seen'))?.n, { timeoutMs: 10_000, everyMs: 50 });
    expect(replicated).toBe(42);
    const recovery = await one<{ r: boolean }>(replica.url, 'select pg_is_in_recovery() as r');
    expect(recovery!.r).toBe(true);
  }, 60_000);
});
