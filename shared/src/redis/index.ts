/**
 * Redis layout (`@pm/shared/redis`): every key a service reads or writes, built from the stack's
 * prefix (hash-tagged for Redis Cluster), the snapshot announcement (write + pub/sub message), and
 * the one factory that turns REDIS_URL into a client — one server or a Redis Cluster.
 */
export * from './keys.js';
export * from './snapshot-announce.js';
export * from './connection.js';
export * from './batches.js';
export * from './take-sets.js';
