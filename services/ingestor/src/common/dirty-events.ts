import type { Logger } from '@pm/shared/logger';
import type { SnapshotTrigger } from '@pm/shared/queues';
import { createCoalescedWrite } from './coalesced-write.js';

/** What the ingestor needs of the snapshot trigger (`createSnapshotTrigger` in @pm/shared). */
export type SnapshotTriggerLike = Pick<SnapshotTrigger, 'markEventsDirty' | 'markCatalogChanged' | 'close'>;

/**
 * Collects the events whose snapshots went stale and hands them to the snapshot trigger, one call
 * at a time: the first mark after a quiet spell at once, marks arriving during a call in the next
 * call as soon as it returns (coalesced-write.ts), so a busy book costs a trigger call per round
 * trip and the last change before a silence is handed on without waiting for another.
 *
 * `before` runs ahead of each call: the writes the rebuild reads (the chance publisher's flush). A
 * build pops the marks and reads the chances then; a mark that overtook its chance would rebuild the
 * old price and, with nothing left to mark the event again, keep showing it (15 s).
 */
export interface DirtyEvents {
  mark(eventId: string): void;
  flush(): Promise<boolean>;
  close(): Promise<void>;
}

export function createDirtyEvents(opts: {
  trigger: SnapshotTriggerLike;
  logger: Logger;
  /** False: what the build needs is not written yet; the marks wait for the retry. */
  before?: () => Promise<boolean>;
}): DirtyEvents {
  let pending = new Set<string>();

  async function write(): Promise<void> {
    if (pending.size === 0) return;
    // Taken before `before` runs: what it writes covers every mark taken here, not later ones.
    const batch = pending;
    pending = new Set();
    try {
      if (opts.before !== undefined && !(await opts.before())) throw new Error('chances not written yet');
      await opts.trigger.markEventsDirty(batch);
    } catch (err) {
      for (const id of batch) pending.add(id);
      throw err;
    }
  }

  const writer = createCoalescedWrite({
    write,
    onError: (err) => opts.logger.warn({ err, events: pending.size }, 'marking events dirty failed; will retry'),
  });

  return {
    mark(eventId) {
      pending.add(eventId);
      writer.request();
    },
    flush: () => writer.flush(),
    async close() {
      await writer.flush();
      writer.close();
    },
  };
}
