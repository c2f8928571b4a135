import type { Logger, SnapshotTrigger } from '@pm/shared';

/** What the ingestor needs of the snapshot trigger (`createSnapshotTrigger` in @pm/shared). */
export type SnapshotTriggerLike = Pick<SnapshotTrigger, 'markEventsDirty' | 'markCatalogChanged' | 'close'>;

/**
 * Collects the events whose snapshots went stale and hands them to the snapshot trigger at most
 * every `intervalMs` (default 100 ms): a busy book changes hundreds of times a second, and each
 * trigger call is a Redis round trip plus a job enqueue.
 */
export interface DirtyEvents {
  mark(eventId: string): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createDirtyEvents(opts: { trigger: SnapshotTriggerLike; logger: Logger; intervalMs?: number }): DirtyEvents {
  const intervalMs = opts.intervalMs ?? 100;
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return inFlight;
    const batch = pending;
    pending = new Set();
    inFlight = inFlight.then(() =>
      opts.trigger.markEventsDirty(batch).catch((err: unknown) => {
        opts.logger.warn({ err, events: batch.size }, 'marking events dirty failed; will retry');
        for (const id of batch) pending.add(id);
        schedule();
      }),
    );
    return inFlight;
  }

  function schedule() {
    if (!timer) timer = setTimeout(() => void flush(), intervalMs);
  }

  return {
    mark(eventId) {
      pending.add(eventId);
      schedule();
    },
    flush,
    async close() {
      await flush();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
