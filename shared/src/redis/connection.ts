import { Cluster, Redis, type RedisOptions } from 'ioredis';

/**
 * The one place a Redis connection is made from `REDIS_URL` (docs/design.md "Scale beyond one machine").
 *
 *   redis://[user:pass@]host:port[/db]            one server (or a proxy in front of several)
 *   rediss://…                                    the same over TLS
 *   redis+cluster://[user:pass@]h1:p1,h2:p2,…     a Redis Cluster: ioredis' Cluster client, seeded with
 *   rediss+cluster://…                            these nodes (it learns the others from CLUSTER SLOTS)
 *
 * A cluster URL takes no database number (a cluster has only database 0). Every key the services
 * use is hash-tagged so that the keys one command, MULTI or Lua script touches share a slot
 * (./keys.ts), and BullMQ's prefix is hash-tagged (queues.ts), so the same code runs on both.
 *
 * The Cluster client is handed around typed as `Redis`: it speaks the same command interface
 * (commands, multi, pipeline, defineCommand, subscribe, quit), which is all the services use, and
 * BullMQ recognises it itself. The one method whose signature differs, `duplicate`, goes through
 * `duplicateRedis` below. Typing it as `Redis | Cluster` instead would touch every file that takes a
 * connection for no behaviour of its own.
 */

export interface RedisNode {
  host: string;
  port: number;
}

export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[]; username?: string; password?: string; tls: boolean };

const CLUSTER_SCHEMES = ['redis+cluster:', 'rediss+cluster:'];

/** Parses REDIS_URL; throws an Error saying what is wrong (config.ts turns it into one clear line). */
export function parseRedisUrl(url: string): RedisTarget {
  const scheme = /^([a-z+]+:)\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'redis:' || scheme === 'rediss:') {
    const parsed = new URL(url);
    if (!parsed.hostname) throw new Error('has no host');
    return { kind: 'single', url };
  }
  if (scheme === undefined || !CLUSTER_SCHEMES.includes(scheme)) {
    throw new Error('must start with redis://, rediss://, redis+cluster:// or rediss+cluster://');
  }
  const rest = url.slice(scheme.length + 2);
  const at = rest.lastIndexOf('@');
  const auth = at >= 0 ? rest.slice(0, at) : '';
  const hostsAndPath = at >= 0 ? rest.slice(at + 1) : rest;
  const hosts = hostsAndPath.replace(/\/$/, '');
  if (hosts.includes('/') || hosts.includes('?')) throw new Error('a cluster URL takes no database number or options');
  const nodes = hosts.split(',').map((part) => {
    const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/i.exec(part.trim());
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535) throw new Error(`cluster node "${part}" must be host:port`);
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
  });
  if (nodes.length === 0) throw new Error('names no cluster node');
  const colon = auth.indexOf(':');
  const username = colon >= 0 ? decodeURIComponent(auth.slice(0, colon)) : decodeURIComponent(auth);
  const password = colon >= 0 ? decodeURIComponent(auth.slice(colon + 1)) : undefined;
  return {
    kind: 'cluster',
    nodes,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    tls: scheme === 'rediss+cluster:',
  };
}

export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//i.test(url);
}

/** Whether `redis` is ioredis' Cluster client (both classes carry `isCluster`). */
export function isCluster(redis: Redis): boolean {
  return (redis as { isCluster?: boolean }).isCluster === true;
}

/**
 * A connection to REDIS_URL with these options (for a cluster, they apply to every node's
 * connection; the cluster itself retries a command that met a MOVED/ASK or a failover).
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  const target = parseRedisUrl(url);
  if (target.kind === 'single') return new Redis(url, options);
  const redisOptions: RedisOptions = {
    ...options,
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
  };
  return clusterAsRedis(
    new Cluster(target.nodes, {
      redisOptions,
      // A command sent while the client (re)learns the slots waits for it rather than failing.
      enableOfflineQueue: options.enableOfflineQueue ?? true,
      ...(options.lazyConnect ? { lazyConnect: true } : {}),
      // The client learns a failover from the errors it meets and from this periodic look at the slots
      // (a connection that met no error, e.g. the subscriber's, follows too).
      slotsRefreshInterval: 2_000,
      // ioredis' 1 s for a CLUSTER SLOTS answer is missed on a loaded machine, and a client that missed
      // it on every node starts over and is not ready meanwhile (seen with six nodes on two busy cores).
      slotsRefreshTimeout: 5_000,
      ...failoverRetries(options),
    }),
  );
}

/**
 * A second connection like `redis` with some options changed (a subscriber, BullMQ's blocking
 * connection). `Redis.duplicate(options)` and `Cluster.duplicate(nodes, options)` differ.
 */
export function duplicateRedis(redis: Redis, options: RedisOptions = {}): Redis {
  if (!isCluster(redis)) return redis.duplicate(options);
  const cluster = redis as unknown as Cluster;
  return clusterAsRedis(
    cluster.duplicate(undefined, {
      redisOptions: { ...cluster.options.redisOptions, ...options },
      ...(options.enableOfflineQueue === undefined ? {} : { enableOfflineQueue: options.enableOfflineQueue }),
      ...(options.autoResubscribe === undefined ? {} : { autoResubscribe: options.autoResubscribe }),
      ...(options.maxRetriesPerRequest === undefined ? {} : failoverRetries(options)),
    }),
  );
}

/**
 * A client that waits rather than fails (maxRetriesPerRequest: null: the workers, BullMQ, the relays,
 * the stream's readers) rides through a master's failover: its commands are retried every 200 ms for
 * up to 30 s (cluster-node-timeout plus the replica's election), where ioredis' default 16 retries
 * 100 ms apart give up before a replica is promoted. A fail-fast client (the API's requests) keeps the
 * default and answers 503 for a key whose master is away.
 */
function failoverRetries(options: RedisOptions) {
  return options.maxRetriesPerRequest === null
    ? { retryDelayOnFailover: 200, retryDelayOnClusterDown: 200, retryDelayOnTryAgain: 200, maxRedirections: 150 }
    : { retryDelayOnFailover: 100, retryDelayOnClusterDown: 100, maxRedirections: 16 };
}

function clusterAsRedis(cluster: Cluster): Redis {
  return cluster as unknown as Redis;
}
