import { recordJson, sql, type Db } from '@pm/shared/db';
import { CALL_JSON_UPSERT, globalBodies, marketBodies, type SnapshotBody } from './bodies.js';
import type { BulkSnapshotWriter } from './bulk-writer.js';
import { calledMarketIdsAfter } from './queries.js';
import { closedExpiry, retentionPassed, type ClosedEvents } from '../retire/closed-expiry.js';

/**
 * The full record build (every call's object and every called market's list, then the global
 * lists), set-based:
 * 1. every call's Call object into record_call_json in ONE statement (hash joins over the whole
 *    tables; a row rewritten only when its text changed) — paging it by id lists cost an index probe
 *    per call and per joined row;
 * 2. then called markets, a page at a time (marketBodies), trusting record_call_json as step 1 left
 *    it (no per-batch check for missing objects; a call made since is left out of a list until its
 *    own incremental build), written in batches by the bulk writer (one script call per batch that
 *    sends only the changed bodies), at most two writes in flight while Postgres makes the next batch;
 *    those of events past their retention left out, those of other closed events with their expiry;
 * 3. the global lists (latest calls, boards, combos).
 * People's records and call lists and each call's page are no snapshots (the API reads them from
 * Postgres: builder.ts). No page of a million ids sits in memory.
 */

/** Snapshots per write (default). */
const WRITE_BATCH = 2000;
/** Writes in flight per family. */
const IN_FLIGHT = 2;

export interface FullBuildOptions {
  db: Db;
  webUrl: string;
  writer: BulkSnapshotWriter;
  /** Ids per page of markets; snapshots per write (default WRITE_BATCH). */
  batch: { markets: number; writes?: number };
  /** Closed events' lists: skipped once retired, else written with an expiry (retire/closed-expiry.ts). */
  closedEvents: ClosedEvents;
  /** Unix ms of the build. */
  now: number;
}

export interface FullBuildCounts {
  calls: number;
  markets: number;
  written: number;
  /** Milliseconds of each stage: the Call objects, the market lists until their last write, the global lists. */
  stages: { call_json: number; markets: number; global: number };
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
      insert into record_call_json (call_id, body, src_xmin)
      select c.id, ${recordJson.callObject(webUrl)}, c.xmin from calls c ${recordJson.CALL_JOINS}
      ${CALL_JSON_UPSERT}
    `);
  });
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

/** The full build; see the module comment. */
export async function buildAllRecords(opts: FullBuildOptions): Promise<FullBuildCounts> {
  const { db, webUrl, writer } = opts;
  const size = opts.batch.writes ?? WRITE_BATCH;
  const t0 = performance.now();
  const since = (t: number) => Math.round(performance.now() - t);
  await refreshAllCallJson(db, webUrl);
  const callJson = since(t0);
  const t1 = performance.now();
  // A market of an event whose retention has passed is left out: its list was retired with the
  // event's page, and comes back only when asked for (then with an expiry). Written again here every
  // full build, every called market ever would stay in Redis for good.
  const listed = async (ids: readonly string[]): Promise<SnapshotBody[]> => {
    const closedAt = await opts.closedEvents.marketsClosedAt(ids);
    const { retentionMs } = opts.closedEvents;
    const kept = ids.filter((id) => {
      const at = closedAt.get(id);
      return at === undefined || !retentionPassed(at, opts.now, retentionMs);
    });
    return withClosedExpiry(await marketBodies(db, kept, webUrl, 'fresh'), closedAt, opts.now, retentionMs);
  };
  const markets = async function* () {
    for await (const page of paged((after) => calledMarketIdsAfter(db, after, opts.batch.markets), listed)) {
      yield { items: page.ids, bodies: page.bodies };
    }
  };
  const called = await pump(markets(), writer, size);
  const marketsMs = since(t1);
  const t2 = performance.now();
  const global = await writer.write(await globalBodies(db, webUrl));
  const [counted]: Array<{ count: number }> = await db.query(sql`select count(*)::integer as count from record_call_json`);
  return {
    calls: counted?.count ?? 0,
    markets: called.items,
    written: called.written + global,
    stages: { call_json: callJson, markets: marketsMs, global: since(t2) },
  };
}

/** Market call lists (`calls:market:<id>`) of closed events, with their expiry (retire/closed-expiry.ts); the others as they are. */
export function withClosedExpiry(bodies: SnapshotBody[], closedAt: ReadonlyMap<string, number>, now: number, retentionMs: number): SnapshotBody[] {
  if (closedAt.size === 0) return bodies;
  return bodies.map((b) => {
    const at = b.name.startsWith('calls:market:') ? closedAt.get(b.name.slice('calls:market:'.length)) : undefined;
    return at === undefined ? b : { ...b, expireAtMs: closedExpiry(at, now, retentionMs) };
  });
}
