import cluster from 'node:cluster';
import type { Logger } from 'pino';

/** Longest a shutdown may take before the process exits anyway (orchestrators' grace periods are longer). */
export const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * A service's stop on SIGTERM or SIGINT, once: log, run `stop` (the service's own steps, in its
 * order), exit 0; exit 1 when a step throws or the deadline passes first.
 *
 * Started by a parent with an IPC channel (the run line's supervisor), the service also stops when
 * that channel closes: the parent is gone, however it died (SIGKILL included), and nothing would
 * ever stop the service otherwise; it would keep its ports and its share of the machine. (A node:cluster
 * worker is left to its primary, which stops it.)
 */
export function onShutdown(
  stop: () => Promise<void>,
  options: { logger: Logger; deadlineMs?: number; message?: string },
): void {
  const { logger } = options;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, options.message ?? 'shutting down');
    setTimeout(() => {
      logger.error('shutdown deadline passed; exiting');
      process.exit(1);
    }, options.deadlineMs ?? SHUTDOWN_DEADLINE_MS).unref();
    stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // `process.send` exists in a process started with an IPC channel, also after it closed: a parent
  // that died while this process was still starting (before this line) is noticed here.
  if (typeof process.send === 'function' && !cluster.isWorker) {
    if (process.connected) process.once('disconnect', () => shutdown('parent gone'));
    else shutdown('parent gone');
  }
}
