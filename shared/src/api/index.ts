export * from './resources.js';
export * from './records-resources.js';
export * from './endpoints.js';
export * from './openapi.js';
export * from './live-examples.js';
export * from './stream.js';
