import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/simulator.js';
import { until } from '@pm/shared/wait';
import { control, type GammaEventT, getEvents, getJson, type Message, openEvents, RecordingSocket, strings, useSimulator } from './helpers.js';

/**
 * The real exchange's quirks the simulator reproduces (docs/protocol.md §1, §3), so `npm start` and the
 * tests exercise the ingestor's handling of them: quiet spells with PONGs still answered, sweeps
 * whose removals never reach the wire (a client applying deltas alone ends up with a crossed book,
 * while `best_bid`/`best_ask` and `best_bid_ask` state the true top), events that vanish from the
 * catalog's list queries, and a match's `startTime` apart from the listing's `startDate`.
 */
let sim: RunningSimulator;
let open: GammaEventT[];

useSimulator({ seed: 7, speed: 20, quietSpells: { everyMs: 0, forMs: 0 } }, async (s) => {
  sim = s;
  open = await openEvents(s);
});

const subscribeAll = async (assets: string[]) => {
  const s = new RecordingSocket(`${sim.wsUrl}/ws/market`);
  await s.open();
  s.send({ assets_ids: assets, type: 'market', custom_feature_enabled: true, initial_dump: true });
  return s;
};
const allTokens = () => open.flatMap((e) => e.markets.flatMap((m) => strings(m.clobTokenIds)));

/** A frame that only lists or resolves markets (`new_market`, `market_resolved`): no book or price in it. */
const isLifecycle = (frame: string): boolean => {
  try {
    const parsed: unknown = JSON.parse(frame);
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.every((m) => {
      const type = (m as { event_type?: unknown } | null)?.event_type;
      return type === 'new_market' || type === 'market_resolved';
    });
  } catch {
    return false;
  }
};

describe('simulator quirks', () => {
  it('a quiet spell sends no market data while PINGs are still answered with PONG', async () => {
    const s = await subscribeAll(allTokens());
    try {
      await s.waitFor((r) => r.messages.some((m) => m.event_type !== 'book'), 5_000, 'data flowing');
      const quiet = await control(sim).post('/_sim/quiet', { ms: 1_500 });
      expect(quiet.status).toBe(200);
      const { quietUntil } = quiet.body as { quietUntil: number };
      await s.barrier(); // a tick sent before the spell began has landed
      const seen = s.rec.raw.length;
      // PING all through the spell: every PING is answered.
      let answered = 0;
      await until('the end of the quiet spell', async () => {
        await s.barrier();
        answered += 1;
        return Date.now() >= quietUntil;
      }, { timeoutMs: 10_000, everyMs: 100 });
      // No market data arrived before the spell's end, and PONGs all along it. A market's lifecycle
      // (a 5-minute market resolving and its successor listed) goes on through a spell, as on the
      // exchange: only the books are quiet.
      const during = s.rec.raw.slice(seen).filter((_, i) => s.rec.rawAt[seen + i]! < quietUntil);
      const pongs = during.filter((f) => f === 'PONG');
      expect(during.filter((f) => f !== 'PONG' && !isLifecycle(f))).toEqual([]);
      expect(pongs.length).toBeGreaterThanOrEqual(5);
      expect(answered).toBeGreaterThanOrEqual(pongs.length);
      await s.waitFor((r) => r.raw.slice(seen).some((f) => f !== 'PONG'), 5_000, 'data again after the spell');
    } finally {
      s.close();
    }
  });

  it('some sweeps lose their removals on the wire: a delta-only book crosses while the stated top and GET /book stay true', async () => {
    const s = await subscribeAll(allTokens());
    try {
      // Apply exactly what the wire says, as a client without the exchange's top would.
      const local = new Map<string, { bids: Map<number, number>; asks: Map<number, number> }>();
      const stated = new Map<string, { bid: string; ask: string }>();
      let crossed: { asset: string; bid: number; ask: number } | null = null;
      let applied = 0;
      const apply = (m: Message) => {
        const asset = String(m.asset_id ?? '');
        if (m.event_type === 'book') {
          const side = (l: unknown) => new Map((l as Array<{ price: string; size: string }>).map((x) => [Number(x.price), Number(x.size)]));
          local.set(asset, { bids: side(m.bids), asks: side(m.asks) });
        } else if (m.event_type === 'price_change') {
          for (const c of m.price_changes as Array<Record<string, string>>) {
            const b = local.get(c.asset_id!);
            if (!b) continue;
            const levels = c.side === 'BUY' ? b.bids : b.asks;
            if (Number(c.size) === 0) levels.delete(Number(c.price));
            else levels.set(Number(c.price), Number(c.size));
            stated.set(c.asset_id!, { bid: c.best_bid!, ask: c.best_ask! });
            const bid = Math.max(...b.bids.keys());
            const ask = Math.min(...b.asks.keys());
            const top = stated.get(c.asset_id!)!;
            if (crossed === null && bid >= ask && Number(top.bid) < Number(top.ask)) crossed = { asset: c.asset_id!, bid, ask };
          }
        }
      };
      await s.waitFor(() => {
        for (; applied < s.rec.messages.length; applied++) apply(s.rec.messages[applied]!);
        return crossed !== null;
      }, 60_000, 'a crossed local book');
      const found = crossed as unknown as { asset: string; bid: number; ask: number };
      const top = stated.get(found.asset)!;
      console.log(`crossed local book on ${found.asset.slice(0, 8)}…: local ${found.bid}/${found.ask}, exchange top ${top.bid}/${top.ask}`);
      // The exchange's own book is not crossed.
      const rest = (await getJson(`${sim.url}/book?token_id=${found.asset}`)) as { bids: Array<{ price: string }>; asks: Array<{ price: string }> };
      const restBid = Math.max(...rest.bids.map((l) => Number(l.price)));
      const restAsk = Math.min(...rest.asks.map((l) => Number(l.price)));
      expect(restBid).toBeLessThan(restAsk);
      // And best_bid_ask messages went out for custom-feature sockets.
      expect(s.rec.messages.some((m) => m.event_type === 'best_bid_ask')).toBe(true);
    } finally {
      s.close();
    }
  });

  it('an event can vanish from the list queries while GET /events/:id still answers it', async () => {
    const event = open[0]!;
    const vanished = await control(sim).post('/_sim/vanish', { event_id: event.id });
    expect(vanished.status).toBe(200);
    expect(await getEvents(`${sim.url}/events?id=${event.id}`)).toEqual([]);
    expect(await getEvents(`${sim.url}/events?slug=${event.slug}`)).toEqual([]);
    const listed = await openEvents(sim);
    expect(listed.some((e) => e.id === event.id)).toBe(false);
    expect(((await getJson(`${sim.url}/events/${event.id}`)) as { id: string }).id).toBe(event.id);
    expect((await control(sim).post('/_sim/vanish', { event_id: 'nope' })).status).toBe(404);
  });

  it("a match's startTime (kick-off) is not its listing's startDate", () => {
    const matches = open.filter((e) => (e as Record<string, unknown>).startTime !== undefined);
    expect(matches.length).toBeGreaterThan(0);
    for (const e of matches) {
      const r = e as Record<string, unknown>;
      expect(r.startTime).not.toBe(r.startDate);
    }
  });
});
