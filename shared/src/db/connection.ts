import createConnectionPool, { sql, type ConnectionPool } from '@databases/pg';

export { sql };
export type Db = ConnectionPool;

/** One pool per process. `bigIntMode: 'number'` is safe here: our bigint ids are identity counters. */
export function createDb(databaseUrl: string, opts: { poolSize?: number } = {}): Db {
  return createConnectionPool({
    connectionString: databaseUrl,
    bigIntMode: 'number',
    poolSize: opts.poolSize ?? 10,
    // @databases/pg would otherwise register its own SIGINT handlers and log on every query error.
    onError: () => {},
  });
}
