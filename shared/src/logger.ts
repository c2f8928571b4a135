import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

export type { Logger };

/** JSON logs to stdout (one line per record), with the service name on every line. */
export function createLogger(service: string, config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino({
    name: service,
    level: config.LOG_LEVEL,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
