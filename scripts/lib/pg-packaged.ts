import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { until } from '@pm/shared/wait';
import { InfraError } from './infra.js';

/**
 * The machine's packaged Postgres (Debian's and Ubuntu's postgresql-common: binaries in
 * /usr/lib/postgresql/<major>/bin, the configuration in /etc/postgresql/<major>/<name>, the data in
 * /var/lib/postgresql/<major>/<name>): where its binaries are, the OS user it runs as, and a server of
 * that layout of our own on a free port (its configuration outside its data folder), for the tests of
 * what must work against such a server (a read replica of it, the HA members Patroni runs with these
 * binaries). Never the machine's own cluster: it is never started, stopped or changed here.
 */

/** The newest packaged major's bin folder (`/usr/lib/postgresql/<major>/bin`), if one is installed. */
export function packagedPostgresBin(): { major: number; binDir: string } | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((d) => /^\d+$/.test(d) && existsSync(path.join(root, d, 'bin', 'postgres')) && existsSync(path.join(root, d, 'bin', 'initdb')))
    .map(Number)
    .sort((a, b) => b - a);
  return majors[0] === undefined ? undefined : { major: majors[0], binDir: path.join(root, String(majors[0]), 'bin') };
}

/** uid/gid of the `postgres` OS user when we are root (Postgres will not run as root), else undefined. */
export function postgresOsUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0) throw new InfraError('cannot run Postgres as root without a `postgres` OS user');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export function chownTree(dir: string, owner: { uid: number; gid: number }): void {
  chownSync(dir, owner.uid, owner.gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, owner);
    else chownSync(p, owner.uid, owner.gid);
  }
}

export interface PackagedLayoutPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust from 127.0.0.1, replication included). */
  url: string;
  dataDir: string;
  /** Where its postgresql.conf, pg_hba.conf and pg_ident.conf are (not in dataDir). */
  configDir: string;
  stop(): Promise<void>;
}

/**
 * A server laid out as the package lays one out, in `root` (made by the caller, removed by it): initdb
 * into `root/data`, its three configuration files moved to `root/etc`, and `postgres -c
 * config_file=root/etc/postgresql.conf`, whose `data_directory`, `hba_file` and `ident_file` point back,
 * as /etc/postgresql/<major>/main/postgresql.conf does.
 */
export async function startPackagedLayoutPostgres(root: string, port: number): Promise<PackagedLayoutPostgres> {
  const bin = packagedPostgresBin();
  if (!bin) throw new InfraError('no packaged Postgres here (/usr/lib/postgresql/<major>/bin): `apt-get install postgresql`');
  const owner = postgresOsUser();
  const dataDir = path.join(root, 'data');
  const configDir = path.join(root, 'etc');
  mkdirSync(configDir, { recursive: true });
  if (owner) chownTree(root, owner);
  const as = owner ?? {};
  const init = spawnSync(path.join(bin.binDir, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync'], { encoding: 'utf8', ...as });
  if (init.status !== 0) throw new InfraError(`initdb failed: ${(init.stderr || init.stdout).trim().split('\n').slice(-2).join(' ')}`);
  for (const name of ['postgresql.conf', 'pg_hba.conf', 'pg_ident.conf']) renameSync(path.join(dataDir, name), path.join(configDir, name));
  writeFileSync(
    path.join(configDir, 'postgresql.conf'),
    `data_directory = '${dataDir}'\nhba_file = '${configDir}/pg_hba.conf'\nident_file = '${configDir}/pg_ident.conf'\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${root}'\nmax_wal_senders = 4\n`,
    { flag: 'a' },
  );
  if (owner) chownTree(configDir, owner);
  const said: string[] = [];
  const child: ChildProcess = spawn(path.join(bin.binDir, 'postgres'), ['-c', `config_file=${configDir}/postgresql.conf`], { stdio: ['ignore', 'pipe', 'pipe'], ...as });
  for (const out of [child.stdout, child.stderr]) {
    out?.setEncoding('utf8');
    out?.on('data', (chunk: string) => said.push(...chunk.split('\n').filter(Boolean).slice(-5)));
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await until(`packaged-layout postgres on ${port}`, async () => {
    if (child.exitCode !== null) throw new InfraError(`postgres exited: ${said.slice(-3).join(' | ')}`);
    const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await probe.connect();
      return true;
    } catch {
      return false;
    } finally {
      await probe.end().catch(() => {});
    }
  }, { timeoutMs: 30_000, everyMs: 100 });
  return {
    url,
    dataDir,
    configDir,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
    },
  };
}
