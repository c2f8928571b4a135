import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createDb, sql, type Db } from '@pm/shared/db';
import { toStreamEntry } from '@pm/shared/stream';
import { createIngestor, type Ingestor } from '../ingestor.js';
import { quietLogger, TEST_TUNING, useHarness } from '../testing/harness.js';
import { gammaEvent, waitFor, type FakeMarketSocket } from '../testing/fake-exchange.js';

/**
 * The trade tape through the ingestor: recorded frames (test/fixtures/trade-tape) go through the
 * market channel to a real Postgres, with a reconnect that delivers some of them again, and with two
 * ingestors that both hold a market for a while during a handover. The tape must hold each print of
 * the frames once: every row matches a print, none is missing, none doubled. The expected tape is
 * worked out here from the frames by the identity rule itself, independently of the writer.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const frames: unknown[] = readFileSync(path.resolve(here, '../../../../test/fixtures/trade-tape/frames.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as unknown);

const TOKEN = (n: number) => `400000000000000000000000000000000000000000000000000000000000000000000000000${n}`;
const [A, B, C, D] = [TOKEN(1), TOKEN(2), TOKEN(3), TOKEN(4)] as [string, string, string, string];

interface Print {
  asset_id: string;
  price: string;
  size?: string;
  side: string;
  timestamp: string;
  transaction_hash?: string;
}

const elements = (frame: unknown): Array<Record<string, unknown>> => (Array.isArray(frame) ? frame : [frame]) as Array<Record<string, unknown>>;
const isPrint = (e: Record<string, unknown>): e is Record<string, unknown> & Print =>
  e.event_type === 'last_trade_price' && typeof e.size === 'string' && Number(e.size) > 0;

/** The tape the frames should give: one row per identity, as "token|ms|price|size|side". */
function expectedTape(list: readonly unknown[]): string[] {
  const ids = new Map<string, string>();
  for (const frame of list) {
    const nth = new Map<string, number>();
    for (const p of elements(frame).filter(isPrint)) {
      const what = `${p.asset_id}|${Number(p.timestamp)}|${Number(p.price)}|${Number(p.size)}|${p.side}`;
      const same = `${what}|${p.transaction_hash ?? ''}`;
      const n = nth.get(same) ?? 0;
      nth.set(same, n + 1);
      ids.set(p.transaction_hash ? `${p.asset_id}|${p.transaction_hash}|${Number(p.price)}|${Number(p.size)}|${p.side}|${n}` : `${what}|${n}`, what);
    }
  }
  return [...ids.values()].sort();
}

async function storedTape(db: Db): Promise<string[]> {
  const rows: Array<{ token_id: string; at_ms: number; price: number; size: number; side: string }> = await db.query(sql`
    select s.token_id, p.at_ms, p.price, p.size, p.side from trade_prints p join series s on s.id = p.series
  `);
  return rows.map((r) => `${r.token_id}|${r.at_ms}|${r.price}|${r.size}|${r.side}`).sort();
}

/** The tokens a socket is subscribed to now, from what the client sent it. */
function subscribed(s: FakeMarketSocket): Set<string> {
  const set = new Set<string>();
  for (const m of s.received as Array<{ type?: string; operation?: string; assets_ids?: string[] }>) {
    if (!Array.isArray(m?.assets_ids)) continue;
    if (m.type === 'market' || m.operation === 'subscribe') for (const a of m.assets_ids) set.add(a);
    else if (m.operation === 'unsubscribe') for (const a of m.assets_ids) set.delete(a);
  }
  return set;
}

const h = useHarness('ingestor_tape');

/** Sends a frame as the exchange would: to each open socket, the elements of the tokens it subscribed. */
function deliver(frame: unknown): void {
  for (const s of h.fake.marketSockets) {
    if (s.ws.readyState !== WebSocket.OPEN) continue;
    const tokens = subscribed(s);
    const mine = elements(frame).filter((e) => tokens.has(String(e.asset_id)));
    if (mine.length > 0) s.send(Array.isArray(frame) ? mine : frame);
  }
}

/** An ingestor that owns the markets in `owned` (changed by the test, then `reassign`). */
function ingestor(owned: Set<string>, db: Db): Ingestor {
  return createIngestor({
    config: h.config,
    db,
    redis: h.redis.redis,
    logger: quietLogger,
    tuning: { ...TEST_TUNING, tradesFlushMs: 20 },
    share: { ownsMarket: (m) => owned.has(m), isLeader: () => true },
  });
}

const socketHolding = (token: string) => h.fake.marketSockets.filter((s) => s.ws.readyState === WebSocket.OPEN && subscribed(s).has(token));

beforeEach(() => {
  h.fake.events.push(gammaEvent('e1', [{ id: 'm1', tokens: [A, B] }, { id: 'm2', tokens: [C, D] }]));
});

describe('the trade tape from the market channel', () => {
  it('holds every print of the frames once, across a reconnect that delivers some again', async () => {
    const ing = h.ingestor({ tradesFlushMs: 20 });
    await ing.start();
    await waitFor(() => socketHolding(A).length === 1 && socketHolding(C).length === 1, 5_000, 'subscribed');
    for (const f of frames.slice(0, 8)) deliver(f);
    await waitFor(async () => (await storedTape(h.database.db)).length === expectedTape(frames.slice(0, 8)).length, 5_000, 'first frames on the tape');

    // The exchange drops the socket; after the reconnect it delivers frames 4–7 again, then the rest.
    const before = h.fake.marketSockets.length;
    for (const s of h.fake.marketSockets) s.ws.terminate();
    await waitFor(() => h.fake.marketSockets.length > before && socketHolding(A).length === 1 && socketHolding(C).length === 1, 5_000, 'reconnected');
    for (const f of frames.slice(4)) deliver(f);
    await waitFor(async () => (await storedTape(h.database.db)).length >= expectedTape(frames).length, 5_000, 'every frame on the tape');
    await ing.flush();

    expect(await storedTape(h.database.db)).toEqual(expectedTape(frames));
    const stats = ing.stats();
    expect(stats.trades.recorded).toBe(expectedTape(frames).length);
    // The frames 4–7 again: their prints are repeats, known and not added.
    expect(stats.trades.repeated).toBe(elements(frames.slice(4, 8).flat()).filter(isPrint).length);
    expect(stats.market.malformedTrades).toBe(1);

    // Each print this ingestor added was streamed once, with its market for `markets=`.
    const entries = (await h.redis.redis.xrange(h.keys.stream, '-', '+')).map(([id, fields]) => toStreamEntry(id, fields)).filter((e) => e.topic === 'trade');
    expect(entries).toHaveLength(expectedTape(frames).length);
    expect(new Set(entries.map((e) => (JSON.parse(e.data) as { id: string }).id)).size).toBe(entries.length);
    for (const e of entries) {
      const data = JSON.parse(e.data) as { market_id: string; event: string; price: number; size: number; notional: number };
      expect(e.market).toBe(data.market_id);
      expect(data.event).toBe('event-e1');
      expect(data.notional).toBeCloseTo(data.price * data.size, 6);
    }
  });

  it('holds every print once when two ingestors both hold a market during a handover', async () => {
    const second = createDb(h.database.url, { poolSize: 3 });
    try {
      const ownedX = new Set(['m1', 'm2']);
      const ownedY = new Set<string>();
      const x = ingestor(ownedX, h.database.db);
      const y = ingestor(ownedY, second);
      await x.start();
      await y.start();
      await waitFor(() => socketHolding(A).length === 1 && socketHolding(C).length === 1, 5_000, 'x subscribed');
      for (const f of frames.slice(0, 4)) deliver(f);

      // The handover of m2 begins: Y takes it while X still holds it, so both sockets carry its frames.
      ownedY.add('m2');
      y.reassign();
      await waitFor(() => socketHolding(C).length === 2, 5_000, 'both hold m2');
      for (const f of frames.slice(4, 9)) deliver(f);
      // X lets it go; Y's socket is dropped and comes back, delivering frames 7–8 again.
      ownedX.delete('m2');
      x.reassign();
      await waitFor(() => socketHolding(C).length === 1 && socketHolding(A).length === 1, 5_000, 'x let m2 go');
      const mine = socketHolding(C)[0] as FakeMarketSocket;
      mine.ws.terminate();
      await waitFor(() => socketHolding(C).length === 1 && socketHolding(C)[0] !== mine, 5_000, 'y reconnected');
      for (const f of frames.slice(7)) deliver(f);

      await waitFor(async () => (await storedTape(h.database.db)).length >= expectedTape(frames).length, 5_000, 'every frame on the tape');
      await Promise.all([x.flush(), y.flush()]);
      expect(await storedTape(h.database.db)).toEqual(expectedTape(frames));
      // Both wrote, and between them added each print once.
      const [sx, sy] = [x.stats().trades, y.stats().trades];
      expect(sx.recorded > 0 && sy.recorded > 0).toBe(true);
      expect(sx.recorded + sy.recorded).toBe(expectedTape(frames).length);
      // The overlap and the reconnect did deliver prints twice: they were known and not added.
      expect(sx.repeated + sy.repeated).toBeGreaterThan(0);
    } finally {
      await h.fresh();
      await second.dispose();
    }
  });
});
