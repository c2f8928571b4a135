import { afterEach, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../src/simulator.js';
import { until } from '@pm/shared/wait';
import { control, type GammaEventT, getEvents, getJson, type Message, openEvents, RecordingSocket, strings, useSimulator } from './helpers.js';

interface Level {
  price: string;
  size: string;
}

const levels = (m: Message, key: 'bids' | 'asks'): Level[] => (m[key] as Level[] | undefined) ?? [];
const books = (messages: Message[], asset?: string) =>
  messages.filter((m) => m.event_type === 'book' && (asset === undefined || m.asset_id === asset));

describe('market channel /ws/market', () => {
  let sim: RunningSimulator;
  let open: GammaEventT[];
  const sockets: RecordingSocket[] = [];

  const connect = async () => {
    const s = new RecordingSocket(`${sim.wsUrl}/ws/market`);
    sockets.push(s);
    await s.open();
    return s;
  };
  const tokensOf = (e: GammaEventT | undefined, i = 0) => strings(e?.markets[i]?.clobTokenIds ?? '[]');
  const subscribe = (s: RecordingSocket, assets: string[], custom = true) =>
    s.send({ assets_ids: assets, type: 'market', custom_feature_enabled: custom, initial_dump: true });

  useSimulator({ seed: 11 }, async (s) => {
    sim = s;
    open = await openEvents(s);
  });
  afterEach(() => {
    for (const s of sockets.splice(0)) s.close();
  });

  it('answers a subscribe with one book per asset: bids ascending, asks descending, No mirroring Yes', async () => {
    const s = await connect();
    const assets = [...tokensOf(open[0]), ...tokensOf(open[1])];
    await control(sim).post('/_sim/pause');
    subscribe(s, assets);
    await s.waitFor((r) => books(r.messages).length >= assets.length, 3_000, 'initial books');
    await s.barrier(); // paused: anything more than the dump would be here by now
    await control(sim).post('/_sim/resume');
    for (const asset of assets) expect(books(s.rec.messages, asset)).toHaveLength(1);
    for (const book of books(s.rec.messages)) {
      expect(book.timestamp).toMatch(/^\d{13}$/);
      expect(typeof book.hash).toBe('string');
      const bids = levels(book, 'bids').map((l) => Number(l.price));
      const asks = levels(book, 'asks').map((l) => Number(l.price));
      expect(bids.length).toBeGreaterThan(0);
      expect(bids).toEqual([...bids].sort((a, b) => a - b));
      expect(asks).toEqual([...asks].sort((a, b) => b - a));
      for (const l of [...levels(book, 'bids'), ...levels(book, 'asks')]) {
        expect(l.price).toMatch(/^0?\.\d+$|^0\.\d+$/);
        expect(l.size).toMatch(/^\d+(\.\d+)?$/);
      }
    }
    const [yes, no] = tokensOf(open[0]).map((a) => books(s.rec.messages, a)[0]);
    if (!yes || !no) throw new Error('missing books');
    const maxBid = (b: Message) => Math.max(...levels(b, 'bids').map((l) => Number(l.price)));
    const minAsk = (b: Message) => Math.min(...levels(b, 'asks').map((l) => Number(l.price)));
    expect(maxBid(no)).toBeCloseTo(1 - minAsk(yes), 9);
    expect(minAsk(no)).toBeCloseTo(1 - maxBid(yes), 9);
  });

  it('streams only subscribed assets, in the current price_change shape, sometimes as array frames', async () => {
    const everything = await connect();
    const few = await connect();
    const all = open.flatMap((e) => e.markets.flatMap((m) => strings(m.clobTokenIds)));
    subscribe(everything, all);
    const mine = [...tokensOf(open[2]), ...tokensOf(open[5])];
    subscribe(few, mine, false);
    await everything.waitFor((r) => r.messages.filter((m) => m.event_type === 'price_change').length >= 40, 15_000, 'price changes');
    await everything.waitFor((r) => r.arrays >= 3, 15_000, 'batched array frames');
    const changes = everything.rec.messages.filter((m) => m.event_type === 'price_change');
    for (const change of changes) {
      expect(change.market).toMatch(/^0x[0-9a-f]{64}$/);
      const entries = change.price_changes as Array<Record<string, string>>;
      expect(entries.length).toBeGreaterThanOrEqual(2);
      // Both tokens of the binary market are touched.
      expect(new Set(entries.map((e) => e.asset_id)).size).toBe(2);
      for (const e of entries) {
        expect(['BUY', 'SELL']).toContain(e.side);
        expect(e.size).toMatch(/^\d+(\.\d+)?$/);
        expect(typeof e.best_bid).toBe('string');
        expect(typeof e.best_ask).toBe('string');
      }
    }
    expect(everything.rec.messages.some((m) => m.event_type === 'last_trade_price')).toBe(true);
    expect(everything.rec.messages.some((m) => m.event_type === 'best_bid_ask')).toBe(true);
    const mineSet = new Set(mine);
    for (const m of few.rec.messages) {
      const assets = m.event_type === 'price_change'
        ? (m.price_changes as Array<{ asset_id: string }>).map((e) => e.asset_id)
        : [String(m.asset_id)];
      expect(assets.some((a) => mineSet.has(a))).toBe(true);
      // Custom-feature messages only go to sockets that asked for them.
      expect(['best_bid_ask', 'new_market', 'market_resolved']).not.toContain(m.event_type);
    }
  });

  it('handles dynamic subscribe and unsubscribe on the same socket', async () => {
    const s = await connect();
    const [a] = tokensOf(open[6]);
    const [b] = tokensOf(open[7]);
    if (!a || !b) throw new Error('no tokens');
    subscribe(s, [a]);
    await s.waitFor((r) => books(r.messages, a).length === 1, 3_000, 'book a');
    s.send({ operation: 'subscribe', assets_ids: [b] });
    await s.waitFor((r) => books(r.messages, b).length === 1, 3_000, 'book b');
    s.send({ operation: 'unsubscribe', assets_ids: [a] });
    await s.barrier(); // the unsubscribe is handled
    await control(sim).post('/_sim/book', { token_id: a, bids: [{ price: '0.30', size: '10' }], asks: [{ price: '0.40', size: '10' }] });
    await control(sim).post('/_sim/book', { token_id: b, bids: [{ price: '0.30', size: '10' }], asks: [{ price: '0.40', size: '10' }] });
    await s.waitFor((r) => books(r.messages, b).length === 2, 3_000, 'forced book b');
    await s.barrier();
    expect(books(s.rec.messages, a)).toHaveLength(1);
  });

  it('answers PING with PONG once subscribed, and closes 1008 on a PING before subscribing', async () => {
    const early = await connect();
    early.send('PING');
    expect(await early.waitClosed()).toBe(1008);
    const s = await connect();
    subscribe(s, tokensOf(open[0]));
    s.send('PING');
    await s.waitFor((r) => r.texts.includes('PONG'), 3_000, 'PONG');
  });

  it('broadcasts a forced book at once, mirrored onto the other token', async () => {
    const s = await connect();
    const [yes, no] = tokensOf(open[8]);
    if (!yes || !no) throw new Error('no tokens');
    subscribe(s, [yes, no]);
    await s.waitFor((r) => books(r.messages).length === 2, 3_000, 'initial books');
    const res = await control(sim).post('/_sim/book', {
      token_id: yes,
      bids: [{ price: '0.41', size: '100' }, { price: '0.42', size: '250.5' }],
      asks: [{ price: '0.47', size: '80' }],
    });
    expect(res.status).toBe(200);
    await s.waitFor((r) => books(r.messages, yes).length === 2 && books(r.messages, no).length === 2, 3_000, 'forced books');
    const forced = books(s.rec.messages, yes)[1];
    expect(forced?.bids).toEqual([{ price: '0.41', size: '100' }, { price: '0.42', size: '250.5' }]);
    expect(forced?.asks).toEqual([{ price: '0.47', size: '80' }]);
    const mirrored = books(s.rec.messages, no)[1];
    expect(mirrored?.bids).toEqual([{ price: '0.53', size: '80' }]);
    expect(mirrored?.asks).toEqual([{ price: '0.59', size: '100' }, { price: '0.58', size: '250.5' }]);
    const rest = await getJson(`${sim.url}/book?token_id=${yes}`);
    expect(rest).toMatchObject({ asset_id: yes });
    expect((await fetch(`${sim.url}/book?token_id=123`)).status).toBe(404);
  });

  it('resolves on demand: catalog flipped, market_resolved only when announced', async () => {
    const s = await connect();
    const target = open.find((e) => e.markets.length >= 3 && !e.gameId);
    if (!target) throw new Error('no multi-market event');
    const [m1, m2, m3] = target.markets;
    if (!m1 || !m2 || !m3) throw new Error('markets');
    subscribe(s, [...strings(m1.clobTokenIds), ...strings(m2.clobTokenIds)]);
    await s.waitFor((r) => books(r.messages).length === 4, 3_000, 'books');

    const announced = await control(sim).post('/_sim/resolve', { market_id: m1.id, winning_outcome_index: 1, announce: true });
    expect(announced.status).toBe(200);
    await s.waitFor((r) => r.messages.some((m) => m.event_type === 'market_resolved'), 3_000, 'market_resolved');
    const resolved = s.rec.messages.find((m) => m.event_type === 'market_resolved');
    expect(resolved).toMatchObject({
      id: m1.id, market: m1.conditionId, assets_ids: strings(m1.clobTokenIds),
      winning_asset_id: strings(m1.clobTokenIds)[1], winning_outcome: 'No',
    });

    await control(sim).post('/_sim/resolve', { market_id: m2.id, winning_outcome_index: 0, announce: false });
    await control(sim).post('/_sim/resolve', { market_id: m3.id, winning_outcome_index: null, announce: false });
    await s.barrier(); // a resolution is sent (or not) while the request is handled
    expect(s.rec.messages.filter((m) => m.event_type === 'market_resolved')).toHaveLength(1);

    const [after] = await getEvents(`${sim.url}/events?id=${target.id}`);
    const byId = new Map(after?.markets.map((m) => [m.id, m]));
    expect(byId.get(m1.id)).toMatchObject({ closed: true, outcomePrices: '["0","1"]', umaResolutionStatus: 'resolved' });
    expect(byId.get(m2.id)).toMatchObject({ closed: true, outcomePrices: '["1","0"]', umaResolutionStatus: 'resolved' });
    expect(byId.get(m3.id)).toMatchObject({ closed: true, outcomePrices: '["0.5","0.5"]' });
    expect((await control(sim).post('/_sim/resolve', { market_id: m1.id, winning_outcome_index: 0, announce: true })).status).toBe(409);
  });

  it('drops market sockets abruptly, and silences them (no PONG) for a while', async () => {
    const s = await connect();
    subscribe(s, tokensOf(open[0]));
    await s.waitFor((r) => books(r.messages).length === 2, 3_000, 'books');
    await control(sim).post('/_sim/drop-market-sockets');
    expect(await s.waitClosed()).toBe(1006);

    const quiet = await connect();
    subscribe(quiet, tokensOf(open[0]));
    await quiet.waitFor((r) => books(r.messages).length === 2, 3_000, 'books');
    // Paused and drained first, so nothing sent before the silence can arrive during it.
    await control(sim).post('/_sim/pause');
    await quiet.barrier();
    const seen = quiet.rec.raw.length;
    const silenced = await control(sim).post('/_sim/silence', { ms: 700 });
    const { silencedUntil } = silenced.body as { silencedUntil: number };
    await control(sim).post('/_sim/resume'); // the walk moves on, unheard
    // PING until a PONG comes: the first is answered only once the silence is over.
    const pongs = quiet.pongs();
    await until('a PONG after the silence', async () => {
      quiet.send('PING');
      return quiet.pongs() > pongs;
    }, { timeoutMs: 5_000, everyMs: 50 });
    const arrivals = quiet.rec.rawAt.slice(seen);
    expect(arrivals.length).toBeGreaterThan(0);
    expect(arrivals.filter((at) => at < silencedUntil)).toEqual([]);
    const state = await control(sim).get('/_sim/state');
    expect(state).toMatchObject({ sockets: { market: 1 } });
  });
});
