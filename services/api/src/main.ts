import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Redis } from 'ioredis';
import { createRedis } from '@pm/shared/redis';
import { createServiceMetrics } from '@pm/shared/metrics';
import { runService, type Service } from '@pm/shared/ops';
import type { Config } from '@pm/shared/config';
import type { Logger } from '@pm/shared/logger';
import { clusterMetrics, serveMetricsToPrimary } from './ops/cluster-metrics.js';
import { apiReadiness, collectSnapshotAges } from './ops/metrics.js';
import { createApiServer } from './server.js';

/**
 * Composition root of the read API (service.ts does the configuration, logger, ops port, signals):
 * Redis, and either one process serving PORT, or (API_PROCESSES > 1) a node:cluster primary that
 * forks one process per core sharing PORT and serves their summed /metrics on API_METRICS_PORT
 * (README "Metrics").
 */
runService('api', async ({ config, logger }) => {
  const production = config.NODE_ENV === 'production';
  const processes = config.API_PROCESSES ?? (production ? availableParallelism() : 1);
  const metricsPort = config.API_METRICS_PORT ?? (production || processes > 1 ? 9464 : undefined);
  return processes > 1 && cluster.isPrimary ? primary(config, logger, processes, metricsPort ?? 9464) : server(config, logger, metricsPort);
});

/** Fail fast: a request must never wait on a Redis that is away (it answers 503 instead); the client keeps reconnecting. */
function connectRedis(config: Config, logger: Logger): Redis {
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

/** One process serving PORT (alone, or one of the primary's). */
async function server(cfg: Config, logger: Logger, metricsPort: number | undefined): Promise<Service> {
  const inCluster = cluster.isWorker;
  const redis = connectRedis(cfg, logger);
  const api = createApiServer({ config: cfg, redis, logger, publicMetrics: metricsPort === undefined, snapshotAges: !inCluster });
  if (inCluster) serveMetricsToPrimary(api.metrics);
  const { server } = api;
  server.on('error', (err) => {
    logger.fatal({ err }, 'api server failed');
    process.exit(1);
  });
  return {
    ops: !inCluster && metricsPort !== undefined ? { port: metricsPort, metrics: api.metrics, readiness: apiReadiness(redis, cfg.REDIS_PREFIX) } : undefined,
    start: () =>
      new Promise<void>((resolve) =>
        server.listen(cfg.PORT, cfg.HOST, () => {
          const { address, port } = server.address() as AddressInfo;
          logger.info({ address, port, worker: cluster.worker?.id }, 'api listening');
          resolve();
        }),
      ),
    async stop() {
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
      await api.stop();
    },
    close: [() => redis.quit().catch(() => redis.disconnect())],
    shutdownMessage: 'shutting down: no new connections, finishing requests in flight',
  };
}

/** The node:cluster primary: one process per core sharing PORT, their summed /metrics on its ops port. */
async function primary(cfg: Config, logger: Logger, processes: number, metricsPort: number): Promise<Service> {
  const redis = connectRedis(cfg, logger);
  const own = createServiceMetrics('api');
  collectSnapshotAges(own, redis, cfg.REDIS_PREFIX, Date.now);
  let stopping = false;
  const fork = () => cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    // One process down must not take the others with it: replace it, after a pause so a process
    // that dies at start cannot spin.
    logger.error({ worker: worker.id, code, signal }, 'api process exited; starting another');
    setTimeout(fork, 1_000).unref();
  });
  return {
    ops: { port: metricsPort, metrics: clusterMetrics(own), readiness: apiReadiness(redis, cfg.REDIS_PREFIX) },
    async start() {
      for (let i = 0; i < processes; i++) fork();
      logger.info({ processes }, 'api primary started');
    },
    async stop() {
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
    },
    close: [() => redis.quit().catch(() => redis.disconnect())],
    shutdownMessage: 'shutting down the api processes',
  };
}
