export * from './writer.js';
export * from './entries.js';
export * from './messages.js';
