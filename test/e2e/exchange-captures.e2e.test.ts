import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, sql } from '@pm/shared/db';
import { eventually } from '@pm/shared/wait';
import { startStack, untilMarketConnected, type Stack } from '../support/stack.js';

/**
 * The exchange's real message shapes (test/fixtures/exchange-captures, sources in its README)
 * replayed through the whole stack (`npm start` with the scenario), one frame at a time. After
 * every frame, every displayed chance must equal the exchange's display rule applied to the
 * exchange's own top of book, computed here from the fixture files by this file's own code — not
 * the ingestor's: the last `best_bid`/`best_ask` the exchange stated for the asset (a
 * `price_change` entry or a `best_bid_ask` message; a fresh `book` states its own top), a side it
 * did not state taken from the book; the midpoint, or the last trade when the spread is wider than
 * 0.10 or the top is crossed; the catalog's seeded chance when nothing else is known. Before the
 * first frame every chance is the catalog's (`bestBid`/`bestAsk`/`lastTradePrice` by the same rule).
 * A chance past the exchange's extreme ticks is shown at the tick (0.9995 → 0.999).
 *
 * Every outcome also carries its quotes (`best_bid`, `best_ask`, `spread`, `last_trade_price`): they
 * must be that same top of book and last trade, and the display rule applied to the quotes alone
 * must give the chance shown — what a client can check for itself.
 *
 * Prints what it measured: chances compared, mismatches, socket recycles.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const scenario = path.resolve(here, '../fixtures/exchange-captures');

interface CatalogMarket {
  id: string;
  outcomes: string;
  outcomePrices?: string;
  clobTokenIds: string;
  bestBid?: number;
  bestAsk?: number;
  lastTradePrice?: number;
}
interface CatalogEvent {
  id: string;
  slug: string;
  markets: CatalogMarket[];
}
interface FeedLine {
  at: number;
  channel: 'market' | 'sports';
  frame: unknown;
}
interface Shown {
  name: string;
  chance: number;
  best_bid: number | null;
  best_ask: number | null;
  spread: number | null;
  last_trade_price: number | null;
}
interface EventBody {
  event: { markets: Array<{ id: string; outcomes: Shown[] }> };
}

const catalog = JSON.parse(readFileSync(path.join(scenario, 'catalog.json'), 'utf8')) as CatalogEvent[];
const feed = readFileSync(path.join(scenario, 'feed.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as FeedLine);

// ── The exchange's rule, written here on its own ────────────────────────────────────────────────
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;
const num = (v: unknown): number | null => {
  if (v === undefined || v === null || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
};

function rule(bid: number | null, ask: number | null, trade: number | null, fallback: number | null): number | null {
  let shown: number | null;
  if (bid !== null && ask !== null) {
    if (bid >= ask) shown = trade ?? fallback;
    else shown = ask - bid > 0.1 + 1e-9 ? (trade ?? fallback ?? (bid + ask) / 2) : (bid + ask) / 2;
  } else shown = fallback ?? trade;
  if (shown === null) return null;
  // Shown at the exchange's extreme ticks when past them (0, 1 stay): no odds format is faithful beyond.
  const r = round4(shown);
  return r <= 0 ? 0 : r >= 1 ? 1 : Math.min(0.999, Math.max(0.001, r));
}

interface Where {
  slug: string;
  marketId: string;
  index: number;
}
const where = new Map<string, Where>();
const seed = new Map<string, number | null>();
for (const e of catalog) {
  for (const m of e.markets) {
    const tokens = JSON.parse(m.clobTokenIds) as string[];
    const listed = (JSON.parse(m.outcomePrices ?? '[]') as string[]).map(num);
    tokens.forEach((t, i) => {
      where.set(t, { slug: e.slug, marketId: m.id, index: i });
      const [b, a, tr] = [num(m.bestBid), num(m.bestAsk), num(m.lastTradePrice)];
      const flip = (p: number | null) => (p === null ? null : 1 - p);
      seed.set(t, i === 0 ? rule(b, a, tr, listed[0] ?? null) : rule(flip(a), flip(b), flip(tr), listed[1] ?? null));
    });
  }
}

/** What the exchange has said about each asset so far. */
const books = new Map<string, { bids: Map<number, number>; asks: Map<number, number> }>();
const stated = new Map<string, { bid: number | null; ask: number | null }>();
const trades = new Map<string, number>();

function observe(frame: unknown) {
  for (const m of (Array.isArray(frame) ? frame : [frame]) as Array<Record<string, unknown>>) {
    if (typeof m !== 'object' || m === null) continue;
    const asset = String(m.asset_id ?? '');
    if (m.event_type === 'book') {
      const side = (levels: unknown) => new Map((levels as Array<{ price: string; size: string }>).map((l) => [Number(l.price), Number(l.size)]));
      books.set(asset, { bids: side(m.bids), asks: side(m.asks) });
      stated.delete(asset);
      const t = num(m.last_trade_price);
      if (t !== null) trades.set(asset, t);
    } else if (m.event_type === 'price_change') {
      for (const c of m.price_changes as Array<Record<string, string>>) {
        const book = books.get(c.asset_id!);
        if (book) {
          const levels = c.side === 'BUY' ? book.bids : book.asks;
          if (Number(c.size) === 0) levels.delete(Number(c.price));
          else levels.set(Number(c.price), Number(c.size));
        }
        const [bid, ask] = [num(c.best_bid), num(c.best_ask)];
        if (bid !== null || ask !== null) stated.set(c.asset_id!, { bid, ask });
      }
    } else if (m.event_type === 'best_bid_ask') {
      const [bid, ask] = [num(m.best_bid), num(m.best_ask)];
      if (bid !== null || ask !== null) stated.set(asset, { bid, ask });
    } else if (m.event_type === 'last_trade_price') {
      trades.set(asset, Number(m.price));
    }
  }
}

/** The exchange's top of book for an asset: each side as last stated, else the book's best. */
function topOf(token: string): { bid: number | null; ask: number | null; trade: number | null } {
  const book = books.get(token);
  const top = stated.get(token);
  const best = (levels: Map<number, number> | undefined, pick: (...n: number[]) => number) =>
    levels && levels.size > 0 ? pick(...levels.keys()) : null;
  return { bid: top?.bid ?? best(book?.bids, Math.max), ask: top?.ask ?? best(book?.asks, Math.min), trade: trades.get(token) ?? null };
}

function expected(token: string): number | null {
  const { bid, ask, trade } = topOf(token);
  return rule(bid, ask, trade, seed.get(token) ?? null);
}

// ── The stack ───────────────────────────────────────────────────────────────────────────────────
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    env: {
      SIM_SCENARIO: scenario,
      SIM_SPEED: '1',
      SIM_PAUSED: '1',
      SNAPSHOT_INTERVAL_MS: '100',
      RATE_LIMIT_PER_MINUTE: '1000000',
      LOG_LEVEL: 'info',
    },
    readyTimeoutMs: 90_000,
  });
  await untilMarketConnected(stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

async function displayed(): Promise<Map<string, Shown | undefined>> {
  const out = new Map<string, Shown | undefined>();
  for (const e of catalog) {
    const res = await fetch(`${stack.apiUrl}/api/v1/markets/${e.slug}`);
    if (res.status !== 200) continue;
    const body = (await res.json()) as EventBody;
    for (const [token, w] of where) {
      if (w.slug !== e.slug) continue;
      out.set(token, body.event.markets.find((m) => m.id === w.marketId)?.outcomes[w.index]);
    }
  }
  return out;
}

/** Outcomes whose quotes were checked (the last look of each settle): there must be some. */
let quotedChecks = 0;
const near = (a: number | null, b: number | null) => (a === null || b === null ? a === b : Math.abs(a - b) <= 5e-5);

/** What is wrong with one outcome as shown: its chance, its quotes against the exchange's top, the rule on its own quotes. */
function wrong(token: string, got: Shown | undefined): string | null {
  const want = expected(token);
  if (want === null) return null;
  if (got === undefined) return `shows nothing, the exchange's rule says ${want}`;
  if (!near(got.chance, want)) return `shows ${got.chance}, the exchange's rule says ${want}`;
  const quoted = got.best_bid !== null || got.best_ask !== null || got.last_trade_price !== null;
  if (!quoted) return null; // no live top yet: the catalog's chance, and no quotes to check
  const top = topOf(token);
  if (!near(got.best_bid, top.bid) || !near(got.best_ask, top.ask) || !near(got.last_trade_price, top.trade)) {
    return `quotes ${got.best_bid}/${got.best_ask}/${got.last_trade_price}, the exchange's top is ${top.bid}/${top.ask}/${top.trade}`;
  }
  const spread = got.best_bid !== null && got.best_ask !== null ? round4(got.best_ask - got.best_bid) : null;
  if (!near(got.spread, spread)) return `spread ${got.spread} is not best_ask − best_bid (${spread})`;
  const fromQuotes = rule(got.best_bid, got.best_ask, got.last_trade_price, seed.get(token) ?? null);
  if (!near(got.chance, fromQuotes)) return `chance ${got.chance} is not the display rule on its own quotes (${fromQuotes})`;
  quotedChecks++;
  return null;
}

const differences = (shown: Map<string, Shown | undefined>) =>
  [...where.keys()].flatMap((t) => {
    const problem = wrong(t, shown.get(t));
    return problem === null ? [] : [{ token: `${t.slice(0, 8)}…`, problem }];
  });

/** Wait until every displayed chance (and its quotes) is the expected one; returns the differences left at the deadline. */
async function settle(): Promise<Array<{ token: string; problem: string }>> {
  return eventually(async () => differences(await displayed()), (left) => left.length === 0, { timeoutMs: 10_000, everyMs: 150 });
}

describe('replaying real exchange captures through the whole stack', () => {
  it('every displayed chance is the exchange\'s rule on the exchange\'s own top of book, crossed-book bursts included', { timeout: 600_000 }, async () => {
    let compared = 0;
    const mismatches: string[] = [];
    const check = async (label: string) => {
      const left = await settle();
      compared += [...where.keys()].filter((t) => expected(t) !== null).length;
      for (const d of left) mismatches.push(`${label}: ${d.token} ${d.problem}`);
    };

    // Before the first frame: the catalog's seeded chances.
    await check('before the first frame');
    for (const [i, line] of feed.entries()) {
      const stepped = await stack.simControl('/_sim/step', { ticks: 1 });
      expect(stepped.status).toBe(200);
      if (line.channel === 'market') observe(line.frame);
      await check(`after frame ${i} (at ${line.at} ms)`);
    }
    const recycles = (stack.logs().match(/market socket (silent|missed PONGs); recycling/g) ?? []).length;
    console.log(
      `exchange captures: ${feed.length} frames replayed, ${compared} chances compared, ${quotedChecks} outcome quotes checked, ${mismatches.length} mismatches, ${recycles} socket recycles`,
    );
    expect(quotedChecks).toBeGreaterThan(0);
    expect(mismatches).toEqual([]);
    expect(recycles).toBe(0);
  });

  it("stores a match's kick-off as starts_at, its league from the exchange's sports list, and negRisk", async () => {
    const db = createDb(stack.databaseUrl, { poolSize: 1 });
    try {
      const rows: Array<{ id: string; starts_at: Date; league: string | null; neg_risk: boolean }> = await db.query(
        sql`select id, starts_at, league, neg_risk from events where id in ('952074', '1025935') order by id`,
      );
      expect(rows.map((r) => [r.id, r.starts_at.toISOString(), r.league, r.neg_risk])).toEqual([
        ['1025935', '2026-09-15T15:30:00.000Z', 'cs2', false],
        ['952074', '2026-09-15T18:00:00.000Z', 'laliga', true],
      ]);
    } finally {
      await db.dispose();
    }
  });
});
