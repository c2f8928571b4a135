import { sql, type Db } from '../db/connection.js';
import { createTestRedis, type TestRedis } from './index.js';

/**
 * Puts a test database back to how `createTestDatabase` left it (migrated, no data), so each test of
 * a file starts from the same state without paying for a new database: every row of every table the
 * migrations made is deleted (referencing tables first), every sequence restarts, and the one row a
 * migration seeds is put back (0005_pages.sql: ranking version 0, which leaderboard rows default to).
 * DELETE rather than TRUNCATE: on a test's few rows it is several times faster (TRUNCATE makes new
 * files for each table and its indexes).
 */
export async function resetDatabase(db: Db): Promise<void> {
  const tables: Array<{ name: string; refs: string[] | null }> = await db.query(sql`
    select t.tablename as name,
           (select array_agg(distinct r.relname::text)
              from pg_constraint c join pg_class r on r.oid = c.confrelid
             where c.contype = 'f' and c.conrelid = (quote_ident(t.tablename))::regclass and c.confrelid <> c.conrelid) as refs
      from pg_tables t
     where t.schemaname = 'public' and t.tablename <> 'schema_migrations'
  `);
  // Referencing tables before the tables they reference.
  const order: string[] = [];
  const placed = new Set<string>();
  const referencedBy = (name: string) => tables.filter((t) => t.refs?.includes(name)).map((t) => t.name);
  const place = (name: string, seen: Set<string>) => {
    if (placed.has(name) || seen.has(name)) return;
    seen.add(name);
    for (const child of referencedBy(name)) place(child, seen);
    placed.add(name);
    order.push(name);
  };
  for (const t of tables) place(t.name, new Set());
  await db.tx(async (tx) => {
    for (const name of order) await tx.query(sql`delete from ${sql.ident(name)}`);
    await tx.query(sql`select setval(s.seqrelid, s.seqstart, false) from pg_sequence s join pg_class c on c.oid = s.seqrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'`);
    await tx.query(sql`insert into leaderboard_versions (version, made_at) overriding system value values (0, now())`);
  });
}

/**
 * Redis prefixes of their own for each test of a file, on one connection: `next()` gives a prefix no
 * test has used (so the test starts with no keys), and `cleanup()` deletes the keys of every prefix it
 * gave in one SCAN (they all contain the file's unique prefix) and closes the connection. A SCAN of a
 * shared Redis walks every key there, so one per file rather than one per test.
 */
export type TestRedisPrefix = Omit<TestRedis, 'cleanup' | typeof Symbol.asyncDispose>;

export interface TestRedisPrefixes extends AsyncDisposable {
  /** A new prefix on the file's connection; its keys go with the file's `cleanup()`, not before. */
  next(): TestRedisPrefix;
  cleanup(): Promise<void>;
}

export async function createTestRedisPrefixes(label = 'test'): Promise<TestRedisPrefixes> {
  const base = await createTestRedis(label);
  let n = 0;
  const cleanup = async () => {
    // The base prefix is letters, digits and _ (createTestRedis), so it needs no glob escaping.
    let cursor = '0';
    do {
      const [next, keys] = await base.redis.scan(cursor, 'MATCH', `*${base.prefix}_p*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await base.redis.del(...keys);
    } while (cursor !== '0');
    base.redis.disconnect(); // nothing is written under the base prefix itself
  };
  return {
    next: () => ({ url: base.url, redis: base.redis, prefix: `${base.prefix}_p${++n}` }),
    cleanup,
    [Symbol.asyncDispose]: cleanup,
  };
}
