import { sleep } from '../wait.js';
import { RecordsUnavailable } from './errors.js';
import { newPublicId } from './ids.js';

/**
 * The client's side of a write in doubt (docs/design.md "Writes in doubt"): a write sent with an
 * idempotency key that failed with RecordsUnavailable (the connection was lost, Postgres restarted or
 * failed over) is sent again with the same key until it is answered or `timeoutMs` has passed — a
 * failover takes tens of seconds. A refusal or any other error ends it at once. Only for writes that
 * carry a key: without one, a retry of a commit whose answer was lost records the write twice.
 */
export async function retryInDoubt<T>(
  write: () => Promise<T>,
  opts: { timeoutMs?: number; delaysMs?: readonly number[]; onRetry?: (err: RecordsUnavailable, attempt: number) => void } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const delays = opts.delaysMs ?? [200, 500, 1000, 2000];
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof RecordsUnavailable)) throw err;
      const delay = delays[Math.min(attempt - 1, delays.length - 1)]!;
      if (Date.now() + delay > deadline) throw err;
      opts.onRetry?.(err, attempt);
      await sleep(delay);
    }
  }
}

/** A fresh idempotency key for one write: 22 random base62 characters (about 130 bits). */
export function newWriteKey(): string {
  return newPublicId(22);
}
