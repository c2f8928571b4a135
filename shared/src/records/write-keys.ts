import { sql, type Queryable } from '../db/connection.js';
import { RecordRefused } from './errors.js';

/**
 * Idempotency keys of the write path (docs/design.md "Writes in doubt"). A call, combo or thesis
 * update sent with a `key` writes, in its own transaction, the key's row: what was asked and what was
 * written. Sent again with that key — because the first answer was lost with the connection, say — it
 * finds the row before doing anything else and answers what was written then: no second write, even
 * if the market has closed or the price moved since. The same key with different content is refused,
 * so a key reused by mistake never passes for a retry. Keys are one person's and kept ≥ 30 days
 * (migration 0018, pruned by the reconciler after WRITE_KEYS_KEEP).
 */

export type KeyedWrite = 'call' | 'combo' | 'thesis_update';

/** How long a key answers its retries: at least the 30 days promised, pruned after this. */
export const WRITE_KEYS_KEEP = '35 days';

const WHAT: Record<KeyedWrite, string> = { call: 'a call', combo: 'a combo', thesis_update: 'a thesis update' };

/**
 * Inside the write's transaction, before its checks: what this key wrote before, if it did (the
 * retry's answer), else undefined. Refuses a key already used for something else. The row is read
 * `for share`: a first write with the same key still in flight is waited for.
 */
export async function priorWrite<T>(tx: Queryable, userId: number, key: string, kind: KeyedWrite, request: object): Promise<T | undefined> {
  // Input: person, key, the write's kind and request. Output: the key's row with whether it asked the same.
  const [row]: Array<{ kind: KeyedWrite; same: boolean; result: T }> = await tx.query(sql`
    select kind, request = ${JSON.stringify(request)}::jsonb as same, result
    from write_keys where user_id = ${userId} and key = ${key}
    for share
  `);
  if (!row) return undefined;
  if (row.kind !== kind || !row.same) {
    throw new RecordRefused(
      'key_reused',
      `key ${JSON.stringify(key)} was already used for ${WHAT[row.kind]} with different content; a retry must send the same content, a new write needs a new key`,
    );
  }
  return row.result;
}

/** Inside the write's transaction, after it: the key's row (a concurrent first write with the same key makes this a unique violation, see `isKeyRace`). */
export async function keepWrite(tx: Queryable, userId: number, key: string, kind: KeyedWrite, request: object, result: object): Promise<void> {
  // Input: person, key, kind, request and result. Output: none.
  await tx.query(sql`
    insert into write_keys (user_id, key, kind, request, result)
    values (${userId}, ${key}, ${kind}, ${JSON.stringify(request)}::jsonb, ${JSON.stringify(result)}::jsonb)
  `);
}

/** Two first writes with one key at once: the second's key row collided with the first's, and its transaction rolled back. Run it again: it now finds the first's. */
export function isKeyRace(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505' && (err as { constraint?: unknown }).constraint === 'write_keys_pkey';
}
