/**
 * npm run bench:ingest — how fast the ingestor's hot path is, and how long a price takes to show.
 *
 * 1. Throughput on one core: a synthetic feed of BENCH_FRAMES frames (default 200 000), generated in
 *    memory in the wire format (book, price_change in both shapes, last_trade_price, arrays), pushed
 *    through the real code path — parseMarketFrame, the order books, the display chance and the
 *    Redis chance publisher (real Redis, pipelined) — by calling the market handler directly; then
 *    the same frames sent by a local ws server through the real market feed socket. Baseline in the
 *    same run: JSON.parse alone over the same frames.
 * 2. Delay to the API, read over HTTP from outside: BENCH_BURSTS (default 12) bursts over
 *    BENCH_BURST_EVENTS (default 50) events, each followed 50 ms later by one more frame and then
 *    silence; every change timed from the simulator's send to the first API response showing it.
 *    Then as many bursts timed to the event snapshot in Redis (the worker's part, before the API), and
 *    during the API's bursts, per change, when its price message reached the event stream (which the
 *    API's live-price overlay reads) and when the worker announced an event snapshot showing it.
 *    BENCH_SKIP_STACK=1 skips this part.
 * Last line: `bench:ingest frames/s=<n> frame_to_api_p50=<ms> p99=<ms> last_of_burst_p99=<ms>`,
 * frames/s being the socket → handler path of part 1.
 */
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { WebSocketServer } from 'ws';
import { redisKeys } from '@pm/shared/redis';
import { createTestRedis } from '@pm/shared/testing';
import { createMarketHandler } from '../../services/ingestor/src/market-feed/market-handler.js';
import { createChancePublisher } from '../../services/ingestor/src/market-feed/chance-publisher.js';
import { createMarketFeed } from '../../services/ingestor/src/market-feed/market-feed.js';
import { OutcomeDirectory } from '../../services/ingestor/src/catalog/outcome-directory.js';
import { systemClock } from '../../services/ingestor/src/common/clock.js';
import { startStack, type Stack } from '../support/stack.js';
import { until } from '@pm/shared/wait';
import { apiChance, priceBurst, priceTargets, snapshotReader, type PriceTarget, type Seen, type ShownReader } from '../support/price-bursts.js';
import { benchCli } from './cli.js';
import { prng } from './prng.js';

benchCli('bench:ingest', `usage: npm run bench:ingest
The ingestor's hot path on one core (frames/s, beside JSON.parse alone), then frame → visible in
/api/v1/markets/{slug} over HTTP under bursts; prints
  bench:ingest frames/s=<n> frame_to_api_p50=<ms> p99=<ms> last_of_burst_p99=<ms>
Settings (environment):
  BENCH_FRAMES        frames for the throughput part (default 200000)
  BENCH_BURSTS        bursts (default 12)
  BENCH_BURST_EVENTS  events per burst (default 50)
  BENCH_SKIP_STACK=1  skip the part through the running stack
  --help              this text`);

const FRAMES = Number(process.env.BENCH_FRAMES ?? 200_000);
const BURSTS = Number(process.env.BENCH_BURSTS ?? 12);
const BURST_EVENTS = Number(process.env.BENCH_BURST_EVENTS ?? 50);
/** A change not shown this long after its frame counts as lost (the loss this bench exists to catch lasted 15 s). */
const LOST_AFTER_MS = 20_000;
const MARKETS = 500;
const logger = pino({ level: 'silent' });

const tokenOf = (market: number, side: number) => `8${String(market * 2 + side).padStart(76, '0')}`;
const conditionOf = (market: number) => `0x${market.toString(16).padStart(64, '0')}`;
const price = (p: number) => Math.min(0.99, Math.max(0.01, p)).toFixed(2);

function generateFeed(n: number): string[] {
  const rnd = prng(7);
  const mid = Array.from({ length: MARKETS }, () => 0.2 + rnd() * 0.6);
  let ts = 1_790_000_000_000;
  const element = (): Record<string, unknown> => {
    const m = Math.floor(rnd() * MARKETS);
    mid[m] = Math.min(0.95, Math.max(0.05, (mid[m] ?? 0.5) + (rnd() - 0.5) * 0.02));
    const p = mid[m] ?? 0.5;
    ts += 1;
    const kind = rnd();
    if (kind < 0.1) {
      const side = rnd() < 0.5 ? 0 : 1;
      const q = side === 0 ? p : 1 - p;
      const levels = (from: number, step: number) => Array.from({ length: 5 }, (_, i) => ({ price: price(from + step * i), size: String(10 + i * 7) }));
      return { event_type: 'book', asset_id: tokenOf(m, side), market: conditionOf(m), bids: levels(q - 0.05, 0.01), asks: levels(q + 0.05, -0.01), timestamp: String(ts), hash: `0x${ts.toString(16)}` };
    }
    if (kind < 0.6) {
      const bid = price(p - 0.01);
      return {
        market: conditionOf(m), timestamp: String(ts), event_type: 'price_change',
        price_changes: [
          { asset_id: tokenOf(m, 0), price: bid, size: String(Math.floor(rnd() * 300)), side: 'BUY', hash: 'h', best_bid: bid, best_ask: price(p + 0.01) },
          { asset_id: tokenOf(m, 1), price: price(1 - Number(bid)), size: String(Math.floor(rnd() * 300)), side: 'SELL', hash: 'h', best_bid: '', best_ask: price(1 - Number(bid)) },
        ],
      };
    }
    if (kind < 0.7) {
      return { event_type: 'price_change', asset_id: tokenOf(m, 0), market: conditionOf(m), timestamp: String(ts), changes: [{ price: price(p + 0.01), side: 'SELL', size: String(Math.floor(rnd() * 300)) }] };
    }
    return { event_type: 'last_trade_price', asset_id: tokenOf(m, 0), market: conditionOf(m), price: price(p), size: '5', side: 'BUY', timestamp: String(ts) };
  };
  const frames: string[] = [];
  // Every book first, as the initial dump does, so deltas land on books.
  for (let m = 0; m < MARKETS; m += 50) {
    frames.push(JSON.stringify(Array.from({ length: 100 }, (_, i) => {
      const market = m + Math.floor(i / 2);
      const p = i % 2 === 0 ? (mid[market] ?? 0.5) : 1 - (mid[market] ?? 0.5);
      return { event_type: 'book', asset_id: tokenOf(market, i % 2), market: conditionOf(market), bids: [{ price: price(p - 0.01), size: '100' }], asks: [{ price: price(p + 0.01), size: '100' }], timestamp: String(ts), hash: 'h0' };
    })));
  }
  while (frames.length < n) {
    frames.push(rnd() < 0.1 ? JSON.stringify([element(), element(), element()]) : JSON.stringify(element()));
  }
  return frames;
}

function directory(): OutcomeDirectory {
  const d = new OutcomeDirectory();
  for (let m = 0; m < MARKETS; m++) {
    for (const side of [0, 1]) {
      d.upsert({ tokenId: tokenOf(m, side), marketId: `m${m}`, eventId: `e${Math.floor(m / 3)}`, eventSlug: `event-${Math.floor(m / 3)}`, outcomeIndex: side, name: side ? 'No' : 'Yes', catalogPrice: 0.5, closed: false });
    }
  }
  return d;
}

async function pipeline(label: string) {
  const redis = await createTestRedis(label);
  const publisher = createChancePublisher({ redis: redis.redis, keys: redisKeys(redis.prefix), clock: systemClock, logger });
  const dirty = new Set<string>();
  // The handler marks the event dirty exactly when a chance moved: that counts the moves.
  let moves = 0;
  const handler = createMarketHandler({
    outcomes: directory(),
    publisher,
    markDirty: (e) => {
      moves++;
      dirty.add(e);
    },
    resolve: () => {},
    clock: systemClock,
    logger,
  });
  return {
    handler,
    publisher,
    moves: () => moves,
    async done() {
      await publisher.close();
      await redis.cleanup();
    },
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function throughput(frames: string[]): Promise<number> {
  const bytes = frames.reduce((s, f) => s + f.length, 0);
  // Baseline: JSON.parse alone.
  let t = performance.now();
  let sink = 0;
  for (const f of frames) sink += (JSON.parse(f) as unknown) ? 1 : 0;
  const parseMs = performance.now() - t;

  // The handler called directly: parse, books, chance, publisher (flushed to Redis at the end).
  const direct = await pipeline('bench_direct');
  t = performance.now();
  // In slices, yielding to the event loop as a socket's message events would, so the publisher's
  // writes go out as they would on the feed and its Redis pipelines are part of the measured time.
  for (let i = 0; i < frames.length; i++) {
    direct.handler.handleFrame(frames[i] as string);
    if (i % 200 === 199) await new Promise((r) => setImmediate(r));
  }
  await direct.publisher.flush();
  const directMs = performance.now() - t;
  const s = direct.handler.stats();
  const pub = direct.publisher.stats();
  const moves = direct.moves();
  await direct.done();

  // Through a real socket: a local ws server sends the frames to the market feed.
  const viaWs = await pipeline('bench_ws');
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const port = (wss.address() as AddressInfo).port;
  let started = 0;
  wss.on('connection', (ws) => {
    ws.once('message', () => {
      started = performance.now();
      for (const f of frames) ws.send(f);
    });
  });
  let received = 0;
  let finish!: () => void;
  const all = new Promise<void>((r) => (finish = r));
  const feed = createMarketFeed({
    url: `ws://127.0.0.1:${port}/ws/market`,
    logger,
    onFrame: (text) => {
      viaWs.handler.handleFrame(text);
      if (++received === frames.length) finish();
    },
    silenceMs: 600_000,
  });
  feed.subscribe([tokenOf(0, 0)]);
  await all;
  await viaWs.publisher.flush();
  const wsMs = performance.now() - started;
  await feed.close();
  wss.close();
  await viaWs.done();

  process.stdout.write(`\ningest throughput (${fmt(frames.length)} frames, ${fmt(bytes / frames.length)} B average, ${MARKETS * 2} tokens, one core; sink ${sink})\n`);
  console.table([
    { path: 'JSON.parse only (baseline)', 'frames/s': fmt(frames.length / (parseMs / 1000)), ms: fmt(parseMs) },
    { path: 'handler: parse + books + chance + Redis', 'frames/s': fmt(frames.length / (directMs / 1000)), ms: fmt(directMs) },
    { path: 'local ws socket → market feed → handler', 'frames/s': fmt(frames.length / (wsMs / 1000)), ms: fmt(wsMs) },
  ]);
  process.stdout.write(
    `handler: ${fmt(Object.values(s.messages).reduce((a, b) => a + b, 0))} messages, ${fmt(s.droppedDeltas)} deltas dropped, ${s.malformed} malformed; ` +
      `${fmt(moves)} chance moves, ${fmt(pub.published)} chances published, ${fmt(pub.writes)} Redis pipelines\n`,
  );
  return frames.length / (wsMs / 1000);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

interface Delays {
  /** Every change shown, sorted; a change never shown counts as LOST_AFTER_MS (losses cannot flatter the percentiles). */
  all: number[];
  /** Every change, as measured. */
  changes: Seen[];
  lastOfBurst: number[];
  lost: number;
  lostLast: number;
}

/** BURSTS bursts over `targets`, each change timed until `read` shows it. */
async function measureBursts(stack: Stack, targets: readonly PriceTarget[], read?: ShownReader): Promise<Delays> {
  const all: number[] = [];
  const lastOfBurst: number[] = [];
  const changes: Seen[] = [];
  let lost = 0;
  let lostLast = 0;
  for (let round = 0; round < BURSTS; round++) {
    const result = await priceBurst(stack, targets, round, { deadlineMs: LOST_AFTER_MS, ...(read === undefined ? {} : { read }) });
    for (const seen of [...result.burst, result.last]) {
      changes.push(seen);
      if (seen.delayMs === undefined) lost++;
      all.push(seen.delayMs ?? LOST_AFTER_MS);
    }
    if (result.last.delayMs === undefined) lostLast++;
    lastOfBurst.push(result.last.delayMs ?? LOST_AFTER_MS);
  }
  return { all: all.sort((a, b) => a - b), changes, lastOfBurst: lastOfBurst.sort((a, b) => a - b), lost, lostLast };
}

const row = (changes: string, sorted: number[]) => ({
  changes,
  'p50 ms': Math.round(percentile(sorted, 50)),
  'p99 ms': Math.round(percentile(sorted, 99)),
  'max ms': Math.round(sorted.at(-1) ?? Number.NaN),
});

/** Records that `key` (market|chance) was seen at `at`. */
function note(seen: Map<string, number[]>, key: string, at: number): void {
  const times = seen.get(key);
  if (times === undefined) seen.set(key, [at]);
  else if (times.at(-1) !== at) times.push(at);
}

/**
 * When `key` was first seen at or after `since` (the change's frame): a chance repeats across bursts
 * (the last frame alternates 0.93 / 0.07), and an earlier sighting is an earlier change's.
 */
function firstSince(seen: Map<string, number[]>, key: string, since: number): number | undefined {
  return seen.get(key)?.find((at) => at >= since);
}

/**
 * Watches the event stream from outside, as any stream client would: when each (market, chance) of a
 * first outcome appeared there (every time: `seenAt` picks the first at or after a change's frame). The ingestor appends a price message when it publishes the
 * chance, and the API's live-price overlay reads the same entries, so this times the stage before
 * the API for the very changes the API bursts time.
 */
function watchStream(url: string, prefix: string): { seenAt(marketId: string, chance: number, since: number): number | undefined; stop(): void } {
  const reader = new Redis(url);
  const key = redisKeys(prefix).stream;
  const seen = new Map<string, number[]>();
  let stopped = false;
  void (async () => {
    let cursor = '$';
    while (!stopped) {
      const reply = await reader.xread('COUNT', 1000, 'BLOCK', 500, 'STREAMS', key, cursor).catch(() => null);
      const now = Date.now();
      for (const [id, fields] of reply?.[0]?.[1] ?? []) {
        cursor = id;
        const d = fields[fields.indexOf('d') + 1];
        if (fields[fields.indexOf('t') + 1] !== 'price' || d === undefined) continue;
        const m = JSON.parse(d) as { market_id: string; outcome_index: number; chance: number };
        if (m.outcome_index === 0) note(seen, `${m.market_id}|${m.chance}`, now);
      }
    }
  })();
  return {
    seenAt: (marketId, chance, since) => firstSince(seen, `${marketId}|${chance}`, since),
    stop: () => {
      stopped = true;
      reader.disconnect();
    },
  };
}

/**
 * Watches the worker's snapshot announcements from outside: when an event snapshot showing each
 * (market, first-outcome chance) was announced (read once per announced version; `seenAt` picks the
 * first at or after a change's frame).
 */
async function watchAnnouncements(url: string, prefix: string): Promise<{ seenAt(marketId: string, chance: number, since: number): number | undefined; stop(): void }> {
  const keys = redisKeys(prefix);
  const sub = new Redis(url);
  const reader = new Redis(url);
  const seen = new Map<string, number[]>();
  sub.on('message', (_channel: string, message: string) => {
    const now = Date.now();
    const names = (JSON.parse(message) as Array<{ name: string }>).map((a) => a.name).filter((n) => n.startsWith('event:'));
    void Promise.all(
      names.map(async (name) => {
        const body = await reader.hget(keys.snapshot(name as `event:${string}`), 'body');
        const parsed = body === null ? undefined : (JSON.parse(body) as { event: { markets: Array<{ id: string; outcomes: Array<{ chance: number }> }> } });
        for (const m of parsed?.event.markets ?? []) note(seen, `${m.id}|${m.outcomes[0]?.chance}`, now);
      }),
    ).catch(() => {});
  });
  await sub.subscribe(keys.snapshotAnnounce);
  return {
    seenAt: (marketId, chance, since) => firstSince(seen, `${marketId}|${chance}`, since),
    stop: () => {
      sub.disconnect();
      reader.disconnect();
    },
  };
}

/**
 * Frame → API, from outside: the stack through the run line (demo crowd off, the simulator's walk
 * paused), BURSTS bursts over BURST_EVENTS events, each a frame per event at once, one more frame 50
 * ms later, then silence until every change showed (test/support/price-bursts.ts). Each change is
 * timed from the simulator's send (its answer's timestamp) to the first `GET /api/v1/markets/{slug}`
 * response that shows it, polled in a tight loop per change by this process. Then as many bursts
 * again, timed until the event snapshot in Redis shows the change: the part before the API.
 */
async function apiDelay(framesPerSecond: number) {
  process.stdout.write(`\nstarting the stack through the run line for the frame → API delay…\n`);
  const stack = await startStack({ env: { CROWD: '0', RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: 'warn' }, readyTimeoutMs: 90_000 });
  const redis = new Redis(stack.redisUrl);
  try {
    await stack.simControl('/_sim/pause', {});
    const targets = await priceTargets(stack, BURST_EVENTS + 1);
    if (targets.length < 2) throw new Error('the simulator has too few open events');
    const chosen = targets.slice(0, BURST_EVENTS);
    await until('every event page in the API', async () => (await Promise.all(chosen.map((t) => apiChance(stack, t)))).every((c) => c !== undefined), {
      timeoutMs: 60_000,
      everyMs: 500,
    });
    const stream = watchStream(stack.redisUrl, stack.prefix);
    const announced = await watchAnnouncements(stack.redisUrl, stack.prefix);
    const api = await measureBursts(stack, chosen);
    stream.stop();
    announced.stop();
    const inSnapshot = api.changes.map((c) => {
      const at = announced.seenAt(c.target.marketId, c.chance, c.sentAt);
      return at === undefined ? LOST_AFTER_MS : Math.max(0, at - c.sentAt);
    });
    const ahead = api.changes.filter((c, i) => c.delayMs !== undefined && c.delayMs < (inSnapshot[i] ?? 0)).length;
    const inStream = api.changes.map((c) => {
      const at = stream.seenAt(c.target.marketId, c.chance, c.sentAt);
      return at === undefined ? LOST_AFTER_MS : Math.max(0, at - c.sentAt);
    });
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    /** API minus stream, per change: the API's own part (reader → overlay → response). */
    const apiPart = api.changes.flatMap((c, i) => (c.delayMs === undefined ? [] : [c.delayMs - (inStream[i] ?? 0)]));
    const written = await measureBursts(stack, chosen, snapshotReader(redis, stack.prefix));
    process.stdout.write(
      `\nframe → chance visible: ${BURSTS} bursts over ${chosen.length} events per reader, each followed 50 ms later by one more frame, then silence; ` +
        `not shown within ${LOST_AFTER_MS} ms: ${api.lost} through the API (${api.lostLast} of them the last frame of a burst), ` +
        `${written.lost} in Redis (${written.lostLast})\n` +
        `the API's bursts in stages, per change: its price message in the event stream (the ingestor's part; the API's live-price overlay reads it), ` +
        `the API after it; beside it the worker's event snapshot as announced (the path the overlay does not wait for): ` +
        `${ahead} of ${api.changes.length} changes shown by the API before the worker announced them\n`,
    );
    console.table([
      row('GET /api/v1/markets/{slug}: all', api.all),
      row('GET /api/v1/markets/{slug}: last of burst', api.lastOfBurst),
      row('  of which: price message in the stream', sorted(inStream)),
      row('  of which: the API after the stream', sorted(apiPart)),
      row('  the bench\'s first read after the frame', sorted(api.changes.map((c) => c.firstReadMs))),
      row('  beside it: the worker\'s snapshot announced', sorted(inSnapshot)),
      row('event snapshot in Redis: all', written.all),
      row('event snapshot in Redis: last of burst', written.lastOfBurst),
    ]);
    process.stdout.write(
      `bench:ingest frames/s=${Math.round(framesPerSecond)} frame_to_api_p50=${Math.round(percentile(api.all, 50))} ` +
        `p99=${Math.round(percentile(api.all, 99))} last_of_burst_p99=${Math.round(percentile(api.lastOfBurst, 99))}\n`,
    );
  } finally {
    redis.disconnect();
    await stack.stop();
  }
}

async function main() {
  const frames = generateFeed(FRAMES);
  const framesPerSecond = await throughput(frames);
  if (process.env.BENCH_SKIP_STACK !== '1') await apiDelay(framesPerSecond);
  else process.stdout.write(`bench:ingest frames/s=${Math.round(framesPerSecond)}\n`);
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:ingest failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
