import { loadConfig, type Config } from '../config.js';
import { createLogger, type Logger } from '../logger.js';
import type { ServiceMetrics, ServiceName } from '../metrics.js';
import { startedCheck, startOpsServer, type ReadinessCheck } from './ops.js';
import { onShutdown } from './shutdown.js';

/** What a service's composition root hands the bootstrap (`runService`). */
export interface Service {
  /**
   * The ops port (`/healthz`, `/readyz`, `/metrics`), up before `start` so health answers while the
   * start-up work runs; `/readyz` adds a `started` check that holds until `start` resolved.
   */
  ops?: { port: number; metrics: ServiceMetrics<ServiceName>; readiness: Record<string, ReadinessCheck> };
  /** The start-up work (initial sync, first build, listen). */
  start(): Promise<void>;
  /** On SIGTERM/SIGINT: the service's own stop first, then the ops server, then `close` in order. */
  stop(): Promise<void>;
  /** Pools and connections, closed last. */
  close?: ReadonlyArray<() => Promise<unknown>>;
  /** Logged when the shutdown begins; default "shutting down". */
  shutdownMessage?: string;
}

/**
 * Every service's bootstrap: configuration parsed once (an invalid variable stops the process with
 * its name), the logger, the service built by `build`, its ops server, graceful shutdown on
 * SIGTERM/SIGINT within the deadline (shutdown.ts), then its start. A failure before it runs is
 * written to stderr and exits 1, so a supervisor restarts it.
 */
export function runService(name: string, build: (ctx: { config: Config; logger: Logger }) => Promise<Service>): void {
  const main = async () => {
    const config = loadConfig();
    const logger = createLogger(name, config);
    const service = await build({ config, logger });
    let started = false;
    const ops = service.ops
      ? await startOpsServer({
          host: config.OPS_HOST,
          port: service.ops.port,
          metrics: service.ops.metrics,
          readiness: { ...service.ops.readiness, started: startedCheck(() => started, `the ${name}`) },
          logger,
        })
      : undefined;
    onShutdown(
      async () => {
        await service.stop();
        await ops?.close();
        for (const close of service.close ?? []) await close();
      },
      { logger, ...(service.shutdownMessage ? { message: service.shutdownMessage } : {}) },
    );
    await service.start();
    started = true;
    logger.info(`${name} running`);
  };
  main().catch((err: unknown) => {
    process.stderr.write(`${name} failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
