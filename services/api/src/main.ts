import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Redis } from 'ioredis';
import { createLogger, type Logger } from '@pm/shared/logger';
import { createServiceMetrics } from '@pm/shared/metrics';
import { loadConfig, type Config } from '@pm/shared/config';
import { onShutdown, startOpsServer } from '@pm/shared/ops';
import { createRedis } from '@pm/shared/redis';
import { clusterMetrics, serveMetricsToPrimary } from './cluster-metrics.js';
import { apiReadiness, collectSnapshotAges } from './metrics.js';
import { createApiServer } from './server.js';

/**
 * Composition root of the read API: configuration, logger, Redis, and either one process serving
 * PORT, or (API_PROCESSES > 1) a node:cluster primary that forks one process per core sharing PORT
 * and serves their summed /metrics on API_METRICS_PORT (README "Metrics").
 */

const config = loadConfig();
const production = config.NODE_ENV === 'production';
const processes = config.API_PROCESSES ?? (production ? availableParallelism() : 1);
const metricsPort = config.API_METRICS_PORT ?? (production || processes > 1 ? 9464 : undefined);

/** Fail fast: a request must never wait on a Redis that is away (it answers 503 instead); the client keeps reconnecting. */
function connectRedis(logger: Logger): Redis {
  const redis = createRedis(config.REDIS_URL, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // Concurrent requests' rate-limit scripts and snapshot reads share one write to Redis.
    enableAutoPipelining: true,
    connectTimeout: 2_000,
    commandTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  let redisDown = false;
  redis.on('error', (err) => {
    if (!redisDown) logger.error({ err }, 'redis connection error');
    redisDown = true;
  });
  redis.on('ready', () => {
    if (redisDown) logger.info('redis connection restored');
    redisDown = false;
  });
  return redis;
}

if (processes > 1 && cluster.isPrimary) runPrimary(config);
else await runServer(config);

async function runServer(cfg: Config): Promise<void> {
  const inCluster = cluster.isWorker;
  const logger = createLogger('api', cfg);
  const redis = connectRedis(logger);
  const api = createApiServer({ config: cfg, redis, logger, publicMetrics: metricsPort === undefined, snapshotAges: !inCluster });
  if (inCluster) serveMetricsToPrimary(api.metrics);
  const ops =
    !inCluster && metricsPort !== undefined
      ? await startOpsServer({ host: cfg.OPS_HOST, port: metricsPort, metrics: api.metrics, readiness: apiReadiness(redis, cfg.REDIS_PREFIX), logger })
      : undefined;
  const { server } = api;
  server.listen(cfg.PORT, cfg.HOST, () => {
    const { address, port } = server.address() as AddressInfo;
    logger.info({ address, port, worker: cluster.worker?.id }, 'api listening');
  });
  server.on('error', (err) => {
    logger.fatal({ err }, 'api server failed');
    process.exit(1);
  });

  onShutdown(
    async () => {
      const closed = new Promise<void>((resolve) =>
        server.close((err) => {
          if (err) logger.warn({ err }, 'server close');
          resolve();
        }),
      );
      // Idle keep-alive connections would otherwise hold close() open until they time out; so would a
      // connection whose request finishes after this point, hence the sweep until the server is closed.
      server.closeIdleConnections();
      setInterval(() => server.closeIdleConnections(), 100).unref();
      // Open event streams never finish on their own: end them (clients reconnect with their last id).
      await api.closeStreams();
      await closed;
      await ops?.close();
      await api.stop();
      await redis.quit().catch(() => redis.disconnect());
    },
    { logger, message: 'shutting down: no new connections, finishing requests in flight' },
  );
}

function runPrimary(cfg: Config): void {
  const logger = createLogger('api', cfg);
  const redis = connectRedis(logger);
  const own = createServiceMetrics('api');
  collectSnapshotAges(own, redis, cfg.REDIS_PREFIX, Date.now);
  let stopping = false;
  const fork = () => cluster.fork();
  for (let i = 0; i < processes; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    // One process down must not take the others with it: replace it, after a pause so a process
    // that dies at start cannot spin.
    logger.error({ worker: worker.id, code, signal }, 'api process exited; starting another');
    setTimeout(fork, 1_000).unref();
  });
  const opsServer = startOpsServer({
    host: cfg.OPS_HOST,
    port: metricsPort ?? 9464,
    metrics: clusterMetrics(own),
    readiness: apiReadiness(redis, cfg.REDIS_PREFIX),
    logger,
  });
  logger.info({ processes }, 'api primary started');

  onShutdown(
    async () => {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
      await Promise.all(
        workers.map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.isDead()) return resolve();
              w.once('exit', () => resolve());
              w.process.kill('SIGTERM');
            }),
        ),
      );
      await (await opsServer).close();
      await redis.quit().catch(() => redis.disconnect());
    },
    { logger, message: 'shutting down the api processes' },
  );
}
