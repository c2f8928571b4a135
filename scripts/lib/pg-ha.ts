import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { stringify } from 'yaml';
import { portOpen } from '@pm/shared/net';
import { until } from '@pm/shared/wait';
import { InfraError } from './infra.js';
import { chownTree, packagedPostgresBin, postgresOsUser } from './pg-packaged.js';

/**
 * Postgres that survives the loss of its primary, on one machine, with the established tools, each
 * from the distribution's packages (`apt-get install patroni etcd-server haproxy`): three Postgres
 * members each run by a Patroni agent (the packaged Postgres's binaries), an etcd as Patroni's store of
 * the leader key, and an HAProxy whose one address always leads to the member Patroni's REST API
 * names primary (`GET /primary` answers 200 only there) and whose second address leads to the
 * standbys (`/replica`), for reads. Nothing of ours decides anything: Patroni holds the leader key
 * with a TTL, promotes the most advanced standby when the key expires, and turns a returning old
 * primary into a standby (pg_rewind); HAProxy's health checks follow.
 *
 * `synchronous` (Patroni's `synchronous_mode` + `synchronous_mode_strict`): a commit is acknowledged
 * only once a standby has it, and only such a standby may be promoted, so no acknowledged commit is
 * lost with the primary. Off, replication is asynchronous and a failover may lose the last commits —
 * what the negative control of the failover test shows.
 *
 * The timings are short (`ttl` 10 s, `loop_wait` 1 s, `retry_timeout` 3 s; Patroni's defaults are 30,
 * 10, 10) so a failover takes seconds on a local machine; a network of real machines wants the
 * defaults (a loaded machine's pause must not pass for a death).
 */

export interface HaMember {
  name: string;
  /** Postgres's port. */
  port: number;
  /** Patroni's REST API port. */
  apiPort: number;
  dataDir: string;
}

export interface PostgresHa {
  /** HAProxy's address of the primary: `postgres://postgres:<pw>@127.0.0.1:<port>/postgres`. */
  primaryUrl: string;
  /** HAProxy's address of the standbys (reads; falls back to the primary when no standby answers). */
  replicaUrl: string;
  members: HaMember[];
  /** The member Patroni's REST API names primary now, if one does. */
  leader(): Promise<HaMember | undefined>;
  /** SIGKILL of a member's Patroni and its postmaster together: the machine's death, as far as Postgres can tell. */
  kill(member: HaMember): void;
  /** The member's Patroni started again (it starts its Postgres, rewinding it if it diverged). */
  restart(member: HaMember): Promise<void>;
  /** Whether the member's Patroni process is running. */
  running(member: HaMember): boolean;
  /** From now on, a member whose Patroni dies is started again (the run line's `--ha`); `log` says so. */
  supervise(log: (line: string) => void): void;
  /** Until every member is streaming from the leader (Patroni's `/cluster` says so). */
  healthy(timeoutMs?: number): Promise<void>;
  /** SIGSTOP / SIGCONT of every standby's WAL receiver (the negative control: standbys left behind). */
  pauseWalReceivers(paused: boolean): void;
  /**
   * SIGKILL of every WAL receiver: what a stopped one had not read from its socket is gone with it, as
   * with a cut network (its postmaster restarts it, and the standby replays what it had written).
   */
  killWalReceivers(): void;
  /** Patroni's `/cluster` as JSON. */
  cluster(): Promise<{ members: Array<{ name: string; role: string; state: string; lag?: number | string; timeline?: number }> }>;
  stop(): Promise<void>;
}

export interface HaOptions {
  /** Postgres ports of the three members (e.g. 5441–5443). */
  pgPorts: [number, number, number];
  /** Patroni REST API ports (e.g. 8008–8010). */
  apiPorts: [number, number, number];
  etcdClientPort: number;
  etcdPeerPort: number;
  /** HAProxy: the primary's address. */
  haproxyPort: number;
  /** HAProxy: the standbys' address (default haproxyPort + 1). */
  haproxyReplicaPort?: number;
  synchronous?: boolean;
  /** Patroni's `maximum_lag_on_failover` in bytes (default 1 MB, Patroni's). */
  maximumLagOnFailover?: number;
  /** Patroni's ttl / loop_wait / retry_timeout (s). */
  ttl?: number;
  loopWait?: number;
  retryTimeout?: number;
  log?: (line: string) => void;
}

const PASSWORD = 'postgres';

/** Which of patroni, etcd and haproxy are missing from PATH (the apt line installs them). */
export function missingHaTools(): string[] {
  const missing = ['patroni', 'etcd', 'haproxy'].filter((cmd) => spawnSync('/bin/sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status !== 0);
  if (!packagedPostgresBin()) missing.push('postgresql');
  return missing;
}

export const HA_APT_PACKAGES = 'patroni etcd-server etcd-client haproxy python3-etcd python3-psycopg2 postgresql';

async function getJson(url: string, timeoutMs = 1_000): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: res.status, body };
}

export async function startPostgresHa(opts: HaOptions): Promise<PostgresHa> {
  const log = opts.log ?? (() => {});
  const missing = missingHaTools();
  if (missing.length > 0) throw new InfraError(`cannot start Postgres HA: ${missing.join(', ')} not installed (\`apt-get install ${HA_APT_PACKAGES}\`)`);
  const bin = packagedPostgresBin()!;
  const replicaPort = opts.haproxyReplicaPort ?? opts.haproxyPort + 1;
  const ports = [...opts.pgPorts, ...opts.apiPorts, opts.etcdClientPort, opts.etcdPeerPort, opts.haproxyPort, replicaPort];
  for (const port of ports) if (await portOpen('127.0.0.1', port, 300)) throw new InfraError(`cannot start Postgres HA: port ${port} is in use`);
  const owner = postgresOsUser();
  const root = mkdtempSync(path.join(tmpdir(), 'pm-pg-ha-'));
  const children = new Set<ChildProcess>();
  const logFile = (name: string) => createWriteStream(path.join(root, `${name}.log`), { flags: 'a' });
  const spawnLogged = (name: string, cmd: string, args: string[], asPostgres: boolean): ChildProcess => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: root, ...(asPostgres && owner ? owner : {}) });
    const out = logFile(name);
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  };

  let stopping = false;
  const restarting = new Set<string>();
  const supervisors: NodeJS.Timeout[] = [];
  const stopAll = async () => {
    stopping = true;
    for (const t of supervisors) clearInterval(t);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    // A postmaster whose Patroni was killed outlives it: ended from its pid file.
    for (const m of members) killPostmaster(m, 'SIGKILL');
    await until('the HA processes to exit', async () => children.size === 0, { timeoutMs: 10_000, everyMs: 50 }).catch(() => {});
    rmSync(root, { recursive: true, force: true });
  };

  const members: HaMember[] = opts.pgPorts.map((port, i) => ({ name: `pg${i + 1}`, port, apiPort: opts.apiPorts[i]!, dataDir: path.join(root, `pg${i + 1}`, 'data') }));
  const patroni = new Map<string, ChildProcess>();
  try {
    // etcd: one node is the store here (three on separate machines in production; Patroni needs a majority of them).
    mkdirSync(path.join(root, 'etcd'), { recursive: true });
    spawnLogged('etcd', 'etcd', [
      '--name', 'pm', '--data-dir', path.join(root, 'etcd'),
      '--listen-client-urls', `http://127.0.0.1:${opts.etcdClientPort}`, '--advertise-client-urls', `http://127.0.0.1:${opts.etcdClientPort}`,
      '--listen-peer-urls', `http://127.0.0.1:${opts.etcdPeerPort}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${opts.etcdPeerPort}`,
      '--initial-cluster', `pm=http://127.0.0.1:${opts.etcdPeerPort}`, '--initial-cluster-state', 'new',
    ], false);
    await until('etcd', () => portOpen('127.0.0.1', opts.etcdClientPort, 300), { timeoutMs: 20_000, everyMs: 100 });

    const ttl = opts.ttl ?? 10;
    const loopWait = opts.loopWait ?? 1;
    const retryTimeout = opts.retryTimeout ?? 3;
    for (const m of members) {
      const dir = path.dirname(m.dataDir);
      mkdirSync(dir, { recursive: true });
      const config = {
        scope: 'pm',
        name: m.name,
        log: { level: 'INFO' },
        restapi: { listen: `127.0.0.1:${m.apiPort}`, connect_address: `127.0.0.1:${m.apiPort}` },
        etcd3: { hosts: [`127.0.0.1:${opts.etcdClientPort}`] },
        bootstrap: {
          dcs: {
            ttl,
            loop_wait: loopWait,
            retry_timeout: retryTimeout,
            maximum_lag_on_failover: opts.maximumLagOnFailover ?? 1_048_576,
            synchronous_mode: opts.synchronous ?? true,
            synchronous_mode_strict: opts.synchronous ?? true,
            postgresql: {
              use_pg_rewind: true,
              use_slots: true,
              parameters: { wal_log_hints: 'on', max_connections: 200, max_wal_senders: 10, max_replication_slots: 10, wal_keep_size: '256MB', hot_standby_feedback: 'on' },
            },
          },
          initdb: [{ encoding: 'UTF8' }, { 'auth-local': 'trust' }],
        },
        postgresql: {
          listen: `127.0.0.1:${m.port}`,
          connect_address: `127.0.0.1:${m.port}`,
          data_dir: m.dataDir,
          bin_dir: bin.binDir,
          pgpass: path.join(dir, 'pgpass'),
          // A member that cannot rewind (its WAL went too far) is copied afresh from the new primary.
          remove_data_directory_on_rewind_failure: true,
          remove_data_directory_on_diverged_timelines: true,
          authentication: {
            superuser: { username: 'postgres', password: PASSWORD },
            replication: { username: 'replicator', password: PASSWORD },
            rewind: { username: 'postgres', password: PASSWORD },
          },
          parameters: { unix_socket_directories: dir, logging_collector: 'off' },
          pg_hba: ['local all all trust', 'host replication replicator 127.0.0.1/32 scram-sha-256', 'host all all 127.0.0.1/32 scram-sha-256'],
        },
        tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
      };
      writeFileSync(path.join(dir, 'patroni.yml'), stringify(config));
    }
    if (owner) chownTree(root, owner);
    const startMember = (m: HaMember) => {
      const child = spawnLogged(m.name, 'patroni', [path.join(path.dirname(m.dataDir), 'patroni.yml')], true);
      patroni.set(m.name, child);
    };
    // The first alone, so it is the one that bootstraps; the others copy it.
    startMember(members[0]!);
    await until('the first member to be primary', async () => (await getJson(`http://127.0.0.1:${members[0]!.apiPort}/primary`).catch(() => ({ status: 0 }))).status === 200, {
      timeoutMs: 60_000,
      everyMs: 200,
    });
    for (const m of members.slice(1)) startMember(m);

    writeFileSync(
      path.join(root, 'haproxy.cfg'),
      [
        'global',
        '  maxconn 1000',
        'defaults',
        '  mode tcp',
        '  timeout connect 2s',
        '  timeout client 30m',
        '  timeout server 30m',
        '  timeout check 1s',
        // A server marked down has its sessions cut: a client on a demoted primary reconnects to the new one.
        '  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions',
        `listen primary`,
        `  bind 127.0.0.1:${opts.haproxyPort}`,
        '  option httpchk OPTIONS /primary',
        '  http-check expect status 200',
        ...members.map((m) => `  server ${m.name} 127.0.0.1:${m.port} maxconn 300 check port ${m.apiPort}`),
        `listen replicas`,
        `  bind 127.0.0.1:${replicaPort}`,
        '  balance roundrobin',
        '  option httpchk OPTIONS /replica',
        '  http-check expect status 200',
        ...members.map((m) => `  server ${m.name} 127.0.0.1:${m.port} maxconn 300 check port ${m.apiPort}`),
        '',
      ].join('\n'),
    );
    spawnLogged('haproxy', 'haproxy', ['-db', '-f', path.join(root, 'haproxy.cfg')], false);
    await until('haproxy', () => portOpen('127.0.0.1', opts.haproxyPort, 300), { timeoutMs: 10_000, everyMs: 100 });

    let lastCluster: Awaited<ReturnType<PostgresHa['cluster']>> | undefined;
    const ha: PostgresHa = {
      primaryUrl: `postgres://postgres:${PASSWORD}@127.0.0.1:${opts.haproxyPort}/postgres`,
      replicaUrl: `postgres://postgres:${PASSWORD}@127.0.0.1:${replicaPort}/postgres`,
      members,
      async leader() {
        for (const m of members) {
          const res = await getJson(`http://127.0.0.1:${m.apiPort}/primary`, 500).catch(() => undefined);
          if (res?.status === 200) return m;
        }
        return undefined;
      },
      kill(m) {
        const p = patroni.get(m.name);
        // Both at once, as a machine that dies takes both: neither gets to hand anything over.
        killPostmaster(m, 'SIGKILL');
        p?.kill('SIGKILL');
      },
      async restart(m) {
        const p = patroni.get(m.name);
        if (p && p.exitCode === null && p.signalCode === null) return;
        // A postmaster killed with its agent is waited for (its shared memory must be released); one
        // that outlived its agent is adopted by the new Patroni.
        await until(`${m.name}'s postmaster to be gone`, async () => postmasterPid(m) === undefined || !alive(postmasterPid(m)!), { timeoutMs: 5_000, everyMs: 50 }).catch(() => {});
        startMember(m);
      },
      running(m) {
        const p = patroni.get(m.name);
        return p !== undefined && p.exitCode === null && p.signalCode === null;
      },
      supervise(say) {
        const timer = setInterval(() => {
          if (stopping) return;
          for (const m of members) {
            if (ha.running(m) || restarting.has(m.name)) continue;
            restarting.add(m.name);
            say(`postgres HA: ${m.name}'s Patroni is gone; starting it again once another member leads (it rejoins as a standby, rewound if it diverged)`);
            // Not before another member holds the leader key: started at once, it would find its own key
            // not yet expired and take it back — no failover to watch. A lone survivor gets it back after a minute.
            void until(`another member than ${m.name} to lead`, async () => {
              const now = await ha.leader();
              return now !== undefined && now.name !== m.name;
            }, { timeoutMs: 60_000, everyMs: 500 })
              .catch(() => {})
              .then(() => (stopping ? undefined : ha.restart(m)))
              .finally(() => restarting.delete(m.name));
          }
        }, 1_000);
        timer.unref();
        supervisors.push(timer);
      },
      async cluster() {
        for (const m of members) {
          const res = await getJson(`http://127.0.0.1:${m.apiPort}/cluster`, 1_000).catch(() => undefined);
          if (res?.status === 200) return res.body as Awaited<ReturnType<PostgresHa['cluster']>>;
        }
        return { members: [] };
      },
      async healthy(timeoutMs = 120_000) {
        await until(
          () => `every member streaming from the leader (${JSON.stringify(lastCluster)})`,
          async () => {
            const now = await ha.cluster();
            lastCluster = now;
            const ms = now.members;
            const leader = ms.find((x) => x.role === 'leader' && x.state === 'running');
            if (ms.length !== members.length || !leader || !ms.every((x) => x.state === 'running' && x.timeline === leader.timeline)) return false;
            // Patroni 3.0 says `running` of a standby that is not streaming yet too: the leader's own view decides.
            return (await streamingStandbys(ha.primaryUrl)) === members.length - 1;
          },
          { timeoutMs, everyMs: 250 },
        );
      },
      pauseWalReceivers(paused) {
        signalWalReceivers(paused ? 'SIGSTOP' : 'SIGCONT');
      },
      killWalReceivers() {
        signalWalReceivers('SIGKILL');
      },
      stop: stopAll,
    };
    await ha.healthy();
    log(`postgres HA: Patroni members ${members.map((m) => `${m.name} :${m.port} (REST :${m.apiPort})`).join(', ')}; etcd :${opts.etcdClientPort}; HAProxy primary :${opts.haproxyPort}, standbys :${replicaPort}; logs in ${root}`);
    return ha;
  } catch (err) {
    const tail = ['etcd', ...members.map((m) => m.name), 'haproxy']
      .map((n) => path.join(root, `${n}.log`))
      .filter(existsSync)
      .map((f) => `${path.basename(f)}: ${readFileSync(f, 'utf8').trim().split('\n').slice(-3).join(' | ')}`)
      .join('\n');
    await stopAll();
    throw new InfraError(`cannot start Postgres HA: ${err instanceof Error ? err.message : String(err)}\n${tail}`);
  }

  function postmasterPid(m: HaMember): number | undefined {
    try {
      const pid = Number(readFileSync(path.join(m.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  function killPostmaster(m: HaMember, signal: NodeJS.Signals): void {
    const pid = postmasterPid(m);
    if (pid !== undefined && alive(pid)) process.kill(pid, signal);
  }

  function signalWalReceivers(signal: NodeJS.Signals): void {
    for (const pid of walReceivers()) {
      try {
        process.kill(pid, signal);
      } catch {
        // gone meanwhile
      }
    }
  }

  /** Every running WAL receiver of the members (`postgres: walreceiver` processes whose parent is a member's postmaster). */
  function walReceivers(): number[] {
    const postmasters = new Set(members.map(postmasterPid).filter((p): p is number => p !== undefined));
    const out = spawnSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).stdout;
    return out
      .split('\n')
      .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null && postmasters.has(Number(m[2])) && /walreceiver/.test(m[3]!))
      .map((m) => Number(m[1]));
  }
}

/** How many standbys the primary behind `url` streams to (pg_stat_replication), 0 when it cannot be asked. */
async function streamingStandbys(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from pg_stat_replication where state = 'streaming'`);
    return rows[0]?.n ?? 0;
  } catch {
    return 0;
  } finally {
    await client.end().catch(() => {});
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
