/** Waiting, in one place: a pause, and polling with a deadline. */

/** Resolves after `ms` milliseconds: a pacing or back-off delay, never a stand-in for waiting on a condition. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `check` until it gives a value other than undefined, null or false, and returns it. A check
 * that throws counts as "not yet"; the last error is reported if time runs out, together with
 * `context()` (typically the stack's recent logs), so a timeout says what was seen.
 */
export async function until<T>(
  what: string | (() => string),
  check: () => Promise<T | undefined | null | false>,
  options: { timeoutMs: number; everyMs?: number; context?: () => string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let last: unknown;
  // Checks only before the deadline: a bound like "within 90 s" must not pass on a late last look.
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value;
    } catch (err) {
      last = err;
    }
    await sleep(options.everyMs ?? 250);
  }
  const described = typeof what === 'string' ? what : what();
  const context = options.context?.().slice(-3000);
  throw new Error(`timed out waiting for ${described}${last ? `: ${String(last)}` : ''}${context ? `\n${context}` : ''}`);
}

/**
 * Reads until `ok` holds, or time runs out, and returns the last value read either way, so the
 * assertions that follow say what was seen instead of a bare timeout.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  options: { timeoutMs: number; everyMs?: number },
): Promise<T> {
  let last: { value: T } | undefined;
  try {
    return (
      await until(
        'a value that passes',
        async () => {
          last = { value: await read() };
          return ok(last.value) ? last : undefined;
        },
        options,
      )
    ).value;
  } catch {
    return last ? last.value : read();
  }
}

/**
 * The promise's outcome, or a rejection naming `what` once `ms` pass first (the promise is left to
 * settle on its own). For a call that must not hang on a server that stopped answering: a Redis
 * command parked across a cluster failover waits for ever under `maxRetriesPerRequest: null`.
 */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  promise.catch(() => {});
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
