import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { listenOutbox, outboxPayloadSchemas, type OutboxListener, type OutboxTopic } from '@pm/shared/outbox';
import { queuePrefix, settleJobId, type JobData, type SnapshotTrigger } from '@pm/shared/queues';
import type { Logger } from '@pm/shared/logger';
import { sql, type Db, type Outbox } from '@pm/shared/db';
import type { RecordsDirtyMember, RecordsTrigger } from '@pm/shared/records';

/**
 * The outbox relay (docs/design.md "Storage and the change channel"): claims unsent outbox rows with
 * `for update skip locked`, turns them into jobs, and marks them sent — in one transaction, so a
 * row is marked sent only when its jobs were added. A relay that dies between the adds and the
 * commit leaves the rows unsent; the next pass (here or in another worker) adds them again, which
 * the deterministic job ids (`settle-<marketId>`) and the coalesced, idempotent jobs make harmless.
 * Several relays at once each claim different rows (skip locked) and never wait on each other.
 *
 * Rows become jobs as follows (a batch is merged first, so a burst of records makes one request):
 *   market-resolved → `settle-market` (id `settle-<marketId>`), and the event's rows re-read (its market closed)
 *   records-changed, market-settled → projections and record snapshots (shared/src/records/trigger.ts);
 *                    a settlement projected in its own transaction (`projectedInTx`) only the snapshots
 *   events-changed  → the events' rows re-read, their snapshots rebuilt (shared/src/queues/snapshot-trigger.ts)
 *
 * It wakes on the `outbox` NOTIFY that every insert sends on commit (migration 0002), and polls as
 * well, so a lost LISTEN connection costs at most one poll interval.
 */

export interface OutboxRelayDeps {
  db: Db;
  /** For LISTEN (a dedicated connection; @databases/pg pools do not hold one). Without it: poll only. */
  databaseUrl?: string;
  /** BullMQ's connection (maxRetriesPerRequest: null). */
  connection: Redis;
  prefix: string;
  records: Pick<RecordsTrigger, 'projectionStale' | 'snapshotsDirty'>;
  snapshots: Pick<SnapshotTrigger, 'markCatalogChanged'>;
  logger: Logger;
  /** Rows claimed per transaction. Default 500. */
  batch?: number;
  /** Poll period besides the notifications (ms). Default 1000. */
  pollMs?: number;
  /** Longest a batch's job adds may take before its transaction gives up (ms). Default 10 s. */
  deliverTimeoutMs?: number;
}

export interface OutboxRelay {
  start(): void;
  /** Stop polling and listening; waits for a running pass. */
  stop(): Promise<void>;
  /** Relay until nothing is left that this relay can claim; the number of rows sent. */
  drain(): Promise<number>;
}

/** A claimed row: its topic narrowed to the ones the relay knows, its payload unknown until its topic's schema parses it. */
type OutboxRow = Pick<Outbox, 'id'> & { topic: OutboxTopic; payload: unknown; claimed_at: Date };

/**
 * Settlement jobs: retried with backoff (a Postgres blip). Finished jobs stay visible, capped; while
 * one exists an add of its id is a no-op, which is what collapses repeats — and a completed job
 * means the market's settlement committed (the reconciler replaces one that says otherwise).
 */
export const SETTLE_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: 1000,
  removeOnFail: 1000,
} as const;

async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => {}); // a failure after the deadline is already reported as the deadline
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function createOutboxRelay(deps: OutboxRelayDeps): OutboxRelay {
  const batch = deps.batch ?? 500;
  const pollMs = deps.pollMs ?? 1000;
  const deliverTimeoutMs = deps.deliverTimeoutMs ?? 10_000;
  const log = deps.logger.child({ part: 'outbox-relay' });
  const settlement = new Queue<JobData['settle-market'], unknown, 'settle-market'>('settlement', {
    connection: deps.connection,
    prefix: queuePrefix(deps.prefix),
  });
  settlement.on('error', (err) => log.warn({ err: err.message }, 'settlement queue error'));

  /** Add every job the rows owe; throws when any add fails (the rows then stay unsent). */
  async function deliver(rows: readonly OutboxRow[]): Promise<void> {
    const settle = new Set<string>();
    /** Events whose catalog rows changed: a page written (events-changed), a market resolved (its row closed). */
    const catalog = new Set<string>();
    /** An events-changed row that names no event: every event's rows are re-read. */
    let catalogAll = false;
    const userIds = new Set<string>();
    const marketIds = new Set<string>();
    const dirty = new Set<RecordsDirtyMember>();
    for (const row of rows) {
      const parsed = outboxPayloadSchemas[row.topic].safeParse(row.payload);
      if (!parsed.success) {
        // A malformed row can never be delivered: report it and let it be marked sent, not block the channel.
        log.error({ id: row.id, topic: row.topic, issue: parsed.error.issues[0]?.message }, 'malformed outbox row skipped');
        continue;
      }
      const p = parsed.data;
      if ('eventId' in p) {
        settle.add(p.marketId);
        catalog.add(p.eventId);
      } else if ('eventIds' in p) {
        for (const id of p.eventIds) catalog.add(id);
        if (p.eventIds.length === 0) catalogAll = true;
      } else if ('callIds' in p) {
        if (p.projectedInTx) {
          // Records and boards committed with the settlement: only the boards' snapshots are owed
          // (a person's record is read from Postgres by the API).
          dirty.add('leaderboard');
        } else if (!p.projected) for (const id of p.userIds) userIds.add(String(id));
        // The market names its settled calls (the build remakes those its lists show); the call ids
        // of rows that list them are not needed.
        dirty.add(`market:${p.marketId}`);
        if (p.combos) dirty.add('combos');
      } else {
        for (const id of p.userIds) userIds.add(String(id));
        for (const id of p.marketIds) marketIds.add(id);
        for (const m of p.dirty) dirty.add(m);
      }
    }
    if (settle.size > 0) {
      await settlement.addBulk(
        [...settle].map((marketId) => ({ name: 'settle-market' as const, data: { marketId }, opts: { jobId: settleJobId(marketId), ...SETTLE_JOB_OPTIONS } })),
      );
    }
    if (userIds.size > 0 || marketIds.size > 0) await deps.records.projectionStale({ userIds, marketIds });
    if (dirty.size > 0) await deps.records.snapshotsDirty(dirty);
    // The snapshot trigger never throws (it drops during a Redis outage, by design of the hot path);
    // what it drops the worker's periodic full build and the reconciler restore.
    if (catalog.size > 0) await deps.snapshots.markCatalogChanged(catalog);
    if (catalogAll) await deps.snapshots.markCatalogChanged();
  }

  /** One transaction: claim up to `batch` rows, deliver them, mark them sent. Returns rows sent. */
  async function pass(): Promise<number> {
    return deps.db.tx(async (tx) => {
      // Input: batch size. Output: the oldest unsent rows no other relay holds, locked until commit,
      // each with the moment it was read: after its change committed, before anything it triggers.
      const rows: OutboxRow[] = await tx.query(sql`
        select id, topic, payload, clock_timestamp() as claimed_at from outbox
        where sent_at is null
        order by id
        limit ${batch}
        for update skip locked
      `);
      if (rows.length === 0) return 0;
      // Bounded, so a Redis that does not answer releases the rows (and the connection) instead of
      // holding them locked; adds that land after the deadline are repeated later, harmlessly.
      await withDeadline(deliver(rows), deliverTimeoutMs, 'relaying outbox rows');
      // Input: the claimed ids and when they were read. Output: none. sent_at is that moment, so a
      // projection that started after it saw the change (the reconciler's test of a stale record).
      const claimedAt = new Date(Math.max(...rows.map((r) => r.claimed_at.getTime())));
      await tx.query(sql`update outbox set sent_at = ${claimedAt} where id = any(${rows.map((r) => r.id)}::bigint[])`);
      return rows.length;
    });
  }

  let running: Promise<number> | undefined;
  let again = false;
  let stopped = true;
  let failing = false;

  async function drainOnce(): Promise<number> {
    let sent = 0;
    for (;;) {
      const n = await pass();
      sent += n;
      if (n < batch) return sent;
    }
  }

  /** Run a drain now, or once more after the running one (a notification during a pass is not lost). */
  function kick(): Promise<number> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let sent = 0;
      do {
        again = false;
        sent += await drainOnce();
      } while (again && !stopped);
      return sent;
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  function kickLogged(): void {
    kick().then(
      () => {
        if (failing) log.info('outbox relay recovered');
        failing = false;
      },
      (err: unknown) => {
        // Redis or Postgres away: the rows stay unsent and the next poll tries again. Logged once per outage.
        if (!failing) log.warn({ err: err instanceof Error ? err.message : String(err) }, 'outbox relay pass failed; retrying');
        failing = true;
      },
    );
  }

  let pollTimer: NodeJS.Timeout | undefined;
  let listener: OutboxListener | undefined;

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      if (deps.databaseUrl !== undefined) listener = listenOutbox(deps.databaseUrl, kickLogged, { retryMs: pollMs });
      pollTimer = setInterval(kickLogged, pollMs);
      pollTimer.unref();
      kickLogged();
    },
    async stop() {
      stopped = true;
      clearInterval(pollTimer);
      await listener?.close();
      listener = undefined;
      await running?.catch(() => {});
      await settlement.close();
    },
    drain: () => kick(),
  };
}
