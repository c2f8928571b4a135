import type { Logger } from '@pm/shared/logger';
import { sql, tables, type Db } from '@pm/shared/db';
import { writeOutbox } from '@pm/shared/outbox';
import { isConnectionLoss, isLockConflict } from '@pm/shared/records';
import { sleep } from '@pm/shared/wait';
import { recordClosingChances, type LiveChances } from './closing-chances.js';

/**
 * MarketResolved, from either source (the ws `market_resolved` message, or the catalog showing a
 * closed market with final prices): log it in `market_resolutions`, mark the market resolved, and
 * write a `market-resolved` outbox row — all in ONE transaction (pg-typed single-table statements),
 * so the resolution and the owed settlement commit together. The worker's relay turns the row into the `settle-market` job (id
 * `settle-<marketId>`), and its reconciler settles any resolved market left with open calls, so
 * nothing here remembers what it already asked for: Postgres does.
 *
 * The first source to arrive decides the row (on conflict do nothing); repeats (the catalog lists a
 * closed market on every sync) change nothing and write no outbox row. That also makes the statement
 * safe to retry: a Postgres blip (a restart, a dropped connection) or a lost lock conflict is
 * retried with a short backoff, because the ws message that brought the resolution will not come
 * again.
 */

/** A resolution as a source reports it (the ws `market_resolved` message, or the catalog). */
export interface MarketResolution {
  marketId: string;
  /** Null when voided. */
  winningOutcomeIndex: number | null;
  voided: boolean;
  source: 'ws' | 'catalog';
}

export interface ResolutionRecorderOptions {
  db: Db;
  logger: Logger;
  /** The displayed chances the market's closing chances are taken from (closing-chances.ts); absent: catalog prices only. */
  liveChances?: LiveChances;
  /** Delays before each retry after a lost connection or a lost lock conflict. Default 0.5, 1, 2, 4, 8 s (about 15 s in all). */
  retryDelaysMs?: readonly number[];
}

export interface ResolutionRecorder {
  /** Record a resolution (and the settlement it owes). Unknown markets are ignored (returns false). */
  resolve(resolution: MarketResolution): Promise<boolean>;
  /** Resolves once every resolution begun before the call was recorded or gave up (flush, tests). */
  idle(): Promise<void>;
}


export function createResolutionRecorder(opts: ResolutionRecorderOptions): ResolutionRecorder {
  const retryDelays = opts.retryDelaysMs ?? [500, 1000, 2000, 4000, 8000];

  const inFlight = new Set<Promise<unknown>>();

  function resolve(r: MarketResolution): Promise<boolean> {
    const run = resolveWithRetries(r);
    const tracked = run.catch(() => {}).finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    return run;
  }

  async function resolveWithRetries(r: MarketResolution): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await resolveOnce(r);
      } catch (err) {
        const delay = retryDelays[attempt];
        const lost = isConnectionLoss(err);
        if (!(lost || isLockConflict(err)) || delay === undefined) throw err;
        opts.logger.warn(
          { err: err instanceof Error ? err.message : String(err), marketId: r.marketId, attempt: attempt + 1 },
          lost ? 'postgres unavailable while recording a resolution; retrying' : 'recording a resolution lost a lock conflict; retrying',
        );
        await sleep(delay);
      }
    }
  }

  async function resolveOnce(r: MarketResolution): Promise<boolean> {
    // Input: market id, winning outcome index (null when void), voided, source.
    // Output: whether the market is known and whether this call resolved it (a repeat does not).
    // One transaction: the log row is first-source-wins; the market columns are set once (guarded
    // by resolved_at: a concurrent resolution waits on the row lock and then matches nothing); the
    // outbox row is written only by the transaction that resolved the market.
    const row = await opts.db.tx(async (tx) => {
      // Input: market id. Output: the market (none: unknown), its event's row and then its own
      // locked (no key update), in the catalog page's order (catalog-db.ts: events, then markets).
      // Resolving closes the market, and closing a market updates its event's closed_at (trigger
      // markets_closed_at): locked market-first, this transaction and a catalog page writing the
      // same event waited on each other, and Postgres broke the deadlock by failing one of them.
      await tx.query(sql`select e.id from events e join markets m on m.event_id = e.id where m.id = ${r.marketId} for no key update of e`);
      const [market]: Array<{ id: string }> = await tx.query(sql`select id from markets where id = ${r.marketId} for no key update`);
      if (!market) return { known: false, marked: false };
      await tables.market_resolutions(tx).insertOrIgnore({
        market_id: market.id,
        winning_outcome_index: r.winningOutcomeIndex,
        voided: r.voided,
        source: r.source,
      });
      const now = new Date();
      const [marked] = await tables.markets(tx).update(
        { id: market.id, resolved_at: null },
        { closed: true, resolved_outcome_index: r.winningOutcomeIndex, voided: r.voided, resolved_at: now, updated_at: now },
      );
      if (marked) {
        // The chances it closed at, once (a market the catalog closed earlier keeps those it closed at).
        await recordClosingChances(tx, [marked.id], opts.liveChances);
        await writeOutbox(tx, 'market-resolved', { marketId: marked.id, eventId: marked.event_id });
      }
      return { known: true, marked: marked !== undefined };
    });
    if (!row.known) {
      opts.logger.warn({ marketId: r.marketId, source: r.source }, 'resolution for an unknown market ignored');
      return false;
    }
    if (row.marked) opts.logger.info({ marketId: r.marketId, winner: r.winningOutcomeIndex, voided: r.voided, source: r.source }, 'market resolved');
    return true;
  }

  return {
    resolve,
    async idle() {
      await Promise.all([...inFlight]);
    },
  };
}
