import { z } from 'zod';

/**
 * bench:settle's outside view: when does a settlement show through the API over HTTP?
 *
 * "Shows it": a call reads as no longer open; a person's record has more settled calls than before;
 * each of the four leaderboards (top 100) differs from before. Reading all 10,000 calls and people
 * takes seconds per pass, far longer than the time being measured, so the wait is in two steps:
 *   1. sentinels — the four boards and a sample of calls and people spread over the market — are
 *      polled until every one shows it (`sampleMs`);
 *   2. then every call and person is read once; any that does not show it yet is polled until it
 *      does (`lastMs` = when the last one was seen, or `sampleMs` when none was missing).
 * The builder writes a settlement's snapshots calls first, then people, then the boards, each batch
 * in one MULTI, so once the sentinels show it the rest already do; step 2 checks that instead of
 * assuming it.
 */

const SORTS = ['profit', 'right', 'xp', 'week'] as const;
const SAMPLE = 200;

const userResponse = z.object({ user: z.object({ settled: z.number() }) });
const callResponse = z.object({ call: z.object({ status: z.string() }) });
const boardResponse = z.object({ rows: z.array(z.unknown()) });

export interface Before {
  settled: Map<string, number>;
  boards: Map<string, string>;
}

export interface Visible {
  sampleMs: number;
  lastMs: number;
  sampled: number;
  checked: number;
}

type Item = { kind: 'call'; id: string } | { kind: 'user'; handle: string } | { kind: 'board'; sort: string };

async function getJson<S extends z.ZodType>(url: string, schema: S): Promise<z.output<S>> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
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

const boardUrl = (apiUrl: string, sort: string) => `${apiUrl}/api/v1/leaderboard?sort=${sort}&limit=100`;
const handlesOf = (calls: ReadonlyArray<{ handle: string }>) => [...new Set(calls.map((c) => c.handle))];

/** The people's settled counts and the boards before the settlement. */
export async function readAll(apiUrl: string, calls: ReadonlyArray<{ id: string; handle: string }>): Promise<Before> {
  const handles = handlesOf(calls);
  const settled = await pool(handles, 32, async (h) => (await getJson(`${apiUrl}/api/v1/users/${h}`, userResponse)).user.settled);
  const boards = await pool(SORTS, 4, async (s) => JSON.stringify((await getJson(boardUrl(apiUrl, s), boardResponse)).rows));
  return { settled: new Map(handles.map((h, i) => [h, settled[i]!])), boards: new Map(SORTS.map((s, i) => [s, boards[i]!])) };
}

export async function waitForSettlement(
  apiUrl: string,
  calls: ReadonlyArray<{ id: string; handle: string }>,
  before: Before,
  t0: number,
  timeoutMs: number,
): Promise<Visible> {
  const shows = async (item: Item): Promise<boolean> => {
    if (item.kind === 'call') return (await getJson(`${apiUrl}/api/v1/calls/${item.id}`, callResponse)).call.status !== 'open';
    if (item.kind === 'user') return (await getJson(`${apiUrl}/api/v1/users/${item.handle}`, userResponse)).user.settled > (before.settled.get(item.handle) ?? 0);
    return JSON.stringify((await getJson(boardUrl(apiUrl, item.sort), boardResponse)).rows) !== before.boards.get(item.sort);
  };
  /** Polls until every item shows it; returns when (ms after t0) the last was seen, or undefined when none was missing. */
  const until = async (items: Item[]): Promise<number | undefined> => {
    let pending = items;
    let seenAt: number | undefined;
    while (pending.length > 0) {
      if (performance.now() - t0 > timeoutMs) throw new Error(`${pending.length} pages still without the settlement after ${timeoutMs} ms, e.g. ${JSON.stringify(pending[0])}`);
      const ok = await pool(pending, 32, shows);
      const left = pending.filter((_, i) => !ok[i]);
      if (left.length < pending.length) seenAt = performance.now() - t0;
      pending = left;
    }
    return seenAt;
  };
  const step = Math.max(1, Math.floor(calls.length / SAMPLE));
  const sample = calls.filter((_, i) => i % step === 0);
  const sentinels: Item[] = [
    ...SORTS.map((sort): Item => ({ kind: 'board', sort })),
    ...sample.map((c): Item => ({ kind: 'call', id: c.id })),
    ...handlesOf(sample).map((handle): Item => ({ kind: 'user', handle })),
  ];
  const sampleMs = (await until(sentinels)) ?? 0;
  const everything: Item[] = [...calls.map((c): Item => ({ kind: 'call', id: c.id })), ...handlesOf(calls).map((handle): Item => ({ kind: 'user', handle }))];
  // A first pass that finds everything already showing it proves nothing was later than the sentinels.
  const firstPass = await pool(everything, 32, shows);
  const missing = everything.filter((_, i) => !firstPass[i]);
  const lastMs = missing.length === 0 ? sampleMs : Math.max(sampleMs, (await until(missing)) ?? 0);
  return { sampleMs, lastMs, sampled: sentinels.length, checked: everything.length + SORTS.length };
}
