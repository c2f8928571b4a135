/**
 * The demo crowd (`npm run crowd`; the run line starts it beside the simulator unless CROWD=0):
 * people making calls, copies, fades, thesis updates and combos through the service's own write
 * path, and resolving markets on the SIMULATOR so every status shows up within a minute. See
 * scripts/lib/crowd/crowd.ts. Never point it at the real exchange: it needs the simulator's
 * `/_sim/resolve` control (CROWD_SIM_URL, default http://127.0.0.1:$SIM_PORT) and its token
 * (SIM_CONTROL_TOKEN; the run line hands the same one to both).
 */
import { createLogger } from '@pm/shared/logger';
import { loadConfig } from '@pm/shared/config';
import { createRedis } from '@pm/shared/redis';
import { createDb, migrate } from '@pm/shared/db';
import { createRecords } from '@pm/shared/records';
import { onShutdown } from '@pm/shared/ops';
import { parseCli } from './lib/cli.js';
import { createCrowd } from './lib/crowd/crowd.js';

const USAGE = `usage: npm run crowd

The demo crowd: about 30 people making calls, copies, fades, thesis updates and combos through the
write path, and resolving markets on the simulator so every status shows up within a minute. The
run line (npm start) starts it beside the simulator unless CROWD=0. Needs the simulator's control
API: CROWD_SIM_URL (default http://127.0.0.1:$SIM_PORT) and SIM_CONTROL_TOKEN. Never against the
real exchange. CROWD_RATE=N makes it N times as busy (npm run soak uses 10).

options:
  -h, --help  this text`;

async function main(): Promise<void> {
  parseCli({ command: 'crowd', usage: USAGE, options: {} });
  const config = loadConfig();
  const logger = createLogger('crowd', config);
  await migrate(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, { poolSize: 3 });
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: null });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const records = createRecords({ db, redis, prefix: config.REDIS_PREFIX, logger });
  const simUrl = (process.env.CROWD_SIM_URL ?? `http://127.0.0.1:${config.SIM_PORT}`).replace(/\/+$/, '');
  if (!config.SIM_CONTROL_TOKEN) logger.warn('SIM_CONTROL_TOKEN is not set: the simulator will refuse the crowd\'s resolutions (the run line sets it)');
  // CROWD_RATE speeds the crowd up (the soak runs it at 10): a call every 3 s / rate, a resolution every 90 s / rate.
  const rate = Number(process.env.CROWD_RATE || 1);
  if (!Number.isFinite(rate) || rate <= 0) throw new Error(`CROWD_RATE must be a positive number, not "${process.env.CROWD_RATE}"`);
  const crowd = createCrowd({
    records,
    db,
    redis,
    prefix: config.REDIS_PREFIX,
    simUrl,
    simToken: config.SIM_CONTROL_TOKEN,
    logger,
    everyMs: 3000 / rate,
    resolveEveryMs: 90_000 / rate,
  });

  // As every service: SIGTERM/SIGINT, or the run line gone (its IPC channel closed), within the deadline.
  onShutdown(
    async () => {
      await crowd.stop();
      await records.close();
      await db.dispose();
      await redis.quit();
    },
    { logger, message: 'crowd stopping' },
  );

  await crowd.start();
  logger.info({ simUrl }, 'crowd started');
}

main().catch((err: unknown) => {
  process.stderr.write(`crowd failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
