import { recordJson, sql, type Db } from '@pm/shared/db';
import { CALL_PAGE_JOINS, callPage, globalBodies, marketBodies, parseBodies, thesisUpdateLists, userBodies, type SnapshotBody } from './bodies.js';
import type { BulkSnapshotWriter } from './bulk-writer.js';
import { calledMarketIdsAfter, userIdsAfter } from './queries.js';

/**
 * The full record build (every call, person and called market, then the global lists), set-based:
 * 1. every call's Call object into record_call_json in ONE statement (hash joins over the whole
 *    tables; a row rewritten only when its text changed) — paging it by id lists cost an index probe
 *    per call and per joined row;
 * 2. then, at the same time (each reads only record_call_json and the source tables):
 *    - every call's page from ONE streamed statement;
 *    - people, a page of ids at a time (userBodies: their record and five lists, one window pass);
 *    - called markets, a page at a time (marketBodies);
 *    the lists trust record_call_json as step 1 left it (no per-batch check for missing objects; a
 *    call made since is left out of a list until its own incremental build, as before);
 *    each family's bodies written in batches by the bulk writer (one script call per batch that
 *    sends only the changed bodies), at most two writes in flight per family while Postgres makes
 *    the next batch;
 * 3. the global lists (latest calls, boards, combos).
 * No page of a million ids sits in memory: a family holds at most three batches.
 */

/** Snapshots per write (default). */
const WRITE_BATCH = 2000;
/** Rows per fetch from the streamed statements. */
const FETCH = 1000;
/** Writes in flight per family. */
const IN_FLIGHT = 2;

export interface FullBuildOptions {
  db: Db;
  webUrl: string;
  writer: BulkSnapshotWriter;
  /** Ids per page of people and of markets; snapshots per write (default WRITE_BATCH). */
  batch: { users: number; markets: number; writes?: number };
}

export interface FullBuildCounts {
  calls: number;
  users: number;
  markets: number;
  written: number;
  /** Milliseconds of each stage: the Call objects, then (at once) each family until its last write, then the global lists. */
  stages: { call_json: number; calls: number; users: number; markets: number; global: number };
}

/**
 * inputs: the public web url. outputs: none; record_call_json holds the current Call object of every
 * call (rows whose text is unchanged are not rewritten). One statement, no JIT (its compile time
 * buys nothing for text concatenation).
 */
export async function refreshAllCallJson(db: Db, webUrl: string): Promise<void> {
  await db.tx(async (tx) => {
    await tx.query(sql`set local jit = off`);
    await tx.query(sql`
      insert into record_call_json (call_id, body)
      select c.id, ${recordJson.callObject(webUrl)} from calls c ${recordJson.CALL_JOINS}
      on conflict (call_id) do update set body = excluded.body where record_call_json.body is distinct from excluded.body
    `);
  });
}

/** Every call's `call:<id>` page, streamed from one statement in batches of WRITE_BATCH. */
async function* allCallPages(db: Db, webUrl: string, size: number): AsyncGenerator<SnapshotBody[]> {
  let rows: unknown[] = [];
  const stream = db.queryStream(
    sql`
      select ${callPage(webUrl)}
      from calls c ${CALL_PAGE_JOINS}
      left join (${thesisUpdateLists(sql`true`)}) tu on tu.call_id = c.id
    `,
    { batchSize: FETCH },
  );
  for await (const row of stream) {
    rows.push(row);
    if (rows.length >= size) {
      yield parseBodies(rows);
      rows = [];
    }
  }
  if (rows.length > 0) yield parseBodies(rows);
}

/** Pages of ids in order (`next` gives the ids after one), each page's bodies made while the previous page is written. */
async function* paged(next: (after: string) => Promise<string[]>, bodies: (ids: readonly string[]) => Promise<SnapshotBody[]>): AsyncGenerator<{ ids: number; bodies: SnapshotBody[] }> {
  let ids = await next('');
  while (ids.length > 0) {
    const following = next(ids[ids.length - 1]!);
    try {
      yield { ids: ids.length, bodies: await bodies(ids) };
    } catch (err) {
      await following.catch(() => {});
      throw err;
    }
    ids = await following;
  }
}

/**
 * Writes what `source` yields, up to IN_FLIGHT writes at once while the source makes the next batch.
 * inputs: the batches, the writer. outputs: items (as the source counts them) and snapshots written.
 */
async function pump(source: AsyncIterable<{ items: number; bodies: SnapshotBody[] }>, writer: BulkSnapshotWriter, size: number): Promise<{ items: number; written: number }> {
  const inflight = new Set<Promise<void>>();
  let items = 0;
  let written = 0;
  try {
    for await (const batch of source) {
      items += batch.items;
      for (let i = 0; i < batch.bodies.length; i += size) {
        const p: Promise<void> = writer.write(batch.bodies.slice(i, i + size)).then((n) => {
          written += n;
          inflight.delete(p);
        });
        inflight.add(p);
        if (inflight.size >= IN_FLIGHT) await Promise.race(inflight);
      }
    }
    await Promise.all(inflight);
  } finally {
    // A failed write or source ends the family: no write outlives the build.
    await Promise.allSettled(inflight);
  }
  return { items, written };
}

async function* counted<T extends { length: number }>(source: AsyncIterable<T>): AsyncGenerator<{ items: number; bodies: T }> {
  for await (const b of source) yield { items: b.length, bodies: b };
}

/** The full build; see the module comment. */
export async function buildAllRecords(opts: FullBuildOptions): Promise<FullBuildCounts> {
  const { db, webUrl, writer } = opts;
  const size = opts.batch.writes ?? WRITE_BATCH;
  const t0 = performance.now();
  const since = (t: number) => Math.round(performance.now() - t);
  await refreshAllCallJson(db, webUrl);
  const callJson = since(t0);
  const t1 = performance.now();
  const timed = async <T>(work: Promise<T>): Promise<T & { ms: number }> => ({ ...(await work), ms: since(t1) });
  const users = async function* () {
    for await (const page of paged((after) => userIdsAfter(db, after === '' ? 0 : Number(after), opts.batch.users), (ids) => userBodies(db, ids, webUrl, 'both', 'fresh'))) {
      yield { items: page.ids, bodies: page.bodies };
    }
  };
  const markets = async function* () {
    for await (const page of paged((after) => calledMarketIdsAfter(db, after, opts.batch.markets), (ids) => marketBodies(db, ids, webUrl, 'fresh'))) {
      yield { items: page.ids, bodies: page.bodies };
    }
  };
  // Settled, not all: a failed family still lets the others finish before the build fails, so no
  // query or write outlives it.
  const results = await Promise.allSettled([
    timed(pump(counted(allCallPages(db, webUrl, size)), writer, size)),
    timed(pump(users(), writer, size)),
    timed(pump(markets(), writer, size)),
  ]);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  type Done = { items: number; written: number; ms: number };
  const [calls, people, called] = results.map((r) => (r as PromiseFulfilledResult<Done>).value) as [Done, Done, Done];
  const t2 = performance.now();
  const global = await writer.write(await globalBodies(db, webUrl));
  return {
    calls: calls.items,
    users: people.items,
    markets: called.items,
    written: calls.written + people.written + called.written + global,
    stages: { call_json: callJson, calls: calls.ms, users: people.ms, markets: called.ms, global: since(t2) },
  };
}
