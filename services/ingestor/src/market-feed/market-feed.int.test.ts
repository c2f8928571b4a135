import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHarness, quietLogger, type Harness } from '../testing/harness.js';
import { gammaEvent, waitFor, type FakeMarketSocket } from '../testing/fake-exchange.js';
import { createMarketFeed, type MarketFeed, type MarketFeedOptions } from './market-feed.js';
import type { Ingestor } from '../ingestor.js';

const YES = '1000000000000000000000000000000000000000000000000000000000000000000000001';
const NO = '1000000000000000000000000000000000000000000000000000000000000000000000002';
const OTHER_YES = '1000000000000000000000000000000000000000000000000000000000000000000000003';
const OTHER_NO = '1000000000000000000000000000000000000000000000000000000000000000000000004';
const CLOSED_YES = '1000000000000000000000000000000000000000000000000000000000000000000000005';
const CLOSED_NO = '1000000000000000000000000000000000000000000000000000000000000000000000006';

const book = (asset: string, bid: string, ask: string, ts: number) => ({
  event_type: 'book',
  asset_id: asset,
  market: '0xm1',
  bids: [{ price: bid, size: '100' }],
  asks: [{ price: ask, size: '100' }],
  timestamp: String(ts),
  hash: `h${ts}`,
});

/** Exchange times that only grow, whatever order the tests run in: a later test's book is never older than an earlier one's. */
let lastStamp = Date.now();
const stamp = () => ++lastStamp;

/** Each subscribe or unsubscribe a socket was sent, in order, with its tokens. */
const requestsOf = (s: FakeMarketSocket) =>
  s.received.flatMap((m) => {
    if (typeof m !== 'object' || m === null) return [];
    const msg = m as { type?: unknown; operation?: unknown; assets_ids?: string[] };
    const kind = msg.type === 'market' || msg.operation === 'subscribe' ? 'subscribe' : msg.operation === 'unsubscribe' ? 'unsubscribe' : null;
    return kind === null ? [] : [{ kind, tokens: msg.assets_ids ?? [] }];
  });

/** Every token a socket was asked for: its full subscribe and the incremental ones after it. */
const tokensOf = (s: FakeMarketSocket) => requestsOf(s).flatMap((r) => (r.kind === 'subscribe' ? r.tokens : []));

/** The tokens a socket holds now: what it was asked for, less what it was asked to drop since. */
const heldBy = (s: FakeMarketSocket) => {
  const held = new Set<string>();
  for (const r of requestsOf(s)) {
    for (const t of r.tokens) {
      if (r.kind === 'subscribe') held.add(t);
      else held.delete(t);
    }
  }
  return [...held];
};

/** The sockets (the ingestor's and the tests' own feeds alike) that were asked for `token`, oldest first. */
const socketsWith = (token: string) => h.fake.marketSockets.filter((s) => tokensOf(s).includes(token));
/** The ingestor's open socket (it holds YES from its first subscribe on). */
const ingestorSocket = () => socketsWith(YES).filter((s) => s.ws.readyState === s.ws.OPEN).at(-1);

let h: Harness;
let ingestor: Ingestor;
const feeds: MarketFeed[] = [];

const subscribeOf = (s: FakeMarketSocket) =>
  s.received.find((m): m is { assets_ids: string[]; type: string } => typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'market');

beforeAll(async () => {
  h = await createHarness('ingestor_market');
  h.fake.events.push(
    gammaEvent('e1', [{ id: 'm1', tokens: [YES, NO], prices: ['0.6', '0.4'] }]),
    gammaEvent('e2', [
      { id: 'm2', tokens: [OTHER_YES, OTHER_NO] },
      { id: 'm3', tokens: [CLOSED_YES, CLOSED_NO], closed: true, prices: ['0.5', '0.5'] },
    ]),
  );
  ingestor = h.ingestor();
  await ingestor.start();
});

afterAll(async () => {
  await Promise.all(feeds.map((f) => f.close()));
  await h?.cleanup();
});

async function chance(token: string) {
  return h.redis.redis.hget(h.keys.chances, token);
}

describe('market feed through the ingestor', () => {
  // Whatever ran before (a dropped socket, its resubscribe): each test starts on a subscribed socket.
  beforeEach(async () => {
    await waitFor(() => {
      const s = ingestorSocket();
      return s !== undefined && subscribeOf(s) !== undefined && ingestor.stats().market.sockets.open > 0;
    }, 5000, 'the ingestor subscribed');
  });

  it('subscribes every open token in one full subscribe on open, and reports the feed connected', async () => {
    const sock = await waitFor(() => h.fake.marketSockets[0] && subscribeOf(h.fake.marketSockets[0]) && h.fake.marketSockets[0]);
    const sub = subscribeOf(sock)!;
    expect({ ...sub, assets_ids: [...sub.assets_ids].sort() }).toEqual({
      assets_ids: [YES, NO, OTHER_YES, OTHER_NO].sort(),
      type: 'market',
      custom_feature_enabled: true,
      initial_dump: true,
    });
    await waitFor(async () => (await h.redis.redis.hget(h.keys.feed, 'market_connected')) === '1', 2000, 'market_connected');
    // Before any book, an outcome shows its catalog price.
    await ingestor.flush();
    expect(await chance(OTHER_NO)).toBe('0.5');
    expect(await chance(CLOSED_YES)).toBeNull();
  });

  it('subscribes a token first seen by a later catalog sync on the open socket', async () => {
    const NEW_YES = '1000000000000000000000000000000000000000000000000000000000000000000000007';
    const NEW_NO = '1000000000000000000000000000000000000000000000000000000000000000000000008';
    h.fake.events.push(gammaEvent('e3', [{ id: 'm4', tokens: [NEW_YES, NEW_NO], prices: ['0.1', '0.9'] }]));
    await ingestor.syncCatalog();
    const open = await waitFor(ingestorSocket, 3000, "the ingestor's socket");
    await waitFor(() => open.received.some((m) => JSON.stringify(m) === JSON.stringify({ operation: 'subscribe', assets_ids: [NEW_YES, NEW_NO] })), 2000, 'incremental subscribe');
    await waitFor(async () => (await chance(NEW_NO)) === '0.9', 2000, 'catalog chance of the new token');
  });

  it('a market that closes is unsubscribed, and nothing of its book is kept', async () => {
    const SHUT_YES = '1000000000000000000000000000000000000000000000000000000000000000000000009';
    const SHUT_NO = '1000000000000000000000000000000000000000000000000000000000000000000000010';
    const event = gammaEvent('e9', [{ id: 'm9', tokens: [SHUT_YES, SHUT_NO], prices: ['0.3', '0.7'] }]);
    h.fake.events.push(event);
    await ingestor.syncCatalog();
    const open = await waitFor(ingestorSocket, 3000, "the ingestor's socket");
    await waitFor(() => tokensOf(open).includes(SHUT_YES), 2000, 'subscribed');
    h.fake.broadcastMarket({ ...book(SHUT_YES, '0.30', '0.34', stamp()), market: '0xm9' });
    // Its book written as it stands: every market's first write (the catalog's prices) came before it.
    await waitFor(async () => (await h.redis.redis.hget(h.keys.snapshot('book:m9'), 'body'))?.includes('0.34') === true, 3000, 'the book of m9 written');
    const held = ingestor.stats().market.bookSnapshots.held;

    Object.assign((event.markets as Array<Record<string, unknown>>)[0]!, { closed: true });
    await ingestor.syncCatalog();
    await waitFor(() => open.received.some((m) => JSON.stringify(m) === JSON.stringify({ operation: 'unsubscribe', assets_ids: [SHUT_YES, SHUT_NO] })), 2000, 'unsubscribed');
    expect(ingestor.stats().market.bookSnapshots.held).toBe(held - 1);
  });

  it('a book then a price_change move the chance in Redis and mark the event dirty', async () => {
    await h.redis.redis.del(h.keys.dirtyEvents);
    const t = stamp();
    h.fake.broadcastMarket(book(YES, '0.50', '0.54', t));
    await waitFor(async () => (await chance(YES)) === '0.52', 2000, 'chance after book');
    const at1 = Number(await h.redis.redis.hget(h.keys.chanceAt, YES));
    expect(at1).toBeGreaterThan(Date.now() - 5_000);
    await waitFor(async () => (await h.redis.redis.smembers(h.keys.dirtyEvents)).includes('e1'), 2000, 'dirty e1');

    await h.redis.redis.del(h.keys.dirtyEvents);
    h.fake.broadcastMarket({
      event_type: 'price_change',
      market: '0xm1',
      timestamp: String(t + 1),
      price_changes: [{ asset_id: YES, price: '0.52', size: '50', side: 'BUY', hash: 'x', best_bid: '0.52', best_ask: '0.54' }],
    });
    await waitFor(async () => (await chance(YES)) === '0.53', 2000, 'chance after price_change');
    await waitFor(async () => (await h.redis.redis.smembers(h.keys.dirtyEvents)).includes('e1'), 2000, 'dirty e1 again');
    const lastAt = await h.redis.redis.hget(h.keys.feed, 'market_last_at');
    expect(Number(lastAt)).toBeGreaterThan(Date.now() - 5_000);
  });

  it('a duplicate book is idempotent: same chance, nothing marked dirty', async () => {
    const t = stamp();
    h.fake.broadcastMarket(book(NO, '0.40', '0.44', t));
    await waitFor(async () => (await chance(NO)) === '0.42', 2000, 'chance of NO');
    await ingestor.flush();
    await h.redis.redis.del(h.keys.dirtyEvents);
    const booksBefore = ingestor.stats().market.messages.book ?? 0;
    h.fake.broadcastMarket(book(NO, '0.40', '0.44', t));
    await waitFor(() => (ingestor.stats().market.messages.book ?? 0) >= booksBefore + 1, 2000, 'duplicate applied');
    await ingestor.flush();
    expect(await chance(NO)).toBe('0.42');
    expect(await h.redis.redis.smembers(h.keys.dirtyEvents)).toEqual([]);
  });

  it('drops a delta older than the book', async () => {
    const t = stamp();
    const books = ingestor.stats().market.messages.book ?? 0;
    h.fake.broadcastMarket(book(NO, '0.40', '0.44', t));
    await waitFor(() => (ingestor.stats().market.messages.book ?? 0) > books, 2000, 'the book of NO');
    await ingestor.flush();
    expect(await chance(NO)).toBe('0.42');
    const dropped = ingestor.stats().market.droppedDeltas;
    h.fake.broadcastMarket({ event_type: 'price_change', asset_id: NO, market: '0xm1', timestamp: String(t - 1), changes: [{ price: '0.43', side: 'BUY', size: '10' }] });
    await waitFor(() => ingestor.stats().market.droppedDeltas === dropped + 1, 2000, 'dropped delta');
    await ingestor.flush();
    expect(await chance(NO)).toBe('0.42');
    // The same change, newer than the book, applies.
    h.fake.broadcastMarket({ event_type: 'price_change', asset_id: NO, market: '0xm1', timestamp: String(t + 1), changes: [{ price: '0.43', side: 'BUY', size: '10' }] });
    await waitFor(async () => (await chance(NO)) === '0.435', 2000, 'newer delta applied');
  });

  it('skips a malformed element and applies the rest of the frame', async () => {
    const malformed = ingestor.stats().market.malformed;
    h.fake.broadcastMarket([{ event_type: 'book', market: 'no asset' }, { event_type: 'mystery' }, book(OTHER_YES, '0.10', '0.12', stamp())]);
    await waitFor(async () => (await chance(OTHER_YES)) === '0.11', 2000, 'rest of frame applied');
    expect(ingestor.stats().market.malformed).toBe(malformed + 1);
    expect(ingestor.stats().market.unknown).toBeGreaterThanOrEqual(1);
  });

  it('reconnects after the server drops the socket and resends the full subscribe', async () => {
    const dropped = await waitFor(ingestorSocket, 3000, "the ingestor's socket");
    const held = heldBy(dropped);
    dropped.ws.terminate();
    const fresh = await waitFor(() => {
      const s = ingestorSocket();
      return s && s !== dropped && subscribeOf(s) ? s : undefined;
    }, 3000, 'resubscribe');
    expect(subscribeOf(fresh)!.assets_ids.sort()).toEqual(held.sort());
    expect(held).toEqual(expect.arrayContaining([YES, NO, OTHER_YES, OTHER_NO]));
    expect(ingestor.stats().market.sockets.reconnects).toBeGreaterThanOrEqual(1);
    await waitFor(async () => (await h.redis.redis.hget(h.keys.feed, 'market_connected')) === '1', 2000, 'connected again');
    // The fresh book replaces the local one.
    h.fake.broadcastMarket(book(YES, '0.70', '0.72', stamp()));
    await waitFor(async () => (await chance(YES)) === '0.71', 2000, 'book after reconnect');
  });
});

/** The market sockets alone, on the fake exchange, closed after the file. */
function socketsFor(opts: Omit<MarketFeedOptions, 'url' | 'logger' | 'onFrame'> & { onFrame?: MarketFeedOptions['onFrame'] }): MarketFeed {
  const feed = createMarketFeed({ url: `${h.fake.wsUrl}/ws/market`, logger: quietLogger, onFrame: () => {}, ...opts });
  feeds.push(feed);
  return feed;
}

describe('market feed sockets', () => {
  it('shards tokens over sockets, adds later tokens with operation subscribe, and sends PING', async () => {
    const feed = socketsFor({ maxAssetsPerSocket: 2, pingIntervalMs: 50 });
    feed.subscribe(['a', 'b', 'c']);
    const socks = await waitFor(() => {
      const s = [...new Set([...socketsWith('a'), ...socketsWith('c')])];
      return s.length === 2 ? s : undefined;
    }, 3000, 'two shards');
    expect(socks.map((s) => subscribeOf(s)!.assets_ids).sort()).toEqual([['a', 'b'], ['c']]);
    feed.subscribe(['d', 'a']);
    const second = socks.find((s) => subscribeOf(s)!.assets_ids[0] === 'c')!;
    await waitFor(() => second.received.some((m) => JSON.stringify(m) === JSON.stringify({ operation: 'subscribe', assets_ids: ['d'] })), 2000, 'incremental subscribe');
    await waitFor(() => socks.every((s) => s.received.includes('PING')), 2000, 'PING');
    // The PING never precedes the subscribe (the exchange closes such a socket).
    for (const s of socks) expect(s.received.indexOf('PING')).toBeGreaterThan(s.received.indexOf(subscribeOf(s)!));
    await feed.close();
  });

  it('recycles a socket that is open but silent, and resubscribes', async () => {
    h.fake.silent = true;
    try {
      const feed = socketsFor({ silenceMs: 150, pingIntervalMs: 50, reconnectInitialMs: 10, reconnectMaxMs: 20 });
      feed.subscribe(['w1']);
      const recycled = await waitFor(() => {
        const s = socketsWith('w1');
        return s.length >= 2 ? s : undefined;
      }, 3000, 'watchdog recycle');
      expect(subscribeOf(recycled[1]!)!.assets_ids).toEqual(['w1']);
      expect(feed.stats().watchdogRecycles).toBeGreaterThanOrEqual(1);
      await feed.close();
    } finally {
      h.fake.silent = false;
    }
  });

  it('keeps a socket that delivers data', async () => {
    let frames = 0;
    const feed = socketsFor({ onFrame: () => frames++, silenceMs: 200 });
    feed.subscribe(['k1']);
    const sock = await waitFor(() => socketsWith('k1')[0], 2000, 'socket');
    const ticker = setInterval(() => sock.send({ event_type: 'last_trade_price', asset_id: 'k1', price: '0.5', timestamp: String(Date.now()) }), 40);
    // 15 frames 40 ms apart: three silence limits of a socket that keeps delivering.
    await waitFor(() => frames >= 15, 3000, '15 data frames').finally(() => clearInterval(ticker));
    expect(feed.stats().watchdogRecycles).toBe(0);
    expect(socketsWith('k1')).toHaveLength(1);
    await feed.close();
  });

  it('keeps a socket without data whose PONGs keep coming, and recycles it soon after they stop', async () => {
    // Silence 40 ping intervals long: only missing PONGs can recycle it within this test.
    const feed = socketsFor({ pingIntervalMs: 50, silenceMs: 2_000, reconnectInitialMs: 10, reconnectMaxMs: 20 });
    feed.subscribe(['p1']);
    await waitFor(() => socketsWith('p1')[0], 2000, 'socket');
    // 12 ping intervals of no data at all, PONGs answered: never recycled.
    await waitFor(() => feed.stats().pongs >= 12 || undefined, 3000, 'a dozen PONGs');
    expect(feed.stats().watchdogRecycles).toBe(0);
    expect(feed.isLive('p1')).toBe(true);
    h.fake.silent = true;
    const stoppedAt = Date.now();
    try {
      await waitFor(() => feed.stats().watchdogRecycles >= 1 || undefined, 2000, 'recycled after PONGs stopped');
      const tookMs = Date.now() - stoppedAt;
      console.log(`PONGs stopped: recycled after ${tookMs} ms (ping every 50 ms, silence limit 2000 ms)`);
      expect(tookMs).toBeLessThan(1_000);
    } finally {
      h.fake.silent = false;
    }
    await feed.close();
  });
});
