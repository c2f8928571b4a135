import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { createLogger, loadConfig, onShutdown } from '@pm/shared';
import { createApp } from './app.js';

/** Composition root of the read API: configuration, logger, Redis, the app, and a graceful stop. */

const config = loadConfig();
const logger = createLogger('api', config);

// Fail fast: a request must never wait on a Redis that is away (it answers 503 instead); the client
// keeps reconnecting in the background.
const redis = new Redis(config.REDIS_URL, {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
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

const app = createApp({ config, redis, logger });
const server = app.listen(config.PORT, config.HOST, () => {
  const { address, port } = server.address() as AddressInfo;
  logger.info({ address, port }, 'api listening');
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
    await closed;
    await redis.quit().catch(() => redis.disconnect());
  },
  { logger, message: 'shutting down: no new connections, finishing requests in flight' },
);
