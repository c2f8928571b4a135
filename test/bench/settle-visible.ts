import { z } from 'zod';
import { LEADERBOARD_SIZE } from '@pm/shared/api';
import { sql, type Db } from '@pm/shared/db';
import {
  BOARD_WINDOWS, LEADERBOARD_SORTS, onBoard, RIGHT_MIN_SETTLED, WEEK_MS, WINDOW_MS, windowRecords,
  type BoardWindow, type FieldKey, type LeaderboardSort, type SettlementStatus, type SkillCall,
} from '@pm/shared/domain';
import { httpGet } from '../support/http-get.js';

/**
 * bench:settle's outside view: when does a settlement show through the API over HTTP?
 *
 * Every API page that shows a settled call or a moved record (docs/api.md's endpoints), each held to
 * what Postgres committed (`Expected`, read by the bench right after the settlement's commit):
 * - /calls/{id} of every settled call: its committed status;
 * - /users/{handle} of every person it moved (the callers, and the owners of the combos it
 *   decided): their committed `settled` and `xp`;
 * - /users/{handle}/calls of every caller (docs/api.md: the same Call shape as the list, with status):
 *   the default list (`limit=100`) shows the call with its committed status, `status=open` no
 *   longer lists it, and the list of its new status does;
 * - /calls?market=<id> (the market's call list) and /calls (the newest calls): no settled call
 *   listed as open;
 * - /combos: no decided combo in the open list, and the won list shows one when any was won;
 * - /leaderboard, each board of BOARDS: a person the settlement moved onto or along it, read with
 *   `around=<handle>`, shows their row with the figures committed (settled, won, right_pct,
 *   profit_on_10, xp, profit_7d: of the board's window and field on a computed board, their whole
 *   record on a kept one). A computed board's person is picked before the settlement (pickWatched);
 *   a kept board keeps only its top 1,000, so its person is picked from its committed ranking
 *   (readKeptRanking) and their page polled from then on. A board's first page need not change
 *   (its top may be people the settlement did not touch), so it is not the test; but a kept
 *   board's first page (the worker's snapshot) must show every moved person on it with their
 *   committed figures, and every one the committed ranking puts well inside it. A board no moved
 *   person can be on (a window the settled calls are outside of, another league, too few settled
 *   calls, not in a kept board's top 1,000), or a first page with no moved person before or after,
 *   is left out and named.
 * Reading every one of these pages (tens of thousands) takes longer than the time being measured,
 * so the wait is in two steps, from the moment the bench sees the commit (no page can show the
 * settlement before it, and polling meanwhile would only load the machine it runs on):
 *   1. sentinels — the boards, and the market, latest and combo lists (each in a loop of their own),
 *      and a sample of calls spread over the market with their people's records and lists (and a
 *      sample of combo owners) — are polled until every one shows it (`sampleMs`);
 *   2. then every page is read once (of the people's records, a spread of PEOPLE_CHECKED); any that
 *      does not show it yet is polled until it does (`lastMs` = when the last one was seen, or
 *      `sampleMs` when none was missing).
 * A 503 (a page query past its statement timeout under the load) is a page not showing it yet:
 * polled again, and counted.
 * An item's time is that of the first response that showed it (not the end of the polling pass).
 */

/** A board of docs/api.md's leaderboard, as the bench reads it. */
export interface Board {
  /** Its query (`sort=…&window=…`), without `limit` or `around`. */
  query: string;
  /** `week` only for the week board kept as rows. */
  sort: LeaderboardSort;
  window: BoardWindow;
  field: FieldKey | null;
  /** Kept as rows (its first page the worker's snapshot); else ranked on request from Postgres. */
  kept: boolean;
}

function board(query: string): Board {
  const q = new URLSearchParams(query);
  const sort = z.enum(LEADERBOARD_SORTS).parse(q.get('sort') ?? 'profit');
  const window = z.enum(BOARD_WINDOWS).parse(q.get('window') ?? (sort === 'week' ? 'week' : 'all'));
  const league = q.get('league');
  const category = q.get('category');
  const field: FieldKey | null = league !== null ? `l:${league.toLowerCase()}` : category !== null ? `c:${category}` : null;
  // services/api's get-leaderboard.ts: which boards are kept as rows.
  const week = sort === 'week' || (sort === 'profit' && window === 'week');
  const kept = field === null && (week || window === 'all');
  return { query, sort: kept && week ? 'week' : sort, window, field, kept };
}

/**
 * The boards watched: the six kept as rows, and computed ones of each kind (a window, a category, a
 * league), read as committed. The data's events are Sport, half of them in the league `nba` (the
 * settled market's among them).
 */
export const BOARDS: readonly Board[] = [
  'sort=profit', 'sort=right', 'sort=xp', 'sort=week', 'sort=clv', 'sort=brier',
  'sort=profit&window=day', 'sort=brier&window=week', 'sort=clv&window=month', 'sort=right&category=Sport', 'sort=xp&league=nba',
].map(board);
/**
 * Calls sampled as sentinels (each with its person's record and three lists), polled SENTINEL_CONCURRENCY
 * at a time: enough to see the settlement arrive everywhere, light enough not to be the load it is
 * measured under (polling 300 pages 32 at a time held the settlement's own commit back by a second on
 * a 2-core machine). An item's time is that of the response that first showed it, so a pass longer
 * than the settlement's own work times the pass: with 25 calls (150 person pages, read 8 at a time
 * at 20-40 ms each while the worker builds) the last person's page was read ~900 ms after the
 * commit, though it is read from Postgres as committed. Every page is verified once the sentinels
 * show it, and any that does not is polled and timed on its own.
 */
const SAMPLE = 10;
/**
 * Of the sampled people, whose record page (/users/{handle}) is a sentinel: RECORD_SENTINELS callers
 * and as many combo owners. A record page ranks its person on every board over every record, ~0.1–0.5 s
 * of Postgres each at 50,000 people: twenty of them, 8 at a time, kept the 2-core machine's Postgres
 * busy for the second after the commit in which the worker builds the lists, and the bench timed its
 * own load. They are read from Postgres as committed, by one statement for everyone.
 */
const RECORD_SENTINELS = 2;
/**
 * Moved people whose record page is read once the sentinels show the settlement (every call page
 * and call list is): reading all 15,000-odd a settlement moves (RECORD_SENTINELS: each ~0.1–0.5 s
 * of Postgres) took the 2-core machine over a quarter of an hour.
 */
const PEOPLE_CHECKED = 200;
const SENTINEL_CONCURRENCY = 8;
/**
 * A watched person has no call that enters or leaves a board on its own within this much of the
 * pick (a call settled in the generated data's future, or one at a window's edge): their committed
 * figures stay what the board shows for the whole wait, whatever instant the API ranks it as of.
 */
const STEADY_MS = 15 * 60_000;
/**
 * A moved person the committed ranking puts this high on a kept board must be on its first page: a
 * margin below LEADERBOARD_SIZE, as the week board may be re-ranked by its roll-over meanwhile.
 */
const SURELY_ON_TOP = LEADERBOARD_SIZE - 5;

const figures = z.object({
  settled: z.number(),
  won: z.number(),
  right_pct: z.number(),
  profit_on_10: z.number(),
  xp: z.number(),
  profit_7d: z.number(),
});
/** What a board row shows that a settlement moves (docs/api.md's LeaderboardRow). */
export type Figures = z.infer<typeof figures>;
const sameFigures = (a: Figures, b: Figures) =>
  a.settled === b.settled &&
  a.won === b.won &&
  a.right_pct === b.right_pct &&
  a.xp === b.xp &&
  Math.round(a.profit_on_10 * 100) === Math.round(b.profit_on_10 * 100) &&
  Math.round(a.profit_7d * 100) === Math.round(b.profit_7d * 100);

const userResponse = z.object({ user: z.object({ settled: z.number(), xp: z.number() }) });
const callResponse = z.object({ call: z.object({ status: z.string() }) });
const listResponse = z.object({ calls: z.array(z.object({ id: z.string(), status: z.string() })) });
const comboListResponse = z.object({ combos: z.array(z.object({ id: z.string() })) });
const boardResponse = z.object({ rows: z.array(figures.extend({ rank: z.number(), handle: z.string() })) });

/** A moved person watched on a board through `around`. */
export interface Watch {
  board: Board;
  handle: string;
}

/** Who is watched where, as far as it is known before the settlement. */
export interface Picked {
  /** On each computed board, its watched person. */
  watched: Watch[];
  /**
   * The moved callers whose figures cannot change on their own during the wait (STEADY_MS), with
   * their record before the settlement: a kept board's watched person is one of them, picked once
   * its ranking is committed (it keeps only its top 1,000, so who is on it is known only then).
   */
  steady: Map<string, Figures>;
  /** Computed boards no moved person can be on, with why. */
  leftOut: Array<{ board: Board; why: string }>;
}

/** The board pages before the settlement (each as the bench's item key and the body read). */
export interface Before {
  pages: Map<string, string>;
}

/** What Postgres committed: each settled call's status, each moved person's figures, the decided combos. */
export interface Expected {
  calls: Map<string, string>;
  /** Each moved person's record (user_records). */
  users: Map<string, Figures>;
  combos: { decided: Set<string>; won: boolean };
  /** Per watched board (its query): its watched person and their row's figures. */
  boards: Map<string, { watch: Watch; figures: Figures }>;
  /** Kept boards whose committed ranking has no steady moved person (not watched through `around`). */
  keptLeftOut: string[];
  /** Per kept board (its query): the moved people its committed ranking puts on the first page, with their rank. */
  tops: Map<string, Map<string, number>>;
}

export interface Visible {
  /** Per kind of sentinel page, when the last of that kind was seen (ms after t0), and how many polling passes the sentinels took. */
  byKind: Record<string, number>;
  /** Each sentinel request: when it was sent (ms after t0) and how long its answer took. */
  latencies: Array<{ kind: string; sentMs: number; ms: number }>;
  passes: number;
  sampleMs: number;
  lastMs: number;
  sampled: number;
  checked: number;
  /** Moved people, and how many of their records (/users/{handle}) were read (sentinels and a spread of the rest). */
  people: { checked: number; moved: number };
  /** 503s answered per kind of page (polled again). */
  unavailable: Record<string, number>;
  /** Kept boards whose first page had no moved person before the settlement or after it (not waited for). */
  unmovedTops: string[];
  /** Kept boards whose committed ranking has no moved person with steady figures (no page watched through `around`). */
  keptLeftOut: string[];
}

type Item =
  | { kind: 'call'; id: string }
  | { kind: 'user'; handle: string }
  | { kind: 'list'; handle: string; id: string; filter: 'all' | 'open' | 'status'; status: string }
  | { kind: 'market'; marketId: string }
  | { kind: 'latest' }
  | { kind: 'combos'; status: 'open' | 'won' }
  | { kind: 'board'; watch: Watch }
  | { kind: 'top'; board: Board };

/** A 503 (docs/api.md: Postgres or a snapshot unavailable, e.g. a page query past its statement timeout): the page does not show the settlement yet. */
class Unavailable extends Error {}

/** GET `url`; a 503 is Unavailable, any other status but 200 an error (a bench cannot wait for a 404 or a 500 to go away). */
async function getText(url: string): Promise<string> {
  // node:http, not fetch: the pollers' own CPU is taken from the machine the settlement runs on (http-get.ts).
  const { status, text } = await httpGet(url);
  if (status === 503) throw new Unavailable(`${url}: ${status} ${text.slice(0, 200)}`);
  if (status !== 200) throw new Error(`${url}: ${status} ${text.slice(0, 200)}`);
  return text;
}

async function getJson<S extends z.ZodType>(url: string, schema: S, seen: (text: string) => void = () => {}): Promise<z.output<S>> {
  const text = await getText(url);
  seen(text);
  return schema.parse(JSON.parse(text));
}

/** Runs `fn` over `items` with at most `concurrency` at once; results in item order. */
async function pool<T, R>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

const aroundUrl = (apiUrl: string, w: Watch) => `${apiUrl}/api/v1/leaderboard?${w.board.query}&around=${w.handle}`;
const topUrl = (apiUrl: string, b: Board) => `${apiUrl}/api/v1/leaderboard?${b.query}&limit=${LEADERBOARD_SIZE}`;
/** An item's key in `Before` (board items only). */
const pageKey = (item: { kind: 'board'; watch: Watch } | { kind: 'top'; board: Board }) =>
  item.kind === 'board' ? `around ${item.watch.board.query}` : `top ${item.board.query}`;
const boardItems = (watched: readonly Watch[]): Array<Extract<Item, { kind: 'board' | 'top' }>> => [
  ...watched.map((watch) => ({ kind: 'board' as const, watch })),
  ...BOARDS.filter((b) => b.kept).map((board) => ({ kind: 'top' as const, board })),
];

/**
 * The board pages the bench watches, before the settlement: each computed board's watched person's
 * page (`around`) and each kept board's first page. Each must not already show what the settlement committed (the
 * wait checks that), or watching it would prove nothing; reading them also has the API hold the
 * first pages, as a busy one would.
 */
export async function readBefore(apiUrl: string, watched: readonly Watch[]): Promise<Before> {
  const items = boardItems(watched);
  const bodies = await pool(items, 4, (item) => getText(item.kind === 'board' ? aroundUrl(apiUrl, item.watch) : topUrl(apiUrl, item.board)));
  return { pages: new Map(items.map((item, i) => [pageKey(item), bodies[i]!])) };
}

export interface Affected {
  marketId: string;
  /** The market's open calls with their callers and the status the resolution gives them (won or lost). */
  calls: ReadonlyArray<{ id: string; handle: string; status: string }>;
  /** Owners of open combos with a leg on the market (their record moves when a combo is decided). */
  comboOwners: readonly string[];
}

type PersonCall = SkillCall & { id: string; marketId: string };

/**
 * inputs: handles. outputs: per handle, every call of theirs as the skill rules read it (its market's
 * closing chance of the called outcome, its event's category and league).
 */
async function callsOf(db: Db, handles: readonly string[]): Promise<Map<string, PersonCall[]>> {
  const rows: Array<{
    handle: string; id: string; user_id: number; market_id: string; status: SettlementStatus; chance: number; closing: number | null;
    profit: number | null; xp: number; settled_at: Date | null; category: string; league: string | null;
  }> = await db.query(sql`
    select u.handle, c.id, c.user_id, c.market_id, c.status, c.chance_at_call::float8 as chance,
           (m.closing_chances[c.outcome_index + 1])::float8 as closing, c.profit_on_10::float8 as profit,
           c.xp_awarded as xp, c.settled_at, e.category, e.league
    from users u
    join calls c on c.user_id = u.id
    join markets m on m.id = c.market_id
    join events e on e.id = m.event_id
    where u.handle = any(${[...handles]}::text[])`);
  const by = new Map<string, PersonCall[]>();
  for (const r of rows) {
    const list = by.get(r.handle) ?? [];
    list.push({
      id: r.id, marketId: r.market_id, userId: r.user_id, status: r.status, chanceAtCall: r.chance, closingChance: r.closing,
      profitOn10: r.profit, xpAwarded: r.xp, settledAt: r.settled_at, category: r.category, league: r.league,
    });
    by.set(r.handle, list);
  }
  return by;
}

/** A person's record on a board as of `asOf` (domain: windowRecords), or undefined without a call on it. */
function boardRecord(b: Board, calls: readonly PersonCall[], handle: string, asOf: Date) {
  if (calls.length === 0) return undefined;
  const [r] = windowRecords(calls, new Map([[calls[0]!.userId, handle]]), b.sort === 'week' ? 'all' : b.window, b.field, asOf);
  // The kept week board ranks the whole record of people with a call settled in the last 7 days.
  const week = b.sort === 'week' && calls.some((c) => c.settledAt !== null && c.settledAt.getTime() > asOf.getTime() - WEEK_MS && c.settledAt <= asOf);
  return r && { ...r, playedThisWeek: r.playedThisWeek || week };
}

/** inputs: handles. outputs: their records (user_records) as a board row shows them. */
async function recordsOf(db: Db, handles: readonly string[]): Promise<Map<string, Figures>> {
  const rows: Array<Figures & { handle: string }> = await db.query(sql`
    select u.handle, r.settled, r.won, r.right_pct, r.profit_on_10::float8 as profit_on_10, r.xp, r.profit_7d::float8 as profit_7d
    from unnest(${[...handles]}::text[]) h(handle) join users u on u.handle = h.handle join user_records r on r.user_id = u.id`);
  return new Map(rows.map(({ handle, ...f }) => [handle, f]));
}

/**
 * Before the settlement: the moved callers whose figures cannot change on their own during the wait
 * (no call of theirs settled in the generated data's near future or near a window's edge), and for
 * each computed board one of them who will be on it afterwards (the domain's onBoard over their
 * calls, the market's counted as settled now — a window board counts it, a field board when the
 * market is of its field), picked per board in turn through the callers so the boards watch
 * different people. Computed boards no moved person can be on are left out, with why.
 */
export async function pickWatched(db: Db, affected: Affected, now: Date): Promise<Picked> {
  const status = new Map(affected.calls.map((c) => [c.id, c.status]));
  const handles = [...new Set(affected.calls.map((c) => c.handle))];
  const calls = await callsOf(db, handles);
  const edges = Object.values(WINDOW_MS).map((ms) => now.getTime() - ms);
  const steady = (list: readonly PersonCall[]) =>
    list.every((c) => {
      const at = c.settledAt?.getTime();
      return at === undefined || ((at <= now.getTime() || at > now.getTime() + STEADY_MS) && edges.every((edge) => Math.abs(at - edge) > STEADY_MS));
    });
  // Each caller's calls with the market's open calls settled as the resolution will settle them.
  const after = new Map(
    handles.map((h) => [
      h,
      (calls.get(h) ?? []).map((c): PersonCall => {
        const s = c.marketId === affected.marketId && c.status === 'open' ? status.get(c.id) : undefined;
        return s === undefined ? c : { ...c, status: s as SettlementStatus, settledAt: now, profitOn10: 0, xpAwarded: 0 };
      }),
    ]),
  );
  const candidates = handles.filter((h) => steady(calls.get(h) ?? []));
  const watched: Watch[] = [];
  const leftOut: Picked['leftOut'] = [];
  const computed = BOARDS.filter((b) => !b.kept);
  computed.forEach((b, i) => {
    const start = Math.floor((i * candidates.length) / computed.length);
    const order = [...candidates.slice(start), ...candidates.slice(0, start)];
    const handle = order.find((h) => {
      const r = boardRecord(b, after.get(h)!, h, now);
      // The person's call the settlement settles counts on the board (its market is of the board's field).
      const moved = after.get(h)!.some((c) => status.has(c.id) && boardRecord(b, [c], h, now) !== undefined);
      return r !== undefined && moved && onBoard(b.sort, r);
    });
    if (handle !== undefined) watched.push({ board: b, handle });
    else leftOut.push({ board: b, why: candidates.length === 0 ? 'no moved person with steady figures' : 'no moved person on it after the settlement: its window, field or minimum of settled calls' });
  });
  return { watched, steady: await recordsOf(db, candidates), leftOut };
}

/** The kept boards' committed ranking as far as the bench needs it, and the person each watches. */
export interface KeptRanking {
  /** Rows of the moved callers with steady figures and of the first pages: sort, rank, handle, settled. */
  ranked: Array<{ sort: string; rank: number; handle: string; settled: number }>;
  /** On each kept board, a steady moved caller its committed ranking has: the middle one of them (`around` then pages into the board). */
  watched: Watch[];
  /** Kept boards whose committed ranking has none. */
  leftOut: string[];
}

/** The right board lists only people with enough settled calls, whatever the ranking holds (the API's first page and pages alike). */
const listed = (r: { sort: string; settled: number }) => r.sort !== 'right' || r.settled >= RIGHT_MIN_SETTLED;

/**
 * Read as soon as the settlement has committed (one statement, before the rest of readExpected): a
 * kept board keeps its top 1,000 only, so who of the moved is on it is known only then, and their
 * page is polled from then on.
 */
export async function readKeptRanking(db: Db, picked: Picked): Promise<KeptRanking> {
  const kept = BOARDS.filter((b) => b.kept);
  // Every kept row (six boards of at most 1,000), filtered here: in SQL, by the ~10,000 steady
  // handles, the statement took 74 ms of the Postgres the pages it judges were being read from.
  const rows: KeptRanking['ranked'] = await db.query(sql`
    select l.sort, l.rank, u.handle, coalesce(r.settled, 0) as settled
    from leaderboard_rows l join users u on u.id = l.user_id left join user_records r on r.user_id = l.user_id
    where l.sort = any(${kept.map((b) => b.sort)}::text[])`);
  const ranked = rows.filter((r) => r.rank <= LEADERBOARD_SIZE || picked.steady.has(r.handle));
  const watched: Watch[] = [];
  const leftOut: string[] = [];
  for (const b of kept) {
    const on = ranked.filter((r) => r.sort === b.sort && picked.steady.has(r.handle) && listed(r)).sort((x, y) => x.rank - y.rank);
    const middle = on[Math.floor(on.length / 2)];
    if (middle === undefined) leftOut.push(b.query);
    else watched.push({ board: b, handle: middle.handle });
  }
  return { ranked, watched, leftOut };
}

/**
 * What the settlement committed, read once it has: each call's status, each moved person's record,
 * the decided combos; each computed board's watched person's row (by the domain's rules over their
 * calls, as of now); each kept board's watched person's row (their record); and the moved people
 * each kept board's committed ranking puts on its first page. A computed board's watched person not
 * on it as committed is an error (the pick was wrong: waiting for them would wait for ever), as is a
 * watched person whose record did not change (watching would prove nothing).
 */
export async function readExpected(db: Db, affected: Affected, picked: Picked, keptRanking: Promise<KeptRanking>): Promise<Expected> {
  const ids = new Set(affected.calls.map((c) => c.id));
  const handles = [...new Set([...affected.calls.map((c) => c.handle), ...affected.comboOwners])];
  const [calls, users, combos, kept, person] = await Promise.all([
    // By the market's index, not by 10,000 ids: that was a parallel scan of every call (0.3-0.4 s of
    // both cores), read right after the commit while the pages it judges were being read.
    (db.query(sql`select id, status from calls where market_id = ${affected.marketId}`) as Promise<Array<{ id: string; status: string }>>).then((rows) =>
      rows.filter((r) => ids.has(r.id)),
    ),
    recordsOf(db, handles),
    db.query(sql`
      select k.id, k.status from combos k
      where k.status <> 'open' and exists (select 1 from combo_legs l where l.combo_id = k.id and l.market_id = ${affected.marketId})`) as Promise<
      Array<{ id: string; status: string }>
    >,
    keptRanking,
    callsOf(db, picked.watched.map((w) => w.handle)),
  ]);
  const asOf = new Date();
  const boards = new Map<string, { watch: Watch; figures: Figures }>();
  const changed = (handle: string, figures: Figures) => {
    const was = picked.steady.get(handle);
    if (was !== undefined && sameFigures(was, figures)) throw new Error(`the record of ${handle} did not change: watching it proves nothing`);
    return figures;
  };
  for (const w of picked.watched) {
    const whole = users.get(w.handle);
    const r = boardRecord(w.board, person.get(w.handle) ?? [], w.handle, asOf);
    if (whole === undefined || r === undefined || !onBoard(w.board.sort, r)) throw new Error(`${w.board.query}: the watched ${w.handle} is not on it as committed`);
    changed(w.handle, whole);
    // Window and field rows count the board's calls; profit_7d is the whole record's.
    boards.set(w.board.query, { watch: w, figures: { settled: r.settled, won: r.won, right_pct: r.rightPct, profit_on_10: r.profitOn10, xp: r.xp, profit_7d: whole.profit_7d } });
  }
  for (const w of kept.watched) boards.set(w.board.query, { watch: w, figures: changed(w.handle, users.get(w.handle)!) });
  const tops = new Map<string, Map<string, number>>();
  for (const b of BOARDS.filter((x) => x.kept)) {
    tops.set(b.query, new Map(kept.ranked.filter((r) => r.sort === b.sort && r.rank <= LEADERBOARD_SIZE && users.has(r.handle) && listed(r)).map((r) => [r.handle, r.rank])));
  }
  return {
    calls: new Map(calls.map((c) => [c.id, c.status])),
    users,
    combos: { decided: new Set(combos.map((c) => c.id)), won: combos.some((c) => c.status === 'won') },
    boards,
    keptLeftOut: kept.leftOut,
    tops,
  };
}

/** How an item's kind is reported: a board's watched person's page by the kind of board. */
const kindOf = (item: Item): string => (item.kind === 'board' ? (item.watch.board.kept ? 'board_kept' : 'board_computed') : item.kind);

/**
 * Judges a board page against what was committed: a watched person's page (`around`) must show their
 * row with their committed figures; a kept board's first page must show every moved person on it with
 * their committed figures, and have every moved person the committed ranking puts well inside it.
 */
function boardJudge(item: Extract<Item, { kind: 'board' | 'top' }>, text: string): (want: Expected) => boolean {
  const { rows } = boardResponse.parse(JSON.parse(text));
  if (item.kind === 'board') {
    const row = rows.find((r) => r.handle === item.watch.handle);
    return (want) => {
      const w = want.boards.get(item.watch.board.query);
      return row !== undefined && w !== undefined && w.watch.handle === item.watch.handle && sameFigures(row, w.figures);
    };
  }
  const top = (want: Expected) => want.tops.get(item.board.query) ?? new Map<string, number>();
  return (want) =>
    rows.every((r) => {
      const w = want.users.get(r.handle);
      return w === undefined || sameFigures(r, w);
    }) && [...top(want)].every(([handle, rank]) => rank > SURELY_ON_TOP || rows.some((r) => r.handle === handle));
}

/**
 * Kept boards whose first page has nothing to show of the settlement: no moved person on it before,
 * nor after as committed (worked out once per board: the polling loops ask on every pass).
 */
function unmovedTops(before: Before, want: Expected): Set<string> {
  const unmoved = new Set<string>();
  for (const b of BOARDS.filter((x) => x.kept)) {
    const { rows } = boardResponse.parse(JSON.parse(before.pages.get(`top ${b.query}`)!));
    if ((want.tops.get(b.query)?.size ?? 0) === 0 && !rows.some((r) => want.users.has(r.handle))) unmoved.add(b.query);
  }
  return unmoved;
}

export async function waitForSettlement(
  apiUrl: string,
  affected: Affected,
  picked: Picked,
  keptRanking: Promise<KeptRanking>,
  before: Before,
  commit: Promise<void>,
  expected: Promise<Expected>,
  t0: number,
  timeoutMs: number,
): Promise<Visible> {
  const v1 = `${apiUrl}/api/v1`;
  type Judge = (want: Expected) => boolean;
  /** The last body read of each item, for a timeout to say what was seen. */
  const lastSeen = new Map<Item, string>();
  const fetchItem = async (item: Item): Promise<Judge> => {
    const seen = (text: string) => lastSeen.set(item, text);
    switch (item.kind) {
      case 'call': {
        const { call } = await getJson(`${v1}/calls/${item.id}`, callResponse, seen);
        return (want) => call.status === want.calls.get(item.id);
      }
      case 'user': {
        const { user } = await getJson(`${v1}/users/${item.handle}`, userResponse, seen);
        return (want) => {
          const w = want.users.get(item.handle);
          return w !== undefined && user.settled === w.settled && user.xp === w.xp;
        };
      }
      case 'list': {
        // The filter of the call's new status is known before the settlement: the market resolved to
        // an outcome, so each call's status is decided (the committed values still judge it).
        const status = item.status;
        const query = item.filter === 'all' ? 'limit=100' : `status=${item.filter === 'open' ? 'open' : status}&limit=100`;
        const { calls } = await getJson(`${v1}/users/${item.handle}/calls?${query}`, listResponse, seen);
        const listed = calls.find((c) => c.id === item.id);
        return (want) => (item.filter === 'open' ? listed === undefined : listed?.status === want.calls.get(item.id) && status === want.calls.get(item.id));
      }
      case 'market':
      case 'latest': {
        const url = item.kind === 'market' ? `${v1}/calls?market=${item.marketId}&limit=100` : `${v1}/calls?limit=100`;
        const { calls } = await getJson(url, listResponse, seen);
        return (want) => calls.every((c) => !want.calls.has(c.id) || c.status === want.calls.get(c.id));
      }
      case 'combos': {
        const { combos } = await getJson(`${v1}/combos?status=${item.status}&limit=50`, comboListResponse, seen);
        return (want) => (item.status === 'open' ? combos.every((c) => !want.combos.decided.has(c.id)) : !want.combos.won || combos.some((c) => want.combos.decided.has(c.id)));
      }
      case 'board':
      case 'top': {
        const text = await getText(item.kind === 'board' ? aroundUrl(apiUrl, item.watch) : topUrl(apiUrl, item.board));
        const judge = boardJudge(item, text);
        if (item.kind === 'top') seen(text);
        else seen(JSON.stringify(boardResponse.parse(JSON.parse(text)).rows.find((r) => r.handle === item.watch.handle) ?? `${item.watch.handle} not on the page`));
        return judge;
      }
    }
  };
  /** 503s answered, per kind of page: polled again (the page does not show the settlement yet), and reported. */
  const unavailable: Record<string, number> = {};
  const judgeOf = (item: Item): Promise<Judge> =>
    fetchItem(item).catch((err: unknown) => {
      if (!(err instanceof Unavailable)) throw err;
      unavailable[kindOf(item)] = (unavailable[kindOf(item)] ?? 0) + 1;
      lastSeen.set(item, err.message);
      return () => false;
    });
  /**
   * Polls until every item shows it; returns when (ms after t0) the last was seen — each item's time
   * is that of the response that first showed it, not the end of the pass it was in — or undefined
   * when none was missing. A response is judged against what Postgres committed once the bench has
   * read that (a moment after the commit); until then the passes go on and their responses are kept,
   * so a page that showed the settlement before the bench knew what to look for counts from when it
   * arrived.
   */
  const byKind: Record<string, number> = {};
  /** Each sentinel request: its kind, when it was sent and how long its answer took (ms). */
  const latencies: Array<{ kind: string; sentMs: number; ms: number }> = [];
  let sentinelsDone = false;
  let passes = 0;
  let want: Expected | undefined;
  // What was committed could not be read: no response can be judged, so the wait ends with why.
  let unread: unknown;
  let unmoved = new Set<string>();
  void expected
    .then((w) => {
      unmoved = unmovedTops(before, w);
      want = w;
    })
    .catch((err: unknown) => (unread = err ?? new Error('the committed values could not be read')));
  const until = async (items: Item[]): Promise<number | undefined> => {
    let pending = items;
    let seenAt: number | undefined;
    const held = new Map<Item, Array<{ at: number; judge: Judge }>>();
    while (pending.length > 0) {
      if (performance.now() - t0 > timeoutMs) {
        const committedRow = (p: Item) => (p.kind === 'board' ? ` committed: ${JSON.stringify(want?.boards.get(p.watch.board.query)?.figures ?? null)}` : '');
        const shown = pending.slice(0, 5).map((p) => `${JSON.stringify(p)} last read: ${(lastSeen.get(p) ?? '(nothing)').slice(0, 600)}${committedRow(p)}`);
        throw new Error(`${pending.length} pages still without the settlement after ${timeoutMs} ms:\n${shown.join('\n')}`);
      }
      passes += 1;
      const responses = await pool(pending, SENTINEL_CONCURRENCY, async (item) => {
        const sent = performance.now();
        const judge = await judgeOf(item);
        const at = performance.now() - t0;
        if (!sentinelsDone) latencies.push({ kind: kindOf(item), sentMs: sent - t0, ms: performance.now() - sent });
        return { at, judge };
      });
      responses.forEach((r, i) => held.set(pending[i]!, [...(held.get(pending[i]!) ?? []), r]));
      // The committed values are read a moment after the commit: poll on meanwhile.
      if (unread !== undefined) throw unread;
      if (!want) continue;
      const known = want;
      pending = pending.filter((item) => {
        // A kept board's first page with no moved person on it before or after has nothing to show.
        if (item.kind === 'top' && unmoved.has(item.board.query)) return false;
        const shown = held.get(item)!.find((r) => r.judge(known));
        if (!shown) return true;
        seenAt = Math.max(seenAt ?? 0, shown.at);
        byKind[kindOf(item)] = Math.round(Math.max(byKind[kindOf(item)] ?? 0, shown.at));
        return false;
      });
      held.clear();
    }
    return seenAt;
  };
  // Per call: its page, its person's record (once a person; of those `person` takes) and their three
  // lists, so no kind waits for the others' whole pass.
  const callerItems = (calls: Affected['calls'], person: (handle: string) => boolean = () => true): Item[] => {
    const items: Item[] = [];
    const people = new Set<string>();
    for (const c of calls) {
      items.push({ kind: 'call', id: c.id });
      if (!people.has(c.handle) && person(c.handle)) items.push({ kind: 'user', handle: c.handle });
      people.add(c.handle);
      for (const filter of ['all', 'open', 'status'] as const) items.push({ kind: 'list', handle: c.handle, id: c.id, filter, status: c.status });
    }
    return items;
  };
  const callers = new Set(affected.calls.map((c) => c.handle));
  const ownersOnly = affected.comboOwners.filter((h) => !callers.has(h));
  const spread = <T>(xs: readonly T[], n = SAMPLE) => xs.filter((_, i) => i % Math.max(1, Math.floor(xs.length / n)) === 0);
  // The boards' pages: each computed board's watched person's (read from Postgres as committed,
  // ranked on request: a few hundred ms a read) and the kept boards' first pages (the worker's
  // snapshots, rebuilt after the commit). A kept board's watched person is known once the bench
  // has read the committed ranking (keptWatches): their page is polled from then on.
  const arounds: Item[] = boardItems(picked.watched).filter((item) => item.kind === 'board');
  const keptWatches = (kept: KeptRanking): Item[] => kept.watched.map((watch): Item => ({ kind: 'board', watch }));
  // The shared lists and the kept boards' first pages: the worker's snapshots.
  const lists: Item[] = [
    ...boardItems(picked.watched).filter((item) => item.kind === 'top'),
    { kind: 'market', marketId: affected.marketId },
    { kind: 'latest' },
    { kind: 'combos', status: 'open' },
    { kind: 'combos', status: 'won' },
  ];
  const globals = [...arounds, ...lists];
  // The combo owners' records spread through the callers' pages, not read after all of them.
  const sampledCalls = spread(affected.calls);
  const recordSentinels = new Set(spread(sampledCalls, RECORD_SENTINELS).map((c) => c.handle));
  const callerPages = callerItems(sampledCalls, (h) => recordSentinels.has(h));
  const ownerPages = spread(ownersOnly, RECORD_SENTINELS).map((handle): Item => ({ kind: 'user', handle }));
  const every = Math.max(1, Math.ceil(callerPages.length / Math.max(1, ownerPages.length)));
  const people: Item[] = [];
  let owner = 0;
  callerPages.forEach((item, i) => {
    people.push(item);
    if (i % every === every - 1 && owner < ownerPages.length) people.push(ownerPages[owner++]!);
  });
  const sentinels: Item[] = [...globals, ...people, ...ownerPages.slice(owner)];
  // The shared lists (a handful of pages, the last to change: the worker builds them after the
  // commit) are polled in a loop of their own, so their time is not that of a pass over hundreds of
  // person pages that were already showing the settlement; so are the boards' watched people, read
  // from Postgres (a computed board's read ranks the whole board: longer than a list's).
  // No page can show the settlement before it commits, and polling hundreds of pages meanwhile only
  // loads the machine the settlement runs on: the polling starts when the bench sees the commit.
  await commit;
  const [boardMs, keptMs, listMs, peopleMs] = await Promise.all([
    until(arounds),
    keptRanking.then((kept) => until(keptWatches(kept))),
    until(lists),
    until(sentinels.slice(globals.length)),
  ]);
  const sampleMs = Math.max(boardMs ?? 0, keptMs ?? 0, listMs ?? 0, peopleMs ?? 0);
  sentinelsDone = true;
  const sentinelPasses = passes;
  const known = await expected;
  // Every page once, but a person's record only for PEOPLE_CHECKED of them (the sentinels' among
  // them): each /users/{handle} ranks the person on every board over every record.
  const checkedPeople = new Set(spread([...callers, ...ownersOnly], PEOPLE_CHECKED));
  for (const item of sentinels) if (item.kind === 'user') checkedPeople.add(item.handle);
  const everything: Item[] = [
    ...globals,
    ...keptWatches(await keptRanking),
    ...callerItems(affected.calls, (h) => checkedPeople.has(h)),
    ...ownersOnly.filter((h) => checkedPeople.has(h)).map((handle): Item => ({ kind: 'user', handle })),
  ];
  process.stdout.write(`    sentinels all showed it ${Math.round(sampleMs)} ms after the enqueue; reading ${everything.length} pages once\n`);
  // A first pass that finds everything already showing it proves nothing was later than the sentinels.
  const firstPass = await pool(everything, 32, async (item) => (await judgeOf(item))(known));
  const missing = everything.filter((item, i) => !firstPass[i] && !(item.kind === 'top' && unmoved.has(item.board.query)));
  const lastMs = missing.length === 0 ? sampleMs : Math.max(sampleMs, (await until(missing)) ?? 0);
  // Each board page watched must not have shown the committed figures before the settlement: then
  // seeing them would prove nothing.
  for (const item of boardItems(picked.watched)) {
    if (item.kind === 'top' && unmoved.has(item.board.query)) continue;
    if (boardJudge(item, before.pages.get(pageKey(item))!)(known)) throw new Error(`${pageKey(item)} showed the committed figures before the settlement: watching it proves nothing`);
  }
  return {
    byKind, latencies, passes: sentinelPasses, sampleMs, lastMs, sampled: sentinels.length, checked: everything.length,
    people: { checked: checkedPeople.size, moved: callers.size + ownersOnly.length }, unavailable, unmovedTops: [...unmoved], keptLeftOut: known.keptLeftOut,
  };
}
