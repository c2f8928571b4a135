/**
 * When to restart a service that died, and when to call it crash-looping (pure; the supervisor
 * applies it). A service is never given up on: one that keeps dying is started again after a delay
 * that doubles with each quick death, up to a cap, so it cannot eat the machine the healthy services
 * share, and it comes back by itself once its cause is gone (the database is up again, the bad
 * deploy is replaced). Kubernetes' CrashLoopBackOff works the same way.
 */

export interface RestartPolicy {
  /** Delay before the first restart. */
  baseMs: number;
  /** The delay never grows beyond this. */
  capMs: number;
  /** A run at least this long was healthy: the next death starts the count again. */
  stableMs: number;
  /** This many quick deaths in a row make a crash loop (reported loudly). */
  loopAfter: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { baseMs: 500, capMs: 30_000, stableMs: 60_000, loopAfter: 5 };

/** What the supervisor remembers about one service's deaths. */
export interface RestartHistory {
  /** Restarts since the run line started. */
  restarts: number;
  /** Deaths in a row, each within `stableMs` of its start. */
  quickDeaths: number;
}

export const NO_RESTARTS: RestartHistory = { restarts: 0, quickDeaths: 0 };

export interface RestartDecision {
  history: RestartHistory;
  delayMs: number;
  crashLooping: boolean;
}

/** Given how long the run that just ended lasted, the next delay and whether this is a crash loop. */
export function onDeath(history: RestartHistory, ranMs: number, policy: RestartPolicy = DEFAULT_RESTART_POLICY): RestartDecision {
  const quickDeaths = ranMs < policy.stableMs ? history.quickDeaths + 1 : 1;
  const delayMs = Math.min(policy.capMs, policy.baseMs * 2 ** (quickDeaths - 1));
  return {
    history: { restarts: history.restarts + 1, quickDeaths },
    delayMs,
    crashLooping: quickDeaths >= policy.loopAfter,
  };
}
