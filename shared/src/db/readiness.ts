import { sql, type Db } from './connection.js';
import { DeadlineError, DEPENDENCY_DEADLINE_MS, dependencyError, withDeadline, type ReadinessCheck } from '../ops/ops.js';

/**
 * Postgres answers a query, as the primary: the writers' (ingestor's, worker's) database is down while
 * no primary answers, and a server that answers but is a read-only standby — a failover under way, a
 * proxy still routing to a demoted primary — is not one they can write to. `databaseUrl` names the
 * server in the words of a failure (never its password). The pool takes about 2 s to give up on a
 * server that refuses connections, longer than a probe waits, so a probe that times out reports the
 * reason the previous attempt failed, if any.
 */
export function postgresCheck(db: Db, databaseUrl: string): ReadinessCheck {
  const url = new URL(databaseUrl);
  const where = `Postgres at ${url.hostname}:${url.port || '5432'}`;
  let lastFailure: unknown;
  return async () => {
    const query = db.query(sql`select pg_is_in_recovery() as standby`).then(
      (rows: Array<{ standby: boolean }>) => {
        if (rows[0]?.standby) throw new Error(`${where} is a read-only standby (in recovery), not the primary`);
        lastFailure = undefined;
      },
      (err: unknown) => {
        lastFailure = err;
        throw err;
      },
    );
    query.catch(() => {}); // still running when the deadline passes: its failure is kept, not thrown
    try {
      await withDeadline(query, DEPENDENCY_DEADLINE_MS, `${where} is not answering (no reply within ${DEPENDENCY_DEADLINE_MS} ms)`);
    } catch (err) {
      throw dependencyError(where, err instanceof DeadlineError && lastFailure !== undefined ? lastFailure : err);
    }
  };
}
