import { z } from 'zod';
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
 * - /leaderboard, each board of BOARDS (top 100): differs from before (the boards rank the
 *   records the settlement moved).
 * Reading every one of these pages (tens of thousands) takes longer than the time being measured,
 * so the wait is in two steps, from the moment the bench sees the commit (no page can show the
 * settlement before it, and polling meanwhile would only load the machine it runs on):
 *   1. sentinels — the boards, the market, latest and combo lists (polled in a loop of their own),
 *      and a sample of calls spread over the market with their people's records and lists (and a
 *      sample of combo owners) — are polled until every one shows it (`sampleMs`);
 *   2. then every page is read once; any that does not show it yet is polled until it does (`lastMs`
 *      = when the last one was seen, or `sampleMs` when none was missing).
 * An item's time is that of the first response that showed it (not the end of the polling pass).
 */

/**
 * The boards watched: the six kept as rows, and computed ones of each kind (a window, a category, a
 * league), read as committed. The data's events are Sport, half of them in the league `nba`.
 */
export const BOARDS = [
  'sort=profit', 'sort=right', 'sort=xp', 'sort=week', 'sort=clv', 'sort=brier',
  'sort=profit&window=day', 'sort=brier&window=week', 'sort=clv&window=month', 'sort=right&category=Sport', 'sort=xp&league=nba',
] as const;
const SORTS = BOARDS;
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
const SENTINEL_CONCURRENCY = 8;

const userResponse = z.object({ user: z.object({ settled: z.number(), xp: z.number() }) });
const callResponse = z.object({ call: z.object({ status: z.string() }) });
const listResponse = z.object({ calls: z.array(z.object({ id: z.string(), status: z.string() })) });
const comboListResponse = z.object({ combos: z.array(z.object({ id: z.string() })) });
const boardResponse = z.object({ rows: z.array(z.unknown()) });

export interface Before {
  boards: Map<string, string>;
}

/** What Postgres committed: each settled call's status, each moved person's figures, the decided combos. */
export interface Expected {
  calls: Map<string, string>;
  users: Map<string, { settled: number; xp: number }>;
  combos: { decided: Set<string>; won: boolean };
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
}

type Item =
  | { kind: 'call'; id: string }
  | { kind: 'user'; handle: string }
  | { kind: 'list'; handle: string; id: string; filter: 'all' | 'open' | 'status'; status: string }
  | { kind: 'market'; marketId: string }
  | { kind: 'latest' }
  | { kind: 'combos'; status: 'open' | 'won' }
  | { kind: 'board'; sort: string };

async function getJson<S extends z.ZodType>(url: string, schema: S): Promise<z.output<S>> {
  // node:http, not fetch: the pollers' own CPU is taken from the machine the settlement runs on (http-get.ts).
  const { status, text } = await httpGet(url);
  if (status !== 200) throw new Error(`${url}: ${status} ${text.slice(0, 200)}`);
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

const boardUrl = (apiUrl: string, board: string) => `${apiUrl}/api/v1/leaderboard?${board}&limit=100`;

/** The boards before the settlement (reading them also has the API hold them, as a busy one would). */
export async function readBefore(apiUrl: string): Promise<Before> {
  const boards = await pool(SORTS, 4, async (s) => JSON.stringify((await getJson(boardUrl(apiUrl, s), boardResponse)).rows));
  return { boards: new Map(SORTS.map((s, i) => [s, boards[i]!])) };
}

export interface Affected {
  marketId: string;
  /** The market's open calls with their callers and the status the resolution gives them (won or lost). */
  calls: ReadonlyArray<{ id: string; handle: string; status: string }>;
  /** Owners of open combos with a leg on the market (their record moves when a combo is decided). */
  comboOwners: readonly string[];
}

export async function waitForSettlement(
  apiUrl: string,
  affected: Affected,
  before: Before,
  commit: Promise<void>,
  expected: Promise<Expected>,
  t0: number,
  timeoutMs: number,
): Promise<Visible> {
  const v1 = `${apiUrl}/api/v1`;
  type Judge = (want: Expected) => boolean;
  const fetchItem = async (item: Item): Promise<Judge> => {
    switch (item.kind) {
      case 'call': {
        const { call } = await getJson(`${v1}/calls/${item.id}`, callResponse);
        return (want) => call.status === want.calls.get(item.id);
      }
      case 'user': {
        const { user } = await getJson(`${v1}/users/${item.handle}`, userResponse);
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
        const { calls } = await getJson(`${v1}/users/${item.handle}/calls?${query}`, listResponse);
        const listed = calls.find((c) => c.id === item.id);
        return (want) => (item.filter === 'open' ? listed === undefined : listed?.status === want.calls.get(item.id) && status === want.calls.get(item.id));
      }
      case 'market':
      case 'latest': {
        const url = item.kind === 'market' ? `${v1}/calls?market=${item.marketId}&limit=100` : `${v1}/calls?limit=100`;
        const { calls } = await getJson(url, listResponse);
        return (want) => calls.every((c) => !want.calls.has(c.id) || c.status === want.calls.get(c.id));
      }
      case 'combos': {
        const { combos } = await getJson(`${v1}/combos?status=${item.status}&limit=50`, comboListResponse);
        return (want) => (item.status === 'open' ? combos.every((c) => !want.combos.decided.has(c.id)) : !want.combos.won || combos.some((c) => want.combos.decided.has(c.id)));
      }
      case 'board': {
        const rows = JSON.stringify((await getJson(boardUrl(apiUrl, item.sort), boardResponse)).rows);
        return () => rows !== before.boards.get(item.sort);
      }
    }
  };
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
  const latencies: Array<{ kind: Item['kind']; sentMs: number; ms: number }> = [];
  let sentinelsDone = false;
  let passes = 0;
  let want: Expected | undefined;
  void expected.then((w) => (want = w), () => {});
  const until = async (items: Item[]): Promise<number | undefined> => {
    let pending = items;
    let seenAt: number | undefined;
    const held = new Map<Item, Array<{ at: number; judge: Judge }>>();
    while (pending.length > 0) {
      if (performance.now() - t0 > timeoutMs) throw new Error(`${pending.length} pages still without the settlement after ${timeoutMs} ms: ${pending.slice(0, 5).map((p) => JSON.stringify(p)).join(', ')}`);
      passes += 1;
      const responses = await pool(pending, SENTINEL_CONCURRENCY, async (item) => {
        const sent = performance.now();
        const judge = await fetchItem(item);
        const at = performance.now() - t0;
        if (!sentinelsDone) latencies.push({ kind: item.kind, sentMs: sent - t0, ms: performance.now() - sent });
        return { at, judge };
      });
      responses.forEach((r, i) => held.set(pending[i]!, [...(held.get(pending[i]!) ?? []), r]));
      // The committed values are read a moment after the commit: poll on meanwhile.
      if (!want) continue;
      const known = want;
      pending = pending.filter((item) => {
        const shown = held.get(item)!.find((r) => r.judge(known));
        if (!shown) return true;
        seenAt = Math.max(seenAt ?? 0, shown.at);
        byKind[item.kind] = Math.round(Math.max(byKind[item.kind] ?? 0, shown.at));
        return false;
      });
      held.clear();
    }
    return seenAt;
  };
  // Per call: its page, its person's record (once a person) and their three lists, so no kind waits for the others' whole pass.
  const callerItems = (calls: Affected['calls']): Item[] => {
    const items: Item[] = [];
    const people = new Set<string>();
    for (const c of calls) {
      items.push({ kind: 'call', id: c.id });
      if (!people.has(c.handle)) items.push({ kind: 'user', handle: c.handle });
      people.add(c.handle);
      for (const filter of ['all', 'open', 'status'] as const) items.push({ kind: 'list', handle: c.handle, id: c.id, filter, status: c.status });
    }
    return items;
  };
  const unwatched = SORTS.filter((sort) => before.boards.get(sort) === '[]');
  if (unwatched.length > 0) process.stdout.write(`    boards empty before the settlement, not watched: ${unwatched.join(', ')}\n`);
  const callers = new Set(affected.calls.map((c) => c.handle));
  const ownersOnly = affected.comboOwners.filter((h) => !callers.has(h));
  const spread = <T>(xs: readonly T[]) => xs.filter((_, i) => i % Math.max(1, Math.floor(xs.length / SAMPLE)) === 0);
  const globals: Item[] = [
    // A board empty before the settlement (no one eligible in its window on this data) is not watched:
    // waiting for it to differ would wait for ever. The run says which were left out.
    ...SORTS.filter((sort) => before.boards.get(sort) !== '[]').map((sort): Item => ({ kind: 'board', sort })),
    { kind: 'market', marketId: affected.marketId },
    { kind: 'latest' },
    { kind: 'combos', status: 'open' },
    { kind: 'combos', status: 'won' },
  ];
  // The combo owners' records spread through the callers' pages, not read after all of them.
  const callerPages = callerItems(spread(affected.calls));
  const ownerPages = spread(ownersOnly).map((handle): Item => ({ kind: 'user', handle }));
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
  // person pages that were already showing the settlement.
  // No page can show the settlement before it commits, and polling hundreds of pages meanwhile only
  // loads the machine the settlement runs on: the polling starts when the bench sees the commit.
  await commit;
  const [globalMs, peopleMs] = await Promise.all([until(globals), until(sentinels.slice(globals.length))]);
  const sampleMs = Math.max(globalMs ?? 0, peopleMs ?? 0);
  sentinelsDone = true;
  const sentinelPasses = passes;
  const everything: Item[] = [...globals, ...callerItems(affected.calls), ...ownersOnly.map((handle): Item => ({ kind: 'user', handle }))];
  // A first pass that finds everything already showing it proves nothing was later than the sentinels.
  const known = await expected;
  const firstPass = await pool(everything, 32, async (item) => (await fetchItem(item))(known));
  const missing = everything.filter((_, i) => !firstPass[i]);
  const lastMs = missing.length === 0 ? sampleMs : Math.max(sampleMs, (await until(missing)) ?? 0);
  return { byKind, latencies, passes: sentinelPasses, sampleMs, lastMs, sampled: sentinels.length, checked: everything.length };
}
