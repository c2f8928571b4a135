import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import {
  createTestDatabase,
  createTestRedisPrefixes,
  resetDatabase,
  type TestDatabase,
  type TestRedisPrefix,
  type TestRedisPrefixes,
} from '@pm/shared/testing';

/** The stores a worker test file uses, as each of its tests sees them. */
export interface FreshStores {
  /** The file's database, emptied before each test. */
  readonly tdb: TestDatabase;
  /** A Redis prefix of the current test's own. */
  readonly tr: TestRedisPrefix;
  /**
   * What the current test starts (triggers, queues, workers) goes here; it is disposed after the
   * test, newest first, after the file's own `afterEach` hooks and before the stores are removed.
   */
  readonly each: AsyncDisposableStack;
}

/**
 * Registers the hooks that give each test of the file a clean start: one database for the file
 * (emptied before each test with `resetDatabase`) and a new Redis prefix per test; both removed after
 * the file. Read `tdb`, `tr` and `each` inside tests and hooks (the file's own `beforeEach` runs after
 * these).
 */
export function useFreshStores(label: string): FreshStores {
  let tdb: TestDatabase | undefined;
  let prefixes: TestRedisPrefixes | undefined;
  let tr: TestRedisPrefix | undefined;
  let each: AsyncDisposableStack | undefined;
  beforeAll(async () => {
    [tdb, prefixes] = await Promise.all([createTestDatabase(label), createTestRedisPrefixes(label)]);
  });
  afterAll(async () => {
    await prefixes?.cleanup();
    await tdb?.drop();
  });
  beforeEach(async () => {
    each = new AsyncDisposableStack();
    await resetDatabase(tdb!.db);
    tr = prefixes!.next();
  });
  afterEach(async () => {
    await each?.disposeAsync();
  });
  return {
    get tdb() {
      if (!tdb) throw new Error('useFreshStores: no database yet (read it in a test or hook)');
      return tdb;
    },
    get tr() {
      if (!tr) throw new Error('useFreshStores: no Redis prefix yet (read it in a test or hook)');
      return tr;
    },
    get each() {
      if (!each) throw new Error('useFreshStores: no per-test stack yet (read it in a test or hook)');
      return each;
    },
  };
}
