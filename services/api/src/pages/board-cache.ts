import { LRUCache } from 'lru-cache';
import { WINDOW_MS } from '@pm/shared/domain';
import { sql, type Db } from '@pm/shared/db';
import type { Page } from './pages.js';
import type { SharedRankings } from './shared-rankings.js';
import type { BoardQuery, BoardStart } from './skill-pages.js';

type Tx = Pick<Db, 'query'>;

/** A computed board's page query: `live` when its instant is now (a first page, `around`), not a cursor's. */
export interface BoardPageQuery extends BoardQuery {
  start: BoardStart;
  limit: number;
  live: boolean;
}

/** A page and the instant it was ranked at (a held ranking answers a later `now`; its cursor carries this). */
export interface BoardPage extends Page {
  asOf: Date;
}

export interface BoardCache {
  page(q: BoardPageQuery): Promise<BoardPage | null>;
  /** hits and misses count rankings: answered from a held one, or ranked; `shared` the hits on one another process made. */
  stats(): { hits: number; misses: number; shared: number; entries: number; bytes: number };
}

/**
 * What every computed board counts, as one value: the settled calls by status (settled_counts, kept
 * by a trigger on calls in the settling transaction itself). Read in the page's own snapshot, it
 * changes with every commit that settles a call, whatever time that call says it settled at.
 */
const SETTLED_EPOCH = sql`(select coalesce(string_agg(status || ':' || n, ',' order by status), '') from settled_counts where kind = 'call')`;

/** A board's ranking as of an instant: its people in rank order, and what it counted. */
interface Held {
  ranked: readonly number[];
  asOf: Date;
  epoch: string;
  madeAt: number;
  bytes: number;
}

/**
 * Computed boards' rankings (skill-pages.ts), held per API process; every page of a board — the
 * first, a cursor's, anyone's `around` — is cut from its held ranking while nothing it counts has
 * moved. Ranking a window or field board reads every row of it (100-300 ms of Postgres on 50,000
 * people); a page of a held ranking is the page's own people's rows (a few ms), so a walk with
 * cursors and many people asking where they stand rank the board once, not once a page. A ranking
 * made at instant t0 is still the board at a later `now` when, checked in one statement of three
 * index probes, in the same snapshot as the page's rows:
 * - no settling transaction committed since (SETTLED_EPOCH unchanged: this also catches a call
 *   committed after t0 with a settled_at at or before t0, a settling clock behind this one's);
 * - no call settled in (t0, now] (committed before t0 with a settled_at after it: a clock ahead);
 * - for a window board, no call left the window in between: none settled in (t0 − window, now − window].
 * Then the page is answered as ranked at t0 (its next_cursor carries t0, so the walk stays on that
 * ranking). The order's last tie-break is the handle, which may change without a settlement: a
 * ranking is held for at most `maxAgeMs`. Identical rankings in flight are made once. Bounded by
 * entries and by bytes (least recently used out). With `shared`, a live request this process holds
 * no current ranking for first tries the latest one another API process made (shared-rankings.ts),
 * checked the same way, and every live ranking made here is offered to the others: a settlement
 * costs each board one ranking, not one per API process.
 */
export function createBoardCache(deps: {
  read: <T>(what: string, run: (tx: Tx) => Promise<T>) => Promise<T>;
  /** The board's people in rank order (skill-pages.ts boardRanking). */
  rank: (tx: Tx, q: BoardQuery) => Promise<number[]>;
  /** A page cut from a ranking (skill-pages.ts boardPageOf); null: no one has the `around` handle. */
  page: (tx: Tx, q: BoardQuery, ranked: readonly number[], start: BoardStart, limit: number) => Promise<Page | null>;
  clock?: () => number;
  maxEntries?: number;
  maxBytes?: number;
  maxAgeMs?: number;
  shared?: SharedRankings;
}): BoardCache {
  const clock = deps.clock ?? Date.now;
  const maxEntries = deps.maxEntries ?? 1000;
  const maxBytes = deps.maxBytes ?? 16 * 1024 * 1024;
  const maxAgeMs = deps.maxAgeMs ?? 10_000;
  // Keyed by board and instant; least recently used out, by entries and by bytes.
  // Per board, the instant of its latest ranking made for a live request: where the next live
  // request looks. An entry goes with its ranking, so this holds no more boards than `held`.
  const latest = new Map<string, number>();
  const held = new LRUCache<string, Held>({
    max: maxEntries,
    maxSize: maxBytes,
    sizeCalculation: (h) => h.bytes,
    dispose: (h, key) => {
      const board = key.slice(0, key.lastIndexOf('|'));
      if (latest.get(board) === h.asOf.getTime()) latest.delete(board);
    },
  });
  const inFlight = new Map<string, Promise<Held | null>>();
  let hits = 0;
  let misses = 0;
  let sharedHits = 0;

  /** Whether `h`, ranked at its instant, is still the board of the request's instant, read in `tx`'s snapshot. */
  async function current(tx: Tx, q: BoardPageQuery, h: Held): Promise<boolean> {
    const t0 = h.asOf;
    const now = q.live ? q.asOf : t0;
    if (now < t0 || clock() - h.madeAt > maxAgeMs) return false;
    const window = q.window === 'all' ? null : WINDOW_MS[q.window];
    const aged =
      window === null || now.getTime() === t0.getTime()
        ? sql`false`
        : sql`exists (select 1 from calls where settled_at > ${new Date(t0.getTime() - window)} and settled_at <= ${new Date(now.getTime() - window)})`;
    const [row] = (await tx.query(sql`
      select ${SETTLED_EPOCH} as epoch,
             exists (select 1 from calls where settled_at > ${t0} and settled_at <= ${now}) as newer,
             ${aged} as aged`)) as [{ epoch: string; newer: boolean; aged: boolean }];
    return row.epoch === h.epoch && !row.newer && !row.aged;
  }

  /** The request's page from `h`, or undefined when `h` is no longer its board (one snapshot for both). */
  async function fromHeld(key: string, q: BoardPageQuery, h: Held): Promise<BoardPage | null | undefined> {
    const page = await deps.read('board page', async (tx) => ((await current(tx, q, h)) ? deps.page(tx, q, h.ranked, q.start, q.limit) : undefined));
    if (page === undefined) return undefined;
    held.get(key);
    hits++;
    return page === null ? null : { ...page, asOf: h.asOf };
  }

  /**
   * The request's page from the latest ranking another process made of the board (not the one this
   * process just found out of date), held from then on; undefined when there is none still current.
   */
  async function fromShared(board: string, q: BoardPageQuery, stale: Held | undefined): Promise<BoardPage | null | undefined> {
    const s = await deps.shared?.get(board);
    if (s === undefined || s === null || (stale !== undefined && s.asOf.getTime() === stale.asOf.getTime() && s.epoch === stale.epoch)) return undefined;
    const h: Held = { ...s, bytes: 256 + s.ranked.length * 8 };
    const key = `${board}|${s.asOf.getTime()}`;
    const page = await fromHeld(key, q, h);
    if (page === undefined) return undefined;
    held.set(key, h);
    latest.set(board, s.asOf.getTime());
    sharedHits++;
    return page;
  }

  /**
   * Ranks the board as of the request's instant and answers the request's page in the same
   * snapshot; the ranking is held (shared by identical requests in flight, which are answered from
   * it after).
   */
  async function rankAndAnswer(board: string, q: BoardPageQuery): Promise<BoardPage | null> {
    const key = `${board}|${q.asOf.getTime()}`;
    const pending = inFlight.get(key);
    if (pending !== undefined) {
      const h = await pending;
      const page = h === null ? undefined : await fromHeld(key, q, h);
      if (page !== undefined) return page;
    }
    misses++;
    const { start, limit, live, ...query } = q;
    let answer!: (h: Held | null) => void;
    const made = new Promise<Held | null>((resolve) => (answer = resolve));
    if (pending === undefined) inFlight.set(key, made);
    try {
      const { h, page } = await deps.read('board page', async (tx) => {
        // First in the transaction: the snapshot the board is ranked from is the one the epoch names.
        const [{ epoch }] = (await tx.query(sql`select ${SETTLED_EPOCH} as epoch`)) as [{ epoch: string }];
        const ranked = await deps.rank(tx, query);
        const h: Held = { ranked, asOf: q.asOf, epoch, madeAt: clock(), bytes: 256 + ranked.length * 8 };
        return { h, page: await deps.page(tx, query, ranked, start, limit) };
      });
      held.set(key, h);
      if (live) {
        latest.set(board, q.asOf.getTime());
        void deps.shared?.put(board, h, maxAgeMs);
      }
      answer(h);
      return page === null ? null : { ...page, asOf: h.asOf };
    } catch (err) {
      answer(null);
      throw err;
    } finally {
      if (inFlight.get(key) === made) inFlight.delete(key);
    }
  }

  return {
    async page(q) {
      const board = [q.sort, q.window, q.field ?? ''].join('|');
      const at = q.live ? latest.get(board) : q.asOf.getTime();
      const key = `${board}|${at}`;
      const h = at === undefined ? undefined : held.peek(key);
      if (h !== undefined) {
        const page = await fromHeld(key, q, h);
        if (page !== undefined) return page;
        held.delete(key);
      }
      if (q.live) {
        const page = await fromShared(board, q, h);
        if (page !== undefined) return page;
      }
      return rankAndAnswer(board, q);
    },
    stats: () => ({ hits, misses, shared: sharedHits, entries: held.size, bytes: held.calculatedSize }),
  };
}
