import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { portOpen } from '@pm/shared/net';
import { until } from '@pm/shared/wait';
import { InfraError } from './infra.js';

/**
 * A 3-master Redis Cluster on one machine for `npm start -- --cluster` (and its e2e test): three
 * `redis-server` processes with `cluster-enabled yes` on `port`, `port + 1`, `port + 2` (their cluster
 * bus on the same ports + 10000, Redis' default), without persistence, joined by
 * `redis-cli --cluster create … --cluster-yes` — Redis' own tooling, not ours. Nodes and their
 * `nodes.conf` live in a temporary folder removed on stop, so every start is a fresh cluster.
 */

export interface LocalRedisCluster {
  /** `redis+cluster://127.0.0.1:p,127.0.0.1:p+1,127.0.0.1:p+2` (shared/src/redis/connection.ts). */
  url: string;
  ports: number[];
  stop(): Promise<void>;
}

const MASTERS = 3;

async function clusterState(port: number): Promise<string | undefined> {
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    const info = await probe.call('CLUSTER', 'INFO');
    return /cluster_state:(\w+)/.exec(String(info))?.[1];
  } catch {
    return undefined;
  } finally {
    probe.disconnect();
  }
}

export async function startRedisCluster(port: number, log: (line: string) => void): Promise<LocalRedisCluster> {
  if (port + MASTERS - 1 + 10_000 > 65_535) throw new InfraError(`REDIS_CLUSTER_PORT ${port}: its cluster bus ports (+10000) must stay below 65536`);
  const ports = Array.from({ length: MASTERS }, (_, i) => port + i);
  const busy = [];
  for (const p of ports) if ((await portOpen('127.0.0.1', p)) || (await portOpen('127.0.0.1', p + 10_000))) busy.push(p);
  if (busy.length > 0) {
    throw new InfraError(`cannot start the Redis Cluster: port ${busy.join(', ')} (or its bus port +10000) is in use; set REDIS_CLUSTER_PORT to a free range, or REDIS_URL=redis+cluster://… to use a running cluster`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'pm-redis-cluster-'));
  const children: ChildProcess[] = ports.map((p) =>
    spawn(
      'redis-server',
      ['--port', String(p), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${p}.conf`, '--cluster-node-timeout', '5000', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  // What a node printed last, so that one that cannot start (a port taken after the check) says why.
  const said = children.map(() => [] as string[]);
  children.forEach((child, i) => {
    for (const out of [child.stdout, child.stderr]) {
      out?.setEncoding('utf8');
      out?.on('data', (chunk: string) => {
        const lines = said[i]!;
        lines.push(...chunk.split('\n').filter(Boolean));
        lines.splice(0, Math.max(0, lines.length - 5));
      });
    }
  });
  /** Up (true), not yet (false), or exited: what it said, so the wait ends at once instead of timing out. */
  const started = (i: number) => async (): Promise<boolean | { exited: string }> => {
    const child = children[i]!;
    if (child.exitCode !== null || child.signalCode !== null) {
      return { exited: `redis-server on ${ports[i]} exited (${child.exitCode ?? child.signalCode}): ${said[i]!.slice(-3).join(' | ')}` };
    }
    return portOpen('127.0.0.1', ports[i]!);
  };
  const stop = async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((child) => (child.exitCode !== null ? undefined : new Promise((r) => child.once('exit', r)))));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const [i, p] of ports.entries()) {
      const up = await until(`redis-server on ${p}`, started(i), { timeoutMs: 10_000, everyMs: 100 });
      if (up !== true) throw new InfraError(up.exited);
    }
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8' });
    if (created.status !== 0) throw new InfraError(`redis-cli --cluster create failed: ${(created.stderr || created.stdout).trim().split('\n').slice(-3).join(' ')}`);
    for (const p of ports) await until(`the cluster to be ok on ${p}`, async () => (await clusterState(p)) === 'ok', { timeoutMs: 20_000, everyMs: 200 });
  } catch (err) {
    await stop();
    throw err instanceof InfraError ? err : new InfraError(`cannot start the Redis Cluster: ${err instanceof Error ? err.message : String(err)}`);
  }
  log(`redis: started a ${MASTERS}-master Redis Cluster on 127.0.0.1:${ports.join(',')} (data not persisted)`);
  return { url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, ports, stop };
}
