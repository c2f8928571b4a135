/**
 * The ingestor's one batching writer (chances, dirty events, games, price history, feed health):
 * leading edge plus a guaranteed trailing edge.
 *
 * - A request while nothing is being written starts a write on the next turn of the event loop
 *   (`setImmediate`), so every change of the frames being read right now goes in one write; with
 *   `delayMs`, after that long instead (games: a busy channel's frames go in one statement).
 * - A request while a write is in flight is never lost and never waits for a later change: the
 *   next write starts as soon as the current one returns, and carries everything asked meanwhile.
 *   A busy feed is thus batched by the round trip itself (one write per round trip), a quiet one
 *   is written at once.
 * - A failed write is retried after `retryMs`, doubling up to `maxRetryMs` while it keeps failing,
 *   so a Redis outage costs a retry now and then instead of a tight loop.
 *
 * `write` takes its own batch (whatever is pending when it starts) and throws when the batch must
 * be written again (it puts the batch back first).
 */

export interface CoalescedWrite {
  /** Ask for a write of whatever is pending. */
  request(): void;
  /**
   * Resolves once everything requested before the call has been written (true) or its write failed
   * (false; retried later): waits for the write in flight, then writes what is still pending at once.
   */
  flush(): Promise<boolean>;
  /** Cancels a scheduled (not yet started) write; `flush` first to keep what is pending. */
  close(): void;
}

export function createCoalescedWrite(opts: {
  write: () => Promise<void>;
  onError: (err: unknown) => void;
  /** Wait this long after the first request of a batch before writing it; default 0 (next turn). */
  delayMs?: number;
  retryMs?: number;
  maxRetryMs?: number;
}): CoalescedWrite {
  const delayMs = opts.delayMs ?? 0;
  const retryMs = opts.retryMs ?? 250;
  const maxRetryMs = opts.maxRetryMs ?? 5_000;
  /** Requests so far; the number a write started at; the number the last finished write started at. */
  let asked = 0;
  let taken = 0;
  let finished = 0;
  let active: Promise<boolean> | undefined;
  let scheduled: { cancel(): void } | undefined;
  let failures = 0;
  const pending = () => taken < asked;

  function start(): Promise<boolean> {
    scheduled?.cancel();
    scheduled = undefined;
    const upTo = asked;
    taken = upTo;
    const run = opts.write().then(
      () => {
        failures = 0;
        return true;
      },
      (err: unknown) => {
        failures++;
        // The batch went back to the pending ones: ask again, after the backoff.
        asked++;
        opts.onError(err);
        return false;
      },
    );
    active = run.finally(() => {
      active = undefined;
      finished = upTo;
      if (pending()) schedule();
    });
    return active;
  }

  function schedule() {
    if (active !== undefined || scheduled !== undefined) return;
    if (failures === 0 && delayMs > 0) {
      const timer = setTimeout(() => void start(), delayMs);
      scheduled = { cancel: () => clearTimeout(timer) };
    } else if (failures === 0) {
      const immediate = setImmediate(() => void start());
      scheduled = { cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(() => void start(), Math.min(maxRetryMs, retryMs * 2 ** (failures - 1)));
      timer.unref();
      scheduled = { cancel: () => clearTimeout(timer) };
    }
  }

  return {
    request() {
      asked++;
      schedule();
    },
    async flush() {
      const target = asked;
      let ok = true;
      // At most two rounds: the write in flight, then one that takes everything asked up to `target`.
      while (finished < target) ok = await (active ?? start());
      return ok;
    },
    close() {
      scheduled?.cancel();
      scheduled = undefined;
    },
  };
}
