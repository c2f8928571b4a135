import createTables, { allOf, anyOf, caseInsensitive, greaterThan, lessThan, not } from '@databases/pg-typed';
import type DatabaseSchema from './__generated__/index.js';
import databaseSchema from './__generated__/schema.json' with { type: 'json' };

/**
 * Typed access to every table, with types generated from the migrations (`npm run db:types`;
 * a test fails when they are stale). Set-based projections and bulk writes are hand-written SQL.
 */
export const tables = createTables<DatabaseSchema>({ databaseSchema });
export type { DatabaseSchema };
/** pg-typed's field conditions, for `find`/`update`/`delete` where clauses. */
export { allOf, anyOf, caseInsensitive, greaterThan, lessThan, not };
