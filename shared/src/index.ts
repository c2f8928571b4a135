export * from './config.js';
export * from './logger.js';
export * from './queues.js';
export * from './redis/keys.js';
export * from './snapshots.js';
export * from './api/resources.js';
export * from './db/index.js';
export * from './snapshot-trigger.js';
