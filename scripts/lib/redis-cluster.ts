import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { portOpen } from '@pm/shared/net';
import { until } from '@pm/shared/wait';
import { InfraError } from './infra.js';

/**
 * A Redis Cluster on one machine for `npm start -- --cluster` (and its e2e test): three masters on
 * `port` … `port + 2` and one replica of each on `port + 3` … `port + 5` (their cluster bus on the same
 * ports + 10000, Redis' default), without persistence, joined by `redis-cli --cluster create …
 * --cluster-replicas 1 --cluster-yes` — Redis' own tooling, not ours. Nodes and their `nodes.conf` live
 * in a temporary folder removed on stop, so every start is a fresh cluster.
 *
 * Losing a master is what the replicas are for: after `cluster-node-timeout` (REDIS_CLUSTER_NODE_TIMEOUT_MS,
 * 5000 ms here, Redis' default is 15 s; shorter, a busy machine's pauses pass for deaths) the other masters mark it failed and its replica is elected in its
 * place (Redis' own failover; ioredis' Cluster client follows the slots to it). A node that dies is
 * started again on its port and `nodes.conf`, and rejoins as a replica of the node that took its slots —
 * but only once those slots have moved: a master without persistence that came back before its replica
 * took over would come back empty and its replica would copy the emptiness.
 */

export interface LocalRedisCluster {
  /** `redis+cluster://127.0.0.1:p,…,127.0.0.1:p+5` (shared/src/redis/connection.ts). */
  url: string;
  /** Every node's port: the three first masters, then their replicas (roles change with failovers). */
  ports: number[];
  stop(): Promise<void>;
}

const MASTERS = 3;
const NODES = MASTERS * 2;
/** How long a dead node's slots may stay unclaimed before it is started again anyway (its data is then lost). */
const RESTART_GIVE_UP_MS = 60_000;

function probe(port: number): Redis {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1_000 });
  redis.on('error', () => {});
  return redis;
}

async function ask(port: number, ...args: string[]): Promise<string | undefined> {
  const redis = probe(port);
  try {
    await redis.connect();
    return String(await redis.call(args[0]!, ...args.slice(1)));
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

async function clusterState(port: number): Promise<string | undefined> {
  return /cluster_state:(\w+)/.exec((await ask(port, 'CLUSTER', 'INFO')) ?? '')?.[1];
}

/** The node id a node's `nodes.conf` names as itself (its line flagged `myself`). */
function ownNodeId(dir: string, port: number): string | undefined {
  try {
    const line = readFileSync(path.join(dir, `nodes-${port}.conf`), 'utf8').split('\n').find((l) => l.split(' ')[2]?.split(',').includes('myself'));
    return line?.split(' ')[0];
  } catch {
    return undefined;
  }
}

/** Whether some live node sees another master than `nodeId` serving slots `nodeId` served: the failover happened. */
async function slotsMovedAway(nodeId: string, livePorts: number[]): Promise<boolean> {
  for (const port of livePorts) {
    const nodes = await ask(port, 'CLUSTER', 'NODES');
    if (nodes === undefined) continue;
    const lines = nodes.split('\n').filter(Boolean).map((l) => l.split(' '));
    const dead = lines.find((l) => l[0] === nodeId);
    // Still a master holding slots in this node's view (fields 8+ are its slot ranges): not yet.
    if (dead && dead[2]!.includes('master') && dead.length > 8) return false;
    // It became a replica (or has no slots left): someone else serves them.
    return dead !== undefined;
  }
  return false;
}

export async function startRedisCluster(port: number, log: (line: string) => void, opts: { nodeTimeoutMs?: number } = {}): Promise<LocalRedisCluster> {
  if (port + NODES - 1 + 10_000 > 65_535) throw new InfraError(`REDIS_CLUSTER_PORT ${port}: its cluster bus ports (+10000) must stay below 65536`);
  const nodeTimeoutMs = opts.nodeTimeoutMs ?? 5_000;
  const ports = Array.from({ length: NODES }, (_, i) => port + i);
  const busy = [];
  for (const p of ports) if ((await portOpen('127.0.0.1', p)) || (await portOpen('127.0.0.1', p + 10_000))) busy.push(p);
  if (busy.length > 0) {
    throw new InfraError(`cannot start the Redis Cluster: port ${busy.join(', ')} (or its bus port +10000) is in use; set REDIS_CLUSTER_PORT to a free range of ${NODES}, or REDIS_URL=redis+cluster://… to use a running cluster`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'pm-redis-cluster-'));
  let stopping = false;
  let running = false;
  // What a node printed last, so that one that cannot start (a port taken after the check) says why.
  const said: string[][] = ports.map(() => []);
  const spawnNode = (i: number): ChildProcess => {
    const p = ports[i]!;
    const child = spawn(
      'redis-server',
      [
        '--port', String(p), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${p}.conf`,
        '--cluster-node-timeout', String(nodeTimeoutMs),
        // A replica fails over however long it was cut off from its master: on one machine a slow
        // moment must not leave a dead master's slots without anyone to take them.
        '--cluster-replica-validity-factor', '0',
        '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', `dump-${p}.rdb`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    for (const out of [child.stdout, child.stderr]) {
      out?.setEncoding('utf8');
      out?.on('data', (chunk: string) => {
        const lines = said[i]!;
        lines.push(...chunk.split('\n').filter(Boolean));
        lines.splice(0, Math.max(0, lines.length - 5));
      });
    }
    child.once('exit', (code, signal) => {
      // Only a node of a running cluster is started again; one that fails at the start fails the start.
      if (!stopping && running) void restart(i, code ?? signal);
    });
    return child;
  };
  const children: ChildProcess[] = [];

  /** A node died: once its slots have a new master (or after RESTART_GIVE_UP_MS), the same node again. */
  const restart = async (i: number, why: number | string | null) => {
    const p = ports[i]!;
    const nodeId = ownNodeId(dir, p);
    log(`redis: cluster node ${p} exited (${why}); starting it again once the cluster has failed over from it`);
    const live = ports.filter((q) => q !== p);
    const moved = nodeId === undefined
      ? false
      : await until(`node ${p}'s slots to move`, async () => stopping || (await slotsMovedAway(nodeId, live)), { timeoutMs: RESTART_GIVE_UP_MS, everyMs: 250 }).then(() => true, () => false);
    if (stopping) return;
    if (!moved) log(`redis: no replica took over from node ${p} within ${RESTART_GIVE_UP_MS / 1000} s; starting it again (its data is lost)`);
    children[i] = spawnNode(i);
    log(`redis: cluster node ${p} started again (it rejoins as a replica)`);
  };

  for (let i = 0; i < NODES; i++) children.push(spawnNode(i));
  /** Up (true), not yet (false), or exited: what it said, so the wait ends at once instead of timing out. */
  const started = (i: number) => async (): Promise<boolean | { exited: string }> => {
    const child = children[i]!;
    if (child.exitCode !== null || child.signalCode !== null) {
      return { exited: `redis-server on ${ports[i]} exited (${child.exitCode ?? child.signalCode}): ${said[i]!.slice(-3).join(' | ')}` };
    }
    return portOpen('127.0.0.1', ports[i]!);
  };
  const stop = async () => {
    stopping = true;
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((child) => (child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((r) => child.once('exit', r)))));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const [i, p] of ports.entries()) {
      const up = await until(`redis-server on ${p}`, started(i), { timeoutMs: 10_000, everyMs: 100 });
      if (up !== true) throw new InfraError(up.exited);
    }
    // With --cluster-replicas 1, redis-cli makes the first three nodes masters and gives each a replica
    // among the others (it prefers a replica on another host; on one host any will do).
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'], { encoding: 'utf8' });
    if (created.status !== 0) throw new InfraError(`redis-cli --cluster create failed: ${(created.stderr || created.stdout).trim().split('\n').slice(-3).join(' ')}`);
    for (const p of ports) await until(`the cluster to be ok on ${p}`, async () => (await clusterState(p)) === 'ok', { timeoutMs: 20_000, everyMs: 200 });
    // Every replica linked to its master, so that a master lost right after the start has one to take over.
    await until('every replica in sync with its master', async () => {
      const info = await Promise.all(ports.map((p) => ask(p, 'INFO', 'replication')));
      return info.filter((s) => s?.includes('master_link_status:up')).length === MASTERS;
    }, { timeoutMs: 20_000, everyMs: 200 });
  } catch (err) {
    await stop();
    throw err instanceof InfraError ? err : new InfraError(`cannot start the Redis Cluster: ${err instanceof Error ? err.message : String(err)}`);
  }
  running = true;
  log(`redis: started a Redis Cluster of ${MASTERS} masters and ${MASTERS} replicas on 127.0.0.1:${ports.join(',')} (data not persisted, node timeout ${nodeTimeoutMs} ms)`);
  return { url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, ports, stop };
}
