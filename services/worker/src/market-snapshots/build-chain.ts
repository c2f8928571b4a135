import type { Logger } from '@pm/shared/logger';

export interface BuildRequest {
  full?: boolean;
  /** Why the build was asked for (job, start-up, rebuild): logged with its stats. */
  reason?: string;
}

export interface BuildChain<S> {
  build(opts?: BuildRequest): Promise<S>;
  /** Resolves once no build is running or queued in this process. */
  idle(): Promise<void>;
}

/**
 * Builds of one family never overlap within a process, whether they come from a job, the start-up
 * build or a test calling `build` directly: each runs after the previous one settled (a failed one
 * included). The event snapshots and the record snapshots are both run through this chain.
 */
export function createBuildChain<S extends object>(run: (full: boolean) => Promise<S>, logger: Logger, what: string): BuildChain<S> {
  let chain: Promise<unknown> = Promise.resolve();
  return {
    build(opts = {}) {
      const next = chain.then(() => run(opts.full === true));
      chain = next.catch(() => {});
      return next.then((stats) => {
        const fields: Record<string, unknown> = { ...stats, reason: opts.reason };
        logger.debug(fields, `${what} built`);
        return stats;
      });
    },
    async idle() {
      let seen: Promise<unknown>;
      do {
        seen = chain;
        await seen;
      } while (seen !== chain);
    },
  };
}
