import { LRUCache } from 'lru-cache';
import { WINDOW_MS } from '@pm/shared/domain';
import { sql, type Db } from '@pm/shared/db';
import type { Page } from './pages.js';
import type { BoardQuery, BoardStart } from './skill-pages.js';

type Tx = Pick<Db, 'query'>;

/** A computed board's page query: `live` when its instant is now (a first page, `around`), not a cursor's. */
export interface BoardPageQuery extends BoardQuery {
  start: BoardStart;
  limit: number;
  live: boolean;
}

/** A page and the instant it was ranked at (a held page answers a later `now`; its cursor carries this). */
export interface BoardPage extends Page {
  asOf: Date;
}

export interface BoardCache {
  page(q: BoardPageQuery): Promise<BoardPage | null>;
  stats(): { hits: number; misses: number; entries: number; bytes: number };
}

/**
 * What every computed board counts, as one value: the settled calls by status (settled_counts, kept
 * by a trigger on calls in the settling transaction itself). Read in the page's own snapshot, it
 * changes with every commit that settles a call, whatever time that call says it settled at.
 */
const SETTLED_EPOCH = sql`(select coalesce(string_agg(status || ':' || n, ',' order by status), '') from settled_counts where kind = 'call')`;

interface Held {
  page: BoardPage;
  epoch: string;
  madeAt: number;
  bytes: number;
}

/**
 * Computed boards' pages (skill-pages.ts), held per API process and answered again while nothing
 * they count has moved. Ranking a window or field board reads every row of it (60-320 ms of
 * Postgres on 50,000 people), and a public board is asked for far more often than a settlement
 * moves it. A held page ranked at instant t0 is the same page at a later `now` when, checked in one
 * statement of three index probes:
 * - no settling transaction committed since (SETTLED_EPOCH unchanged: this also catches a call
 *   committed after t0 with a settled_at at or before t0, a settling clock behind this one's);
 * - no call settled in (t0, now] (committed before t0 with a settled_at after it: a clock ahead);
 * - for a window board, no call left the window in between: none settled in (t0 − window, now − window].
 * Then it is answered as ranked at t0 (its next_cursor carries t0, so the walk stays on that
 * ranking). What a page shows besides the calls — handles, names, a record's profit_7d and streak
 * — may change without a settlement: a held page is answered for at most `maxAgeMs`. Identical
 * requests in flight share one computation. Bounded by entries and by bytes (least recently used out).
 */
export function createBoardCache(deps: {
  read: <T>(what: string, run: (tx: Tx) => Promise<T>) => Promise<T>;
  compute: (tx: Tx, q: BoardQuery, start: BoardStart, limit: number) => Promise<Page | null>;
  clock?: () => number;
  maxEntries?: number;
  maxBytes?: number;
  maxAgeMs?: number;
}): BoardCache {
  const clock = deps.clock ?? Date.now;
  const maxEntries = deps.maxEntries ?? 1000;
  const maxBytes = deps.maxBytes ?? 16 * 1024 * 1024;
  const maxAgeMs = deps.maxAgeMs ?? 10_000;
  // Least recently used out, by entries and by bytes; `peek` to check a page, `get` once it is answered.
  const held = new LRUCache<string, Held>({ max: maxEntries, maxSize: maxBytes, sizeCalculation: (h) => h.bytes });
  const inFlight = new Map<string, Promise<BoardPage | null>>();
  let hits = 0;
  let misses = 0;

  /** Whether `h`, ranked at its instant, is still the page of `now`. */
  async function current(q: BoardPageQuery, h: Held): Promise<boolean> {
    const t0 = h.page.asOf;
    const now = q.live ? q.asOf : t0;
    if (now < t0 || clock() - h.madeAt > maxAgeMs) return false;
    const window = q.window === 'all' ? null : WINDOW_MS[q.window];
    const aged =
      window === null || now.getTime() === t0.getTime()
        ? sql`false`
        : sql`exists (select 1 from calls where settled_at > ${new Date(t0.getTime() - window)} and settled_at <= ${new Date(now.getTime() - window)})`;
    const [row] = (await deps.read('board check', (tx) =>
      tx.query(sql`
        select ${SETTLED_EPOCH} as epoch,
               exists (select 1 from calls where settled_at > ${t0} and settled_at <= ${now}) as newer,
               ${aged} as aged`),
    )) as [{ epoch: string; newer: boolean; aged: boolean }];
    return row.epoch === h.epoch && !row.newer && !row.aged;
  }

  async function computed(key: string, q: BoardPageQuery): Promise<BoardPage | null> {
    const { start, limit, live: _live, ...board } = q;
    const made = await deps.read('board page', async (tx) => {
      // First in the transaction: the snapshot the page is ranked from is the one the epoch names.
      const [{ epoch }] = (await tx.query(sql`select ${SETTLED_EPOCH} as epoch`)) as [{ epoch: string }];
      return { epoch, page: await deps.compute(tx, board, start, limit) };
    });
    if (made.page === null) return null;
    const page: BoardPage = { ...made.page, asOf: q.asOf };
    held.set(key, { page, epoch: made.epoch, madeAt: clock(), bytes: page.bodies.reduce((n, b) => n + b.length, 256) });
    return page;
  }

  async function lookup(key: string, q: BoardPageQuery): Promise<BoardPage | null> {
    const h = held.peek(key);
    if (h !== undefined && (await current(q, h))) {
      held.get(key);
      hits++;
      return h.page;
    }
    misses++;
    return computed(key, q);
  }

  return {
    page(q) {
      const start = 'around' in q.start ? `around:${q.start.around}` : `after:${q.start.after}`;
      const key = [q.sort, q.window, q.field ?? '', start, q.limit, q.live ? 'now' : q.asOf.getTime()].join('|');
      const pending = inFlight.get(key);
      if (pending !== undefined) return pending;
      const p = lookup(key, q).finally(() => inFlight.delete(key));
      inFlight.set(key, p);
      return p;
    },
    stats: () => ({ hits, misses, entries: held.size, bytes: held.calculatedSize }),
  };
}
