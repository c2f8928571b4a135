import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { leaderboardRowSchema } from '@pm/shared/api';
import { IsolationLevel, sql, type Db } from '@pm/shared/db';
import net from 'node:net';
import { Redis } from 'ioredis';
import { createLogger } from '@pm/shared/logger';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { createBoardCache, type BoardCache, type BoardPageQuery } from './board-cache.js';
import { createSharedRankings, type SharedRankings } from './shared-rankings.js';
import { boardPageOf, boardRanking } from './skill-pages.js';

/**
 * A computed board's page is answered again from memory only while it is the page Postgres would
 * rank now: a settlement committed since (whatever time its calls say), a call settled after the
 * page's instant, a call that left the window, or the page's age each make it ranked again. Real
 * Postgres; the calls are settled the way the worker's statements leave them (settled_counts moves
 * with them, by its trigger).
 */

let tdb: TestDatabase;
let db: Db;
let tr: TestRedis;
const logger = createLogger('board-cache-test', { LOG_LEVEL: 'silent' });
const DAY = 24 * 3_600_000;
const t0 = new Date('2026-09-30T12:00:00Z');

beforeAll(async () => {
  tdb = await createTestDatabase('board_cache');
  db = tdb.db;
  tr = await createTestRedis('board_cache');
});
afterAll(async () => {
  await tr?.cleanup();
  await tdb?.drop();
});

let now = t0.getTime();
let cache: BoardCache;
let computed = 0;
beforeEach(async () => {
  await db.query(sql`truncate user_window_edges, user_window_records, calls, outcomes, markets, events, users restart identity cascade`);
  await db.query(sql`insert into events (id, slug, title, category) values ('e', 'e', 'E', 'Crypto')`);
  await db.query(sql`insert into markets (id, event_id, condition_id, position, question, closed) values ('m', 'e', 'm', 0, 'm?', true)`);
  await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values ('m', 0, 'Yes', 'm-0'), ('m', 1, 'No', 'm-1')`);
  await db.query(sql`insert into users (handle, display_name) values ('ann', 'Ann'), ('bob', 'Bob'), ('cy', 'Cy')`);
  now = t0.getTime();
  computed = 0;
  cache = createBoardCache({
    read: (_what, run) => db.tx(run, { readOnly: true, isolationLevel: IsolationLevel.REPEATABLE_READ }),
    rank: (tx, q) => {
      computed++;
      return boardRanking(tx, q);
    },
    page: boardPageOf,
    clock: () => now,
  });
});

let n = 0;
/** A call of `handle` settled `won` at `at`, as a settlement commits it. */
async function settle(handle: string, at: Date, profit = 10): Promise<void> {
  await db.query(sql`
    insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, xp_awarded, made_at, settled_at)
    select ${`c${++n}`}, id, 'm', 0, 0.5, 'won', ${profit}, 55, ${new Date(at.getTime() - DAY)}, ${at} from users where handle = ${handle}`);
}

const day = (): BoardPageQuery => ({ sort: 'profit', window: 'day', field: null, asOf: new Date(now), start: { after: 0 }, limit: 10, live: true });
const handles = (page: { bodies: string[] } | null) => page!.bodies.map((b) => leaderboardRowSchema.parse(JSON.parse(b)).handle);

describe('computed board pages held in memory', () => {
  it('are answered again, as ranked at their instant, while nothing they count moved', async () => {
    await settle('ann', new Date(t0.getTime() - 3_600_000), 20);
    await settle('bob', new Date(t0.getTime() - 7_200_000), 10);
    const first = await cache.page(day());
    expect(handles(first)).toEqual(['ann', 'bob']);
    now += 2_000;
    const again = await cache.page(day());
    expect(again).toEqual(first);
    expect(again!.asOf).toEqual(t0);
    expect(computed).toBe(1);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, entries: 1 });
  });

  it('rank again after a settlement commits, even one whose calls say they settled before the page', async () => {
    await settle('ann', new Date(t0.getTime() - 3_600_000), 20);
    expect(handles(await cache.page(day()))).toEqual(['ann']);
    // Committed after the page was ranked, stamped before its instant (a settling clock behind ours).
    await settle('cy', new Date(t0.getTime() - 1_000), 30);
    now += 1_000;
    expect(handles(await cache.page(day()))).toEqual(['cy', 'ann']);
    expect(computed).toBe(2);
  });

  it('rank again when a call settled after the instant, or left the window, since', async () => {
    await settle('ann', new Date(t0.getTime() - DAY + 5_000), 20);
    await settle('bob', new Date(t0.getTime() - 3_600_000), 10);
    expect(handles(await cache.page(day()))).toEqual(['ann', 'bob']);
    // Ann's call leaves the day window 5 s after the instant: at +3 s the page holds, at +6 s it does not.
    now += 3_000;
    expect(handles(await cache.page(day()))).toEqual(['ann', 'bob']);
    expect(computed).toBe(1);
    now += 3_000;
    expect(handles(await cache.page(day()))).toEqual(['bob']);
    expect(computed).toBe(2);
  });

  it('rank again once a call committed before the instant but stamped after it comes into the window', async () => {
    await settle('ann', new Date(t0.getTime() - 3_600_000), 20);
    // A settling clock 2 s ahead of ours: committed now, counted from t0 + 2 s.
    await settle('bob', new Date(t0.getTime() + 2_000), 30);
    expect(handles(await cache.page(day()))).toEqual(['ann']);
    now += 1_000;
    expect(handles(await cache.page(day()))).toEqual(['ann']);
    expect(computed).toBe(1);
    now += 2_000;
    expect(handles(await cache.page(day()))).toEqual(['bob', 'ann']);
    expect(computed).toBe(2);
  });

  it('rank again past their age, and hold a cursor page by its own instant', async () => {
    await settle('ann', new Date(t0.getTime() - 3_600_000), 20);
    await cache.page(day());
    now += 11_000;
    await cache.page(day());
    expect(computed).toBe(2);
    // A cursor's page: ranked at the cursor's instant, held for it, apart from the live page.
    const at = new Date(t0.getTime() + 5_000);
    const cursorPage = { ...day(), asOf: at, live: false };
    expect((await cache.page(cursorPage))!.asOf).toEqual(at);
    expect((await cache.page(cursorPage))!.asOf).toEqual(at);
    expect(computed).toBe(3);
  });

  it('hold at most their entry bound, dropping the page asked for least recently', async () => {
    await settle('ann', new Date(t0.getTime() - 3_600_000), 20);
    const small = createBoardCache({
      read: (_what, run) => db.tx(run, { readOnly: true, isolationLevel: IsolationLevel.REPEATABLE_READ }),
      rank: (tx, q) => {
        computed++;
        return boardRanking(tx, q);
      },
      page: boardPageOf,
      clock: () => now,
      maxEntries: 2,
    });
    const of = (window: 'day' | 'week' | 'month'): BoardPageQuery => ({ ...day(), window });
    await small.page(of('day'));
    await small.page(of('week'));
    await small.page(of('day'));
    await small.page(of('month'));
    expect(computed).toBe(3);
    await small.page(of('day'));
    expect(computed).toBe(3);
    await small.page(of('week'));
    expect(computed).toBe(4);
    expect(small.stats()).toMatchObject({ entries: 2 });
  });

  it('share one ranking between identical requests in flight, and rank nothing again for an unknown person', async () => {
    await settle('ann', new Date(t0.getTime() - 3_600_000), 20);
    const [a, b, c] = await Promise.all([cache.page(day()), cache.page(day()), cache.page(day())]);
    expect(a).toEqual(b);
    expect(b).toEqual(c);
    expect(computed).toBe(1);
    expect(await cache.page({ ...day(), start: { around: 'nobody' } })).toBeNull();
    expect(await cache.page({ ...day(), start: { around: 'nobody' } })).toBeNull();
    expect(computed).toBe(1);
  });

  it('cut every page of a walk with cursors, and each person\'s `around`, from one ranking', async () => {
    for (const [i, handle] of ['ann', 'bob', 'cy'].entries()) await settle(handle, new Date(t0.getTime() - 3_600_000), 10 * (i + 1));
    const first = await cache.page({ ...day(), limit: 1 });
    expect(handles(first)).toEqual(['cy']);
    now += 1_000;
    // The walk goes on at the first page's instant, as its cursor says.
    const walk = [...handles(first)];
    let after = first!.nextAfter;
    while (after !== null) {
      const page = await cache.page({ ...day(), asOf: first!.asOf, live: false, start: { after: Number(after) }, limit: 1 });
      walk.push(...handles(page));
      after = page!.nextAfter;
    }
    expect(walk).toEqual(['cy', 'bob', 'ann']);
    for (const who of ['ann', 'bob', 'cy']) expect(handles(await cache.page({ ...day(), start: { around: who }, limit: 1 }))).toEqual([who]);
    const rows = (await cache.page({ ...day(), start: { around: 'bob' }, limit: 3 }))!.bodies.map((b) => leaderboardRowSchema.parse(JSON.parse(b)));
    expect(rows.map((r) => [r.rank, r.handle, r.profit_on_10])).toEqual([
      [1, 'cy', 30],
      [2, 'bob', 20],
      [3, 'ann', 10],
    ]);
    expect(computed).toBe(1);
    // A settlement: the next page is ranked again, and the walk's own instant too.
    await settle('ann', new Date(t0.getTime() - 1_800_000), 100);
    expect(handles(await cache.page({ ...day(), limit: 1 }))).toEqual(['ann']);
    expect(handles(await cache.page({ ...day(), asOf: first!.asOf, live: false, start: { after: 0 }, limit: 1 }))).toEqual(['ann']);
    expect(computed).toBe(3);
  });
});

describe('computed board rankings shared between API processes', () => {
  /** An API process's cache over the shared rankings `shared`, counting the rankings it makes itself. */
  function processCache(shared: SharedRankings) {
    const made = { n: 0 };
    const cache = createBoardCache({
      read: (_what, run) => db.tx(run, { readOnly: true, isolationLevel: IsolationLevel.REPEATABLE_READ }),
      rank: (tx, q) => {
        made.n++;
        return boardRanking(tx, q);
      },
      page: boardPageOf,
      clock: () => now,
      shared,
    });
    return { cache, made };
  }

  it('rank a board once for every process: another answers from that ranking while it is current, and after a settlement ranks it once again between them', async () => {
    const shared = createSharedRankings({ redis: tr.redis, prefix: `${tr.prefix}_shared`, logger });
    const a = processCache(shared);
    const b = processCache(shared);
    await settle('ann', new Date(t0.getTime() - 3_600_000), 20);
    await settle('bob', new Date(t0.getTime() - 7_200_000), 10);
    const first = await a.cache.page(day());
    now += 1_000;
    const fromA = await b.cache.page(day());
    expect(handles(fromA)).toEqual(['ann', 'bob']);
    expect(fromA!.asOf).toEqual(first!.asOf);
    expect([a.made.n, b.made.n]).toEqual([1, 0]);
    expect(b.cache.stats()).toMatchObject({ shared: 1, misses: 0 });
    // B holds it from then on; a person's `around` is cut from it too.
    expect(handles(await b.cache.page({ ...day(), start: { around: 'bob' } }))).toEqual(['ann', 'bob']);
    expect(b.made.n).toBe(0);

    // A settlement: the first process asked ranks again; the other takes that ranking, not its own stale one.
    await settle('cy', new Date(t0.getTime() + 500), 30);
    now += 1_000;
    expect(handles(await b.cache.page(day()))).toEqual(['cy', 'ann', 'bob']);
    now += 1_000;
    expect(handles(await a.cache.page(day()))).toEqual(['cy', 'ann', 'bob']);
    expect([a.made.n, b.made.n]).toEqual([1, 1]);
  });

  it('rank for themselves, and answer, when Redis does not answer', async () => {
    // A server that accepts connections and never replies.
    const sockets: net.Socket[] = [];
    const blackhole = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const hung = new Redis((blackhole.address() as net.AddressInfo).port, '127.0.0.1', { maxRetriesPerRequest: null });
    hung.on('error', () => {});
    try {
      const { cache, made } = processCache(createSharedRankings({ redis: hung, prefix: tr.prefix, logger }));
      await settle('ann', new Date(t0.getTime() - 3_600_000), 20);
      expect(handles(await cache.page(day()))).toEqual(['ann']);
      now += 1_000;
      expect(handles(await cache.page(day()))).toEqual(['ann']);
      expect(made.n).toBe(1);
    } finally {
      hung.disconnect();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => blackhole.close(() => resolve()));
    }
  });
});
