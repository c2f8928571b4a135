/**
 * Postgres (`@pm/shared/db`): the one connection layer (`@databases/pg`), the typed tables
 * (`@databases/pg-typed` over the generated row types), migrations and the readiness check.
 */
export { createDb, sql, type Db, type Queryable } from './connection.js';
export { dayPartitions } from './partitions.js';
export { createReadPool, lsnBytes, type ReadPool, type ReadPoolOptions, type ReadQueryable, type ReadTarget } from './read-pool.js';
export { migrate, ensureDatabase, dropDatabase, type MigrationResult } from './migrate.js';
export { tables, allOf, anyOf, caseInsensitive, greaterThan, lessThan, not, type DatabaseSchema } from './tables.js';
export { postgresCheck } from './readiness.js';
export type { JsonRow } from './json-row.js';
export * as recordJson from './record-json.js';
export { boardOrder, FIELD_RECORDS_THROUGH, rankOnBoard } from './board-order.js';
export { IsolationLevel } from '@databases/pg';
export { openStores } from './stores.js';
/** The row types generated from the migrations (`npm run db:types`): the only row types there are. */
export type * from './__generated__/index.js';
