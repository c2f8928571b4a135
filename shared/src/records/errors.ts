/** Why the write path refused a record. Thrown before anything is written. */
export type RecordRefusedCode =
  | 'unknown_user'
  | 'handle_taken'
  | 'bad_handle'
  | 'bad_input'
  | 'unknown_market'
  | 'market_closed'
  | 'unknown_outcome'
  | 'stale_price'
  | 'bad_leg_count'
  | 'duplicate_leg_market'
  | 'unknown_call'
  | 'self_follow'
  | 'key_reused';

/** A refusal of the write path: a clear message, a stable code, and nothing written. */
export class RecordRefused extends Error {
  override name = 'RecordRefused';
  constructor(
    readonly code: RecordRefusedCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Postgres went away during a write (a restart, a dropped connection, a server refusing connections,
 * a failover that left the connection on a server that is now a read-only standby). The write ran in
 * one transaction, so it is whole or absent, never half; when the connection died during COMMIT the
 * caller cannot know which. A write sent with an idempotency key is safe to send again with the same
 * key (`retryInDoubt`): a committed one answers its original. Without a key it is not retried blindly
 * (a second call would be recorded). The message says so; `cause` keeps the driver's error.
 */
export class RecordsUnavailable extends Error {
  override name = 'RecordsUnavailable';
  constructor(cause: unknown) {
    super(
      `postgres was unavailable during the write (${cause instanceof Error ? cause.message : String(cause)}); ` +
        'it was written whole or not at all — check before writing it again',
      { cause },
    );
  }
}

/** The error's SQLSTATE or driver code ('' without one). */
function errorCode(err: unknown): string {
  return typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : '';
}

/** SQLSTATE classes and driver errors that mean "the server or the connection went away", not "this write is wrong". */
export function isConnectionLoss(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = errorCode(err);
  // 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now;
  // 25006: read_only_sql_transaction — the server this connection reached is a standby now (the
  // primary failed over, or a proxy still routes to the old one): the primary is elsewhere, the
  // connection is dropped (the pool never reuses one that failed) and the next one finds it.
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '25006') return true;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT') return true;
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|connection is closed|Client has encountered a connection error|terminating connection/i.test(message);
}

/**
 * Postgres failed the transaction to break a deadlock (40P01) or a serialization conflict (40001):
 * nothing was written, and the same transaction run again can succeed.
 */
export function isLockConflict(err: unknown): boolean {
  const code = errorCode(err);
  return code === '40P01' || code === '40001';
}
