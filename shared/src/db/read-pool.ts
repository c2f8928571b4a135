import { createDb, sql, type Db } from './connection.js';
import type { Logger } from '../logger.js';

/**
 * Read-only statements sent to a streaming replica (DATABASE_READ_URL), with the primary as the
 * fallback: a read goes to the replica only while the replica is known to have replayed everything the
 * primary had committed at most `maxLagMs` ago, and a read that fails there (the replica stopped,
 * restarting, a statement cancelled by a recovery conflict) runs again on the primary at once. The
 * statements are reads, so running one again is harmless; nobody sees the replica's trouble.
 *
 * How fresh the replica is, is measured, not assumed: every `probeEveryMs` the primary's WAL position
 * (pg_current_wal_lsn) is noted with the time, and the replica's replayed position
 * (pg_last_wal_replay_lsn) is compared with the positions noted. The replica is then fresh "as of" the
 * newest noted time whose position it has replayed; its lag is now minus that time. A read sent to
 * the replica therefore sees every commit older than `maxLagMs + probeEveryMs`: with the defaults
 * (500 ms, 100 ms) a settlement shows on a person's page at most 0.6 s later than on the primary,
 * inside the 2 s settlement bound (docs/replicas.md has the measured lag).
 *
 * While the primary does not answer, reads stay on a replica that does: writes have stopped, so it
 * holds the newest state there is, and pages keep being served (the records only stop moving).
 *
 * The replica is a plain second Postgres (`hot_standby`): the replication itself is Postgres's own.
 */

export type ReadTarget = 'replica' | 'primary';

/** What `query` and `tx` of a pool take: the subset of `Db` the read paths use. */
export type ReadQueryable = Pick<Db, 'query' | 'tx'>;

export interface ReadPool extends ReadQueryable {
  /** Where a read goes now, the replica's lag as last measured (ms; null: unknown or unreachable), and why not the replica. */
  state(): { target: ReadTarget; lagMs: number | null; reason: string | null };
  /** Closes both pools (and the probe). */
  dispose(): Promise<void>;
}

export interface ReadPoolOptions {
  /** DATABASE_URL: writes' server, and every read when there is no usable replica. */
  primaryUrl: string;
  /** DATABASE_READ_URL: a streaming replica of it; unset = every read on the primary. */
  replicaUrl?: string;
  /** DATABASE_READ_MAX_LAG_MS: past this lag, reads go to the primary until the replica catches up. */
  maxLagMs?: number;
  /** Period of the lag probe (ms). */
  probeEveryMs?: number;
  /** Connections of each pool (default 8). */
  poolSize?: number;
  statementTimeoutMs?: number;
  logger?: Logger;
  /** Called once per statement with where it ran (a counter in the API's metrics). */
  onRead?: (target: ReadTarget) => void;
}

/** `X/Y` (hex) → a number of bytes (exact below 2^53, i.e. 8 PB of WAL). */
export function lsnBytes(lsn: string): number {
  const [hi, lo] = lsn.split('/');
  return parseInt(hi!, 16) * 2 ** 32 + parseInt(lo!, 16);
}

export function createReadPool(opts: ReadPoolOptions): ReadPool {
  const poolSize = opts.poolSize ?? 8;
  const timeouts = opts.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: opts.statementTimeoutMs };
  const primary = createDb(opts.primaryUrl, { poolSize, ...timeouts });
  const onRead = opts.onRead ?? (() => {});
  if (!opts.replicaUrl) {
    return {
      query: ((q: Parameters<Db['query']>[0]) => (onRead('primary'), primary.query(q))) as Db['query'],
      tx: ((fn: Parameters<Db['tx']>[0], o?: Parameters<Db['tx']>[1]) => (onRead('primary'), primary.tx(fn, o))) as Db['tx'],
      state: () => ({ target: 'primary', lagMs: null, reason: 'no DATABASE_READ_URL' }),
      dispose: () => primary.dispose(),
    };
  }
  const maxLagMs = opts.maxLagMs ?? 500;
  const probeEveryMs = opts.probeEveryMs ?? 100;
  // A replica that does not answer is given up on quickly: the request then runs on the primary.
  const replica = createDb(opts.replicaUrl, { poolSize, ...timeouts, connectionTimeoutMs: 1_000 });
  // The probe has its own single connections so that a busy pool never delays the measurement.
  const probePrimary = createDb(opts.primaryUrl, { poolSize: 1, statementTimeoutMs: 1_000, connectionTimeoutMs: 1_000 });
  const probeReplica = createDb(opts.replicaUrl, { poolSize: 1, statementTimeoutMs: 1_000, connectionTimeoutMs: 1_000 });

  /** Primary WAL positions noted and when, oldest first, not yet replayed by the replica. */
  const noted: Array<{ at: number; lsn: number }> = [];
  let freshAsOf: number | null = null;
  let measuredAt = 0;
  let replicaBroken: string | null = 'not measured yet';
  /** The primary did not answer the last probe: the replica, if it answers, is the newest there is. */
  let primaryDown = false;
  let stopped = false;
  let lastReason: string | null = null;

  // The two looks run on their own, each one at a time: a primary that is away (a failover under way)
  // makes its look wait for the connection timeout, and the replica's measurement must not wait behind
  // it — reads stay on the replica only while it was measured recently.
  /** The replica's replayed position as last measured (bytes). */
  let replayed = -1;
  /** Every noted primary position the replica has replayed: it is fresh as of the newest of them. */
  function catchUp(): void {
    while (noted.length > 0 && noted[0]!.lsn <= replayed) freshAsOf = noted.shift()!.at;
  }

  async function lookAtPrimary(): Promise<void> {
    const at = Date.now();
    try {
      const [p] = (await probePrimary.query(sql`select pg_current_wal_lsn()::text as lsn`)) as Array<{ lsn: string }>;
      noted.push({ at, lsn: lsnBytes(p!.lsn) });
      primaryDown = false;
      // A position the replica had already replayed when last measured: it was fresh as of this look.
      catchUp();
    } catch {
      // The primary away: nothing is committed meanwhile, so the replica (if it answers) is as fresh as
      // anything can be, and the reads stay on it rather than fail on the primary.
      primaryDown = true;
    }
    // Keep what is needed to measure a lag up to a minute.
    while (noted.length > 0 && at - noted[0]!.at > 60_000) noted.shift();
  }

  async function lookAtReplica(): Promise<void> {
    const at = Date.now();
    try {
      const [r] = (await probeReplica.query(sql`select pg_last_wal_replay_lsn()::text as lsn`)) as Array<{ lsn: string | null }>;
      if (r?.lsn == null) throw new Error('not a streaming replica (pg_last_wal_replay_lsn() is null)');
      replayed = lsnBytes(r.lsn);
      catchUp();
      if (primaryDown) freshAsOf = at;
      measuredAt = Date.now();
      replicaBroken = null;
    } catch (err) {
      replicaBroken = err instanceof Error ? err.message : String(err);
    }
  }

  // One look of each kind at a time: on a slow machine a look may take longer than the period.
  const busy = { primary: false, replica: false };
  const look = () => {
    if (stopped) return;
    if (!busy.primary) {
      busy.primary = true;
      void lookAtPrimary().finally(() => (busy.primary = false));
    }
    if (!busy.replica) {
      busy.replica = true;
      void lookAtReplica().finally(() => (busy.replica = false));
    }
  };
  const timer = setInterval(look, probeEveryMs);
  timer.unref();
  look();

  function lagMs(now: number): number | null {
    if (replicaBroken !== null || freshAsOf === null) return null;
    if (primaryDown) return 0;
    // Nothing noted is left unreplayed: the replica was as fresh as the last look.
    return noted.length === 0 ? now - measuredAt : now - freshAsOf;
  }

  function choose(): { target: ReadTarget; reason: string | null } {
    const now = Date.now();
    if (replicaBroken !== null) return { target: 'primary', reason: `replica unavailable: ${replicaBroken}` };
    if (now - measuredAt > 3 * probeEveryMs + 1_000) return { target: 'primary', reason: 'replica not measured recently' };
    const lag = lagMs(now);
    if (lag === null || lag > maxLagMs) return { target: 'primary', reason: `replica lag ${lag ?? '?'} ms over ${maxLagMs} ms` };
    return { target: 'replica', reason: null };
  }

  function note(reason: string | null): void {
    if (reason !== lastReason) {
      if (reason === null) opts.logger?.info('reads back on the replica');
      else opts.logger?.warn({ reason }, 'reads on the primary');
      lastReason = reason;
    }
  }

  async function run<T>(use: (db: Db) => Promise<T>): Promise<T> {
    const { target, reason } = choose();
    note(reason);
    if (target === 'primary') {
      onRead('primary');
      return use(primary);
    }
    try {
      onRead('replica');
      return await use(replica);
    } catch (err) {
      // The statement ran on the replica and failed: the replica is suspect until the next probe, and
      // this read is answered by the primary (a read is safe to run twice). A statement that fails on
      // the primary too fails there, as it would have without a replica.
      if (stopped) throw err;
      replicaBroken = err instanceof Error ? err.message : String(err);
      note(`replica failed a read: ${replicaBroken}`);
      onRead('primary');
      return use(primary);
    }
  }

  return {
    query: ((q: Parameters<Db['query']>[0]) => run((db) => db.query(q))) as Db['query'],
    tx: ((fn: Parameters<Db['tx']>[0], o?: Parameters<Db['tx']>[1]) => run((db) => db.tx(fn, o))) as Db['tx'],
    state() {
      const { target, reason } = choose();
      return { target, lagMs: lagMs(Date.now()), reason };
    },
    async dispose() {
      stopped = true;
      clearInterval(timer);
      await Promise.all([primary.dispose(), replica.dispose(), probePrimary.dispose(), probeReplica.dispose()]);
    },
  };
}
