/**
 * A worker process the settlement test kills mid-job (SIGKILL): a BullMQ Worker on the settlement
 * queue running the real `settle-market` processor, with a short lock so that the job it leaves
 * behind is found stalled quickly. Configuration arrives as JSON on argv[2].
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createLogger } from '@pm/shared/logger';
import { queuePrefix } from '@pm/shared/queues';
import { createDb } from '@pm/shared/db';
import { createSettleMarketProcessor } from './processor.js';

const { databaseUrl, redisUrl, prefix, partCalls } = JSON.parse(process.argv[2] ?? '{}') as { databaseUrl: string; redisUrl: string; prefix: string; partCalls?: number };
const db = createDb(databaseUrl, { poolSize: 2 });
const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
const logger = createLogger('kill-child', { LOG_LEVEL: 'silent' });
const worker = new Worker('settlement', createSettleMarketProcessor({ db, logger, parts: { partCalls } }), {
  connection: redis,
  prefix: queuePrefix(prefix),
  lockDuration: 1500,
  // Its stalled-check throttle key would otherwise hold the next worker's check off for 30 s.
  stalledInterval: 500,
  // Killed over and over (the fault test of a settlement in parts): the job is stalled each time
  // and must be picked up again, not failed after the first stalls.
  maxStalledCount: 1000,
});
worker.on('error', () => {}); // the connection dies with the kill; nothing to report
