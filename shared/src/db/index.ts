export { createDb, sql, type Db } from './connection.js';
export { migrate, ensureDatabase, dropDatabase, type MigrationResult } from './migrate.js';
export { tables, type DatabaseSchema } from './tables.js';
