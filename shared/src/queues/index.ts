/**
 * BullMQ queues (`@pm/shared/queues`): the closed union of queue and job names with their data, the
 * deterministic job ids, and the snapshot trigger producers use. Loads BullMQ: never for the API.
 */
export * from './names.js';
export * from './snapshot-trigger.js';
export * from './key-families.js';
