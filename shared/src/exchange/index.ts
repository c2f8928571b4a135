/** The exchange's wire formats (docs/protocol.md), parsed leniently with zod. Shared by the ingestor, recorder and replayer. */
export * from './lenient.js';
export * from './gamma.js';
export * from './market-ws.js';
export * from './sports.js';
