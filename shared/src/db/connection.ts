import createConnectionPool, { sql, type ConnectionPool, type Queryable, type SQLQuery } from '@databases/pg';

export { sql };
/** A pool or a transaction: what pg-typed's tables and `query` take. */
export type { Queryable };
/** A fragment of SQL made by `sql` (values bound as parameters). */
export type { SQLQuery };
export type Db = ConnectionPool;

/** One pool per process. `bigIntMode: 'number'` is safe here: our bigint ids are identity counters. */
export function createDb(databaseUrl: string, opts: { poolSize?: number; statementTimeoutMs?: number; connectionTimeoutMs?: number } = {}): Db {
  return createConnectionPool({
    connectionString: databaseUrl,
    bigIntMode: 'number',
    poolSize: opts.poolSize ?? 10,
    // The session's statement_timeout, set when each connection opens (none by default).
    ...(opts.statementTimeoutMs === undefined ? {} : { statementTimeoutMilliseconds: opts.statementTimeoutMs }),
    // How long a connection attempt may take (a server that is down but not refusing, e.g. a stopped replica).
    ...(opts.connectionTimeoutMs === undefined ? {} : { connectionTimeoutMilliseconds: opts.connectionTimeoutMs }),
    // @databases/pg would otherwise register its own SIGINT handlers and log on every query error.
    onError: () => {},
  });
}
