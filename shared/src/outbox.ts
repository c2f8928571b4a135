import pg from 'pg';
import { z } from 'zod';
import { sql, type Db } from './db/connection.js';

/**
 * The change channel (docs/design.md "Storage and the change channel"): a change that must cause work
 * elsewhere writes an `outbox` row in the SAME transaction as the change, through `writeOutbox`.
 * The worker's relay turns rows into jobs; nothing commits and then enqueues as a separate step.
 *
 * Topics are past-tense facts; each payload is parsed by the relay with the schema below, so a row
 * written by an older or buggy producer is reported instead of crashing the relay.
 */

/** Members of the record snapshot dirty set (see shared/src/records/trigger.ts). */
const dirtyMember = z.union([
  z.templateLiteral(['call:', z.string().min(1)]),
  z.templateLiteral(['user:', z.union([z.string().min(1), z.number()])]),
  z.templateLiteral(['market:', z.string().min(1)]),
  z.literal('combos'),
  z.literal('leaderboard'),
]);

export const outboxPayloadSchemas = {
  /** A market resolved (ws or catalog): settle it; its event's snapshots changed. */
  'market-resolved': z.object({ marketId: z.string().min(1), eventId: z.string().min(1) }),
  /** A person, follow, call, thesis update or combo was recorded. */
  'records-changed': z.object({
    userIds: z.array(z.union([z.string(), z.number()])).default([]),
    marketIds: z.array(z.string()).default([]),
    dirty: z.array(dirtyMember).default([]),
  }),
  /** A market's calls and legs were settled. */
  'market-settled': z.object({
    marketId: z.string().min(1),
    userIds: z.array(z.union([z.string(), z.number()])).default([]),
    /** Written by earlier workers; the market names its calls, and nothing reads these. */
    callIds: z.array(z.string()).default([]),
    combos: z.boolean().default(false),
    /**
     * The people's records and the boards were projected in the settlement's own transaction
     * (settle-market.ts): the relay asks only for the boards' snapshots (`leaderboard`), and
     * the reconciler has nothing to re-project for this row.
     */
    projectedInTx: z.boolean().default(false),
    /**
     * Rows of an earlier worker: its job projected these people right after the commit, so the relay
     * asks no projection of them; should it have died first, the reconciler re-projects people named
     * in recent rows whose records are older than `writtenAt` (ISO, the last statement before the commit).
     */
    projected: z.boolean().default(false),
    writtenAt: z.string().optional(),
  }),
  /** Catalog rows of these events changed (catalog sync). */
  'events-changed': z.object({ eventIds: z.array(z.string()).default([]) }),
} as const;

export type OutboxTopic = keyof typeof outboxPayloadSchemas;
export type OutboxPayload<T extends OutboxTopic> = z.input<(typeof outboxPayloadSchemas)[T]>;

/** A transaction handle (what `db.tx` passes its callback), or the pool for a single statement. */
type Queryable = Pick<Db, 'query'>;

/**
 * Write one outbox row. Call it inside the transaction of the change it announces, so the row
 * exists exactly when the change does. The insert notifies the relays (channel `outbox`) on commit.
 */
export async function writeOutbox<T extends OutboxTopic>(tx: Queryable, topic: T, payload: OutboxPayload<T>): Promise<void> {
  // Input: topic, payload (JSON). Output: none.
  await tx.query(sql`insert into outbox (topic, payload) values (${topic}, ${JSON.stringify(payload)}::jsonb)`);
}

/** The Postgres NOTIFY channel the outbox trigger signals on (migration 0002). */
export const OUTBOX_CHANNEL = 'outbox';

export interface OutboxListener {
  close(): Promise<void>;
}

/**
 * LISTEN on the outbox channel over a dedicated connection (a pool cannot hold one), calling
 * `onNotify` for every commit that wrote outbox rows and once after each (re)connect, since rows
 * may have been written while nobody listened. A lost connection is reopened after `retryMs`.
 */
export function listenOutbox(databaseUrl: string, onNotify: () => void, opts: { retryMs?: number } = {}): OutboxListener {
  const retryMs = opts.retryMs ?? 1000;
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  function connect(): void {
    if (closed) return;
    const c = new pg.Client({ connectionString: databaseUrl });
    client = c;
    const reopen = () => {
      if (client !== c) return;
      client = undefined;
      c.end().catch(() => {});
      if (!closed) timer = setTimeout(connect, retryMs).unref();
    };
    c.on('error', reopen);
    c.on('end', reopen);
    c.on('notification', () => onNotify());
    c.connect()
      .then(() => c.query(`listen ${OUTBOX_CHANNEL}`))
      .then(() => onNotify())
      .catch(reopen);
  }
  connect();

  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
