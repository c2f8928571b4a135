import { sql, type Db } from '@pm/shared/db';

/**
 * The expiry a closed event's snapshots carry when a builder writes them (docs/redis-keys.md "Closed
 * events"). The retirement pass (retire.ts) gives the keys of an event that closed an expiry at the
 * end of its retention; a builder that writes one of them (the page once more as the event closes, or
 * everything again when the API asks for an event whose keys were retired) gives it the same, or
 * REBUILT_KEEP_MS from the write when that is later: a key written without one would stay for good,
 * since the pass looks only at recent closes and never shortens an expiry it finds.
 *
 * "Closed at" is the event's `updated_at` once closed, as the retirement pass reads it.
 */

/**
 * How long a closed event's snapshots written past (or near the end of) its retention are kept: an
 * hour, or the retention itself when that is shorter (a retention of 15 minutes, as the soak runs
 * with, would otherwise keep every snapshot written at a close for an hour, not 15 minutes).
 */
export const REBUILT_KEEP_MS = 60 * 60_000;

/** The expiry of a closed event's snapshot written at `nowMs`. */
export function closedExpiry(closedAtMs: number, nowMs: number, retentionMs: number): number {
  return Math.max(Math.round(closedAtMs + retentionMs), nowMs + Math.min(REBUILT_KEEP_MS, Math.round(retentionMs)));
}

/** Whether a closed event's retention has passed at `nowMs` (its hash fields are deleted then, never written again). */
export function retentionPassed(closedAtMs: number, nowMs: number, retentionMs: number): boolean {
  return closedAtMs + retentionMs <= nowMs;
}

/** What builders need to bound what they write for closed events. */
export interface ClosedEvents {
  retentionMs: number;
  /** inputs: event ids. outputs: id → closed-at (Unix ms) of those that are closed. */
  closedAt(eventIds: readonly string[]): Promise<Map<string, number>>;
  /** inputs: market ids. outputs: market id → its event's closed-at (Unix ms), for markets of closed events. */
  marketsClosedAt(marketIds: readonly string[]): Promise<Map<string, number>>;
}

/** A closed event's `updated_at` as Unix ms (float8), as the retirement pass reads its close. */
const CLOSED_AT_MS = sql`(extract(epoch from e.updated_at) * 1000)::float8`;

export function createClosedEvents(db: Pick<Db, 'query'>, retentionMs: number): ClosedEvents {
  return {
    retentionMs,
    async closedAt(eventIds) {
      if (eventIds.length === 0) return new Map();
      const rows: Array<{ id: string; closed_at: number }> = await db.query(sql`
        select e.id, ${CLOSED_AT_MS} as closed_at from events e where e.id = any(${[...eventIds]}::text[]) and e.closed
      `);
      return new Map(rows.map((r) => [r.id, r.closed_at]));
    },
    async marketsClosedAt(marketIds) {
      if (marketIds.length === 0) return new Map();
      const rows: Array<{ id: string; closed_at: number }> = await db.query(sql`
        select m.id, ${CLOSED_AT_MS} as closed_at
        from markets m join events e on e.id = m.event_id
        where m.id = any(${[...marketIds]}::text[]) and e.closed
      `);
      return new Map(rows.map((r) => [r.id, r.closed_at]));
    },
  };
}
