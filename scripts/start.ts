/**
 * The run line (`npm start`): finds or starts Postgres and Redis, migrates, and runs the exchange
 * simulator, ingestor, worker and API together with readable logs. The API listens on PORT (3000).
 *   npm start                 everything, against the bundled simulator
 * Each service runs from its bundle (services/<name>/dist/main.mjs, scripts/lib/build.ts), built
 * here from the sources before anything starts.
 *   npm start -- --live       against the real exchange (no simulator)
 *   npm start -- --scenario <folder> [--speed N]   replay a recorded feed
 *   npm start -- --cluster    the shape of several machines on one: a Redis Cluster of 3 masters and
 *                             a replica of each (REDIS_CLUSTER_PORT, default 7000, and the five after it; or the one
 *                             REDIS_URL=redis+cluster://… names), two API replicas (PORT and PORT+100),
 *                             two workers, two ingestors sharing the markets by leases, the simulator
 *                             and the crowd; and a streaming replica of Postgres
 *                             (PG_REPLICA_PORT, default 5434) the API reads from (docs/operations.md
 *                             "Cluster mode", docs/replicas.md)
 *   npm start -- --ha         Postgres that survives the loss of its primary: three Patroni members of
 *                             the packaged Postgres (5441–5443, REST API 8008–8010), etcd (2479) and
 *                             HAProxy (primary 5440, standbys 5444); every service through HAProxy, a
 *                             killed member started again (docs/replicas.md "Postgres under Patroni")
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, parseConfig, type Config } from '@pm/shared/config';
import { ensureDatabase, migrate } from '@pm/shared/db';
import { isClusterUrl } from '@pm/shared/redis';
import { parseCli } from './lib/cli.js';
import { until } from '@pm/shared/wait';
import { ensureInfra, InfraError, portOpen } from './lib/infra.js';
import { startRedisCluster, type LocalRedisCluster } from './lib/redis-cluster.js';
import { startPostgresReplica, type PostgresReplica } from './lib/pg-replica.js';
import { startPostgresHa, type PostgresHa } from './lib/pg-ha.js';
import { createSupervisor, describeStatus, type ServiceSpec } from './lib/supervisor.js';
import { NODE_ARGS } from './lib/node-args.js';
import { buildServices, builtEntry } from './lib/build.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LIVE_URLS = {
  GAMMA_URL: 'https://gamma-api.polymarket.com',
  CLOB_URL: 'https://clob.polymarket.com',
  CLOB_WS_URL: 'wss://ws-subscriptions-clob.polymarket.com',
  SPORTS_WS_URL: 'wss://sports-api.polymarket.com',
};

function waitForPort(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return until(`${host}:${port}`, () => portOpen(host, port, 300), { timeoutMs, everyMs: 100 }).catch(() => false);
}

function say(line: string) {
  process.stdout.write(`${'start'.padEnd(12)} ${line}\n`);
}

const USAGE = `usage: npm start [-- --live | --scenario <folder> [--speed N] | --no-sim] [--cluster] [--ha]

Finds or starts Postgres and Redis, migrates, and runs the exchange simulator (with the demo crowd
unless CROWD=0), ingestor, worker and API together. The API listens on PORT (3000).

options:
  --live               against the real exchange (needs internet), no simulator
  --scenario <folder>  the simulator replays a recorded feed (see npm run replay)
  --speed N            replay speed with --scenario, default 1
  --no-sim             no simulator: the exchange URLs come from the environment
  --cluster            several machines' shape on one: a Redis Cluster of 3 masters + 3 replicas (unless REDIS_URL
                       names one), two API replicas (PORT, PORT+100), two workers, two ingestors, and a
                       streaming Postgres replica for the API's reads (PG_REPLICA_PORT, 5434; PG_REPLICA=0:
                       none; DATABASE_READ_URL: that one); docs/operations.md, docs/replicas.md
  --ha                 Postgres under Patroni (apt-get install patroni etcd-server haproxy): three members
                       of the packaged Postgres on PG_HA_PORT…+2 (5441), their REST API on 8008–8010,
                       etcd on ETCD_PORT (2479), HAProxy's primary address on HAPROXY_PORT (5440) and
                       its standbys' on HAPROXY_PORT+4; kill a member and watch it fail over and rejoin
  -h, --help           this text`;

async function main() {
  const { values } = parseCli({
    command: 'start',
    usage: USAGE,
    options: {
      live: { type: 'boolean', default: false },
      scenario: { type: 'string' },
      speed: { type: 'string' },
      'no-sim': { type: 'boolean', default: false },
      cluster: { type: 'boolean', default: false },
      ha: { type: 'boolean', default: false },
    },
  });

  // Cluster mode: a Redis Cluster of our own unless REDIS_URL names one.
  let redisCluster: LocalRedisCluster | undefined;
  const baseEnv: NodeJS.ProcessEnv = { ...process.env };
  if (values.cluster && !isClusterUrl(baseEnv.REDIS_URL ?? '')) {
    const clusterPort = Number(baseEnv.REDIS_CLUSTER_PORT || 7000);
    if (!Number.isInteger(clusterPort) || clusterPort < 1 || clusterPort > 65_535) throw new ConfigError(`REDIS_CLUSTER_PORT: must be a port, not "${baseEnv.REDIS_CLUSTER_PORT}"`);
    const nodeTimeoutMs = Number(baseEnv.REDIS_CLUSTER_NODE_TIMEOUT_MS || 5000);
    if (!Number.isInteger(nodeTimeoutMs) || nodeTimeoutMs < 100) throw new ConfigError(`REDIS_CLUSTER_NODE_TIMEOUT_MS: must be a whole number of ms, 100 or more, not "${baseEnv.REDIS_CLUSTER_NODE_TIMEOUT_MS}"`);
    redisCluster = await startRedisCluster(clusterPort, say, { nodeTimeoutMs });
    baseEnv.REDIS_URL = redisCluster.url;
  }
  // HA mode: Postgres under Patroni, reached through HAProxy's stable addresses only.
  let pgHa: PostgresHa | undefined;
  if (values.ha) {
    if (baseEnv.DATABASE_URL) throw new ConfigError('--ha starts its own Postgres members: unset DATABASE_URL (and DATABASE_READ_URL)');
    const port = (name: string, fallback: number) => {
      const n = Number(baseEnv[name] || fallback);
      if (!Number.isInteger(n) || n < 1 || n > 65_530) throw new ConfigError(`${name}: must be a port, not "${baseEnv[name]}"`);
      return n;
    };
    const pgPort = port('PG_HA_PORT', 5441);
    // Not 2379: the etcd-server package starts a system etcd there.
    const etcdPort = port('ETCD_PORT', 2479);
    const proxyPort = port('HAPROXY_PORT', 5440);
    pgHa = await startPostgresHa({
      pgPorts: [pgPort, pgPort + 1, pgPort + 2],
      apiPorts: [8008, 8009, 8010],
      etcdClientPort: etcdPort,
      etcdPeerPort: etcdPort + 1,
      haproxyPort: proxyPort,
      haproxyReplicaPort: proxyPort + 4,
      log: say,
    }).catch(async (err: unknown) => {
      await redisCluster?.stop();
      throw err;
    });
    pgHa.supervise(say);
    const withDb = (url: string) => Object.assign(new URL(url), { pathname: '/predictions' }).toString();
    baseEnv.DATABASE_URL = withDb(pgHa.primaryUrl);
    baseEnv.DATABASE_READ_URL ??= withDb(pgHa.replicaUrl);
  }
  const infra = await ensureInfra(root, baseEnv, say).catch(async (err: unknown) => {
    await redisCluster?.stop();
    await pgHa?.stop();
    throw err;
  });
  const env: NodeJS.ProcessEnv = {
    ...baseEnv,
    DATABASE_URL: infra.databaseUrl,
    REDIS_URL: infra.redisUrl,
    PRETTY_LOGS: process.env.PRETTY_LOGS ?? '1',
    // glibc gives a thread that allocates under contention an arena of its own, up to eight per core,
    // and each keeps the holes its frees leave. Node's GC and libuv threads allocate too, so a
    // long-running process held more native memory every hour. Two arenas bound that; the Dockerfile
    // sets the same.
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
  };
  const runSim = !values.live && !values['no-sim'];
  if (values.live) Object.assign(env, LIVE_URLS);
  if (values.scenario) env.SIM_SCENARIO = path.resolve(values.scenario);
  if (values.speed) env.SIM_SPEED = values.speed;
  if (runSim) {
    const simPort = env.SIM_PORT ?? '4000';
    for (const k of ['GAMMA_URL', 'CLOB_URL'] as const) env[k] ??= `http://127.0.0.1:${simPort}`;
    for (const k of ['CLOB_WS_URL', 'SPORTS_WS_URL'] as const) env[k] ??= `ws://127.0.0.1:${simPort}`;
    // A world of its own per start: the previous run's ids (still in the database, with calls on
    // them) are never given to different events. Its events 404 from now on, which closes nothing
    // until their absence is confirmed over CATALOG_VANISH_GRACE_SECONDS.
    env.SIM_ID_EPOCH ||= String(Math.floor(Date.now() / 1000));
  }

  // Validate once here so a bad variable is one clear line, not four crashing services.
  const config = parseConfig(env);
  for (const line of infra.describe) say(line);
  await ensureDatabase(config.DATABASE_URL);
  const { applied } = await migrate(config.DATABASE_URL);
  say(applied.length ? `migrated: ${applied.join(', ')}` : 'database schema is current');
  // Cluster mode: the API's reads on a streaming replica of the primary (DATABASE_READ_URL), one of
  // our own unless one is named or PG_REPLICA=0. One that cannot be made is one line, not a stop:
  // the API then reads the primary, as without a replica.
  let pgReplica: PostgresReplica | undefined;
  if (values.cluster && config.DATABASE_READ_URL === undefined && env.PG_REPLICA !== '0') {
    const replicaPort = Number(env.PG_REPLICA_PORT || 5434);
    if (!Number.isInteger(replicaPort) || replicaPort < 1 || replicaPort > 65_535) throw new ConfigError(`PG_REPLICA_PORT: must be a port, not "${env.PG_REPLICA_PORT}"`);
    try {
      pgReplica = await startPostgresReplica({ primaryUrl: config.DATABASE_URL, port: replicaPort, ...(infra.postgresDataDir === undefined ? {} : { primaryDataDir: infra.postgresDataDir }), log: say });
      env.DATABASE_READ_URL = pgReplica.url;
    } catch (err) {
      if (!(err instanceof InfraError)) throw err;
      say(`no read replica (the API reads the primary): ${err.message}`);
    }
  } else if (values.cluster && config.DATABASE_READ_URL !== undefined) {
    say('postgres: the API reads DATABASE_READ_URL (its replica), the primary when that one is away or behind');
  }
  // The services run from their bundles (scripts/lib/build.ts), made from the sources as they are now.
  const built = await buildServices(root);
  say(`services built in ${built.ms} ms`);

  // The simulator's control API (`/_sim/*`: resolve markets, force books) needs a token; the run line
  // makes one unless given one and hands it only to the simulator and the demo crowd.
  const simEnv: NodeJS.ProcessEnv = { ...env, SIM_CONTROL_TOKEN: env.SIM_CONTROL_TOKEN || randomBytes(24).toString('base64url') };
  const serviceEnv: NodeJS.ProcessEnv = { ...env };
  delete serviceEnv.SIM_CONTROL_TOKEN;
  const sim: ServiceSpec = { name: 'exchange-sim', entry: builtEntry('exchange-sim'), env: simEnv, nodeArgs: NODE_ARGS['exchange-sim'] };
  const services: ServiceSpec[] = values.cluster
    ? clusterServices(config, serviceEnv)
    : [
        { name: 'ingestor', entry: builtEntry('ingestor'), env: serviceEnv, nodeArgs: NODE_ARGS.ingestor },
        { name: 'worker', entry: builtEntry('worker'), env: serviceEnv, nodeArgs: NODE_ARGS.worker },
        { name: 'api', entry: builtEntry('api'), env: serviceEnv, nodeArgs: NODE_ARGS.api },
      ];
  // A service that dies is restarted with a growing, capped delay and never takes the others down:
  // a crash-looping ingestor must not stop the API from serving what it has. Every death, restart and
  // crash loop prints the status line, so the one that is failing is named in the terminal.
  const supervisor = createSupervisor({
    cwd: root,
    pretty: config.PRETTY_LOGS,
    onChange: (changed, all) => {
      if (changed.restarts > 0 && changed.state !== 'stopped') say(`status: ${describeStatus(all)}`);
    },
  });
  // The demo crowd (scripts/crowd.ts) makes calls and resolves markets on the simulator, so it runs
  // only with the synthetic simulator (a replayed scenario stays as recorded), and not with CROWD=0.
  const runCrowd = runSim && !values.scenario && env.CROWD !== '0';
  const crowd: ServiceSpec = { name: 'crowd', entry: 'scripts/crowd.ts', env: simEnv, nodeArgs: NODE_ARGS.crowd };

  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    say('stopping…');
    await supervisor.stop(10_000, (name) => name === crowd.name);
    // The services first, the simulator last: their in-flight requests to it then end normally.
    await supervisor.stop(10_000, (name) => name !== sim.name);
    await supervisor.stop();
    await pgReplica?.stop();
    await infra.stop();
    await pgHa?.stop();
    await redisCluster?.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  if (runSim) {
    // The simulator first, so the ingestor's first catalog sync finds it listening.
    supervisor.run([sim]);
    const up = await waitForPort('127.0.0.1', config.SIM_PORT, 15_000);
    if (!up) say(`the simulator is not listening on port ${config.SIM_PORT} yet; starting the services anyway`);
  }
  supervisor.run(services);
  if (runCrowd) supervisor.run([crowd]);
  if (pgHa) say(`postgres HA: Patroni's REST API on http://127.0.0.1:8008/cluster (8009, 8010); kill the leader's Patroni and postmaster (kill -9) to watch a failover`);
  if (values.cluster) say(`API replicas on http://localhost:${config.PORT} and http://localhost:${config.PORT + REPLICA_PORT_STEP} (/api/v1/markets) — Ctrl-C stops everything`);
  else say(`API on http://localhost:${config.PORT}/api/v1/markets, reference at http://localhost:${config.PORT}/api/v1/docs, charts at http://localhost:${config.PORT}/api/v1/charts — Ctrl-C stops everything`);
}


/** The second of each service listens this far above the first (PORT=p: the API replicas on p and p+100). */
const REPLICA_PORT_STEP = 100;

/**
 * Two of each service on one machine, as they would run on two: the replicas differ only in their
 * ports. The ingestors share the markets by leases (INGESTOR_LEASES); workers and outbox relays need
 * nothing (deterministic job ids, SKIP LOCKED); the API replicas share rate limits through Redis.
 */
function clusterServices(config: Config, env: NodeJS.ProcessEnv): ServiceSpec[] {
  const specs: ServiceSpec[] = [];
  for (const n of [1, 2]) {
    const step = (n - 1) * REPLICA_PORT_STEP;
    specs.push(
      { name: `ingestor-${n}`, entry: builtEntry('ingestor'), nodeArgs: NODE_ARGS.ingestor, env: { ...env, INGESTOR_PORT: String(config.INGESTOR_PORT + step), INGESTOR_LEASES: '1' } },
      { name: `worker-${n}`, entry: builtEntry('worker'), nodeArgs: NODE_ARGS.worker, env: { ...env, WORKER_PORT: String(config.WORKER_PORT + step) } },
      {
        name: `api-${n}`,
        entry: builtEntry('api'),
        nodeArgs: NODE_ARGS.api,
        env: {
          ...env,
          PORT: String(config.PORT + step),
          ...(config.API_METRICS_PORT === undefined ? {} : { API_METRICS_PORT: String(config.API_METRICS_PORT + step) }),
        },
      },
    );
  }
  return specs;
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof InfraError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`start failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  }
  process.exit(1);
});
