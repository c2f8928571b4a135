/**
 * Redis layout (`@pm/shared/redis`): every key a service reads or writes, built from the stack's
 * prefix, and the snapshot announcement (write + pub/sub message). No client is created here.
 */
export * from './keys.js';
export * from './snapshot-announce.js';
