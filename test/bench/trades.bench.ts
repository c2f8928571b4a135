/**
 * npm run bench:trades — the trade tape: how fast the ingestor records prints with the feed live,
 * what a trade costs on disk, how fast a 1,000-trade page is served, and what the stream holds.
 *
 * 1. Recording, one core: BENCH_TRADES prints (default 300,000; a match is two prints, one per token,
 *    70 % with a transaction hash) over BENCH_MARKETS binary markets (default 250), each match after a
 *    price_change of its book, sent by a local ws server through the real market feed socket, handler
 *    (books, chances to Redis), trade recorder (Postgres, 1 s batches) and stream writer (Redis) — the
 *    ingestor's own path. Timed from the first frame sent to the last print committed. Baseline in the
 *    same run: the same frames through the same path without the tape.
 * 2. Disk: pg_total_relation_size over the tape's partitions (indexes included) per trade; baseline:
 *    the same trades as a plain table, a row and a unique (series, key) index per trade.
 * 3. A 1,000-trade page of /api/v1/markets/{slug}/trades (an event of 2 markets, 4 tokens) over HTTP,
 *    read by wrk from outside the process (BENCH_SECONDS, default 8; 8 connections); baseline: the
 *    event's page (/api/v1/markets/{slug}) from the same server in the same run.
 * 4. The event stream's Redis memory (MEMORY USAGE of the stream key) per trade message, and what the
 *    15-minute retention holds at the recorded rate.
 * Last line: `bench:trades trades_per_s=<n> bytes_per_trade=<n> trades_p99_ms=<ms> stream_bytes_per_trade=<n> stream_mb_at_rate=<n>`.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { WebSocketServer } from 'ws';
import { sql } from '@pm/shared/db';
import { redisKeys } from '@pm/shared/redis';
import { STREAM_RETENTION_MS } from '@pm/shared/stream';
import { createTestDatabase, createTestRedis } from '@pm/shared/testing';
import { storedTrade, tradePartitions } from '@pm/shared/trades';
import { until } from '@pm/shared/wait';
import { createMarketHandler } from '../../services/ingestor/src/market-feed/market-handler.js';
import { createChancePublisher } from '../../services/ingestor/src/market-feed/chance-publisher.js';
import { createMarketFeed } from '../../services/ingestor/src/market-feed/market-feed.js';
import { OutcomeDirectory } from '../../services/ingestor/src/catalog/outcome-directory.js';
import { systemClock } from '../../services/ingestor/src/common/clock.js';
import { createTradeRecorder } from '../../services/ingestor/src/trades/trade-recorder.js';
import { createIngestorStream } from '../../services/ingestor/src/stream/stream-out.js';
import { apiRedis, event as eventFixture, startApp, writeFeed, writeSnapshot } from '../../services/api/src/testing/fixtures.js';
import { benchCli } from './cli.js';
import { prng } from './prng.js';

benchCli('bench:trades', `usage: npm run bench:trades
The trade tape: prints recorded per second with the feed live (beside the same feed without the tape),
bytes per trade on disk (beside a plain row per trade), a 1,000-trade page's p99 over HTTP (wrk, beside
the event page) and the stream's Redis memory per trade; prints
  bench:trades trades_per_s=<n> bytes_per_trade=<n> trades_p99_ms=<ms> stream_bytes_per_trade=<n> stream_mb_at_rate=<n>
Settings (environment):
  BENCH_TRADES   prints to record (default 300000)
  BENCH_MARKETS  binary markets (default 250)
  BENCH_SECONDS  wrk seconds per path (default 8)
  --help         this text`);

const PRINTS = Number(process.env.BENCH_TRADES ?? 300_000);
const MARKETS = Number(process.env.BENCH_MARKETS ?? 250);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const logger = pino({ level: 'silent' });
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

const tokenOf = (market: number, side: number) => `9${String(market * 2 + side).padStart(76, '0')}`;
const conditionOf = (market: number) => `0x${market.toString(16).padStart(64, '0')}`;
const slugOf = (market: number) => `bench-event-${Math.floor(market / 2)}`;

/** Frames: per match, a price_change of both tokens' books, then the two prints of the match. */
function generateFeed(): string[] {
  const rnd = prng(11);
  const frames: string[] = [];
  const start = Date.now() - 600_000;
  for (let i = 0; i < PRINTS / 2; i++) {
    const m = Math.floor(rnd() * MARKETS);
    const p = Math.round((0.2 + rnd() * 0.6) * 100) / 100;
    const ts = String(start + i * 2);
    const size = (Math.round(rnd() * 50_000) / 100 + 1).toFixed(2);
    const buy = rnd() < 0.5;
    frames.push(
      JSON.stringify({
        event_type: 'price_change', market: conditionOf(m), timestamp: ts,
        price_changes: [
          { asset_id: tokenOf(m, 0), price: p.toFixed(2), size: String(Math.round(rnd() * 1000)), side: 'SELL', hash: 'h', best_bid: (p - 0.01).toFixed(2), best_ask: p.toFixed(2) },
          { asset_id: tokenOf(m, 1), price: (1 - p).toFixed(2), size: String(Math.round(rnd() * 1000)), side: 'BUY', hash: 'h', best_bid: (1 - p).toFixed(2), best_ask: (1.01 - p).toFixed(2) },
        ],
      }),
    );
    const hash = rnd() < 0.7 ? { transaction_hash: `0x${i.toString(16).padStart(64, '0')}` } : {};
    frames.push(
      JSON.stringify([
        { event_type: 'last_trade_price', asset_id: tokenOf(m, 0), market: conditionOf(m), price: p.toFixed(2), size, side: buy ? 'BUY' : 'SELL', fee_rate_bps: '0', timestamp: ts, ...hash },
        { event_type: 'last_trade_price', asset_id: tokenOf(m, 1), market: conditionOf(m), price: (1 - p).toFixed(2), size, side: buy ? 'SELL' : 'BUY', fee_rate_bps: '0', timestamp: ts, ...hash },
      ]),
    );
  }
  return frames;
}

function directory(): OutcomeDirectory {
  const d = new OutcomeDirectory(() => Date.now());
  for (let m = 0; m < MARKETS; m++) {
    for (const side of [0, 1]) {
      d.upsert({ tokenId: tokenOf(m, side), marketId: `m${m}`, eventId: `e${Math.floor(m / 2)}`, eventSlug: slugOf(m), outcomeIndex: side, name: side ? 'No' : 'Yes', catalogPrice: 0.5, closed: false });
    }
  }
  return d;
}

/** The frames through a real socket into the ingestor's path; with `db`, the tape records them. Returns ms. */
async function record(frames: string[], label: string, db?: Awaited<ReturnType<typeof createTestDatabase>>['db']): Promise<{ ms: number; recorded: number; streamKey: string; redisUrl: string; cleanup(): Promise<void> }> {
  const redis = await createTestRedis(label);
  const outcomes = directory();
  const publisher = createChancePublisher({ redis: redis.redis, keys: redisKeys(redis.prefix), clock: systemClock, logger });
  const stream = createIngestorStream({ redis: redis.redis, prefix: redis.prefix, logger, clock: systemClock, outcomes });
  const trades = db && createTradeRecorder({ db, logger, onRecorded: stream.trades });
  const handler = createMarketHandler({
    outcomes,
    publisher,
    markDirty: () => {},
    resolve: () => {},
    clock: systemClock,
    logger,
    ...(trades ? { onTrade: (tokenId: string, print: Parameters<typeof storedTrade>[0], ordinal: number) => trades.offer(tokenId, storedTrade(print, ordinal)) } : {}),
  });
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  let started = 0;
  wss.on('connection', (ws) => {
    // The exchange answers PING; the feed is sent once, to the first subscription (a socket recycled
    // under load would otherwise get it all again: repeats, not new prints).
    ws.on('message', (data) => {
      if (String(data) === 'PING') ws.send('PONG');
      else if (started === 0) {
        started = performance.now();
        for (const f of frames) ws.send(f);
      }
    });
  });
  let received = 0;
  let finish!: () => void;
  const all = new Promise<void>((r) => (finish = r));
  const feed = createMarketFeed({
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws/market`,
    logger,
    onFrame: (text) => {
      if (text === 'PONG') return;
      handler.handleFrame(text);
      if (++received === frames.length) finish();
    },
    silenceMs: 600_000,
    pingIntervalMs: 60_000,
  });
  feed.subscribe([tokenOf(0, 0)]);
  await all;
  await publisher.flush();
  if (trades) {
    await until('every print recorded', async () => {
      await trades.flush();
      const s = trades.stats();
      return s.recorded + s.repeated >= PRINTS || undefined;
    }, { timeoutMs: 600_000, everyMs: 50 });
  }
  const ms = performance.now() - started;
  await stream.flush();
  await feed.close();
  wss.close();
  await publisher.close();
  if (feed.stats().reconnects > 0) process.stdout.write(`${label}: the feed socket reconnected ${feed.stats().reconnects} time(s)\n`);
  return { ms, recorded: trades?.stats().recorded ?? 0, streamKey: redisKeys(redis.prefix).stream, redisUrl: redis.url, cleanup: () => redis.cleanup() };
}

/** wrk over one URL (its own process; this one keeps serving meanwhile): requests/s and p99 (ms). */
async function wrk(url: string): Promise<{ rps: number; p99: number }> {
  const { stdout: out } = await promisify(execFile)('wrk', ['-t1', '-c8', `-d${SECONDS}s`, '--latency', url], { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const m = /99%\s+([\d.]+)(us|ms|s)\b/.exec(out);
  const p99 = m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (non2xx) throw new Error(`wrk saw ${non2xx[1]} error responses from ${url}`);
  return { rps, p99 };
}

async function main(): Promise<void> {
  if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('bench:trades needs wrk (apt-get install wrk)');
  const frames = generateFeed();
  const database = await createTestDatabase('bench_trades');
  try {
    // 1. Recording, beside the same feed without the tape.
    const bare = await record(frames, 'bench_trades_bare');
    await bare.cleanup();
    const taped = await record(frames, 'bench_trades_tape', database.db);
    const tradesPerS = PRINTS / (taped.ms / 1000);

    // 4. The stream's memory.
    const probe = await apiRedis(taped.redisUrl);
    const streamBytes = Number(await probe.call('MEMORY', 'USAGE', taped.streamKey, 'SAMPLES', '0'));
    const entries = await probe.xlen(taped.streamKey);
    probe.disconnect();
    const perEntry = streamBytes / Math.max(1, entries);
    const atRateMb = (perEntry * tradesPerS * (STREAM_RETENTION_MS / 1000)) / 1e6;
    await taped.cleanup();

    // 2. Disk.
    const db = database.db;
    await db.query(sql`vacuum analyze trades`);
    let bytes = 0;
    for (const p of await tradePartitions(db)) bytes += Number((await db.query(sql`select pg_total_relation_size(${p.name}::regclass) as b`))[0].b);
    const count = Number((await db.query(sql`select count(*) as n from trade_prints`))[0].n);
    await db.query(sql`create table plain_trades (series integer not null, at_ms bigint not null, px integer not null, sz double precision not null, k bigint not null)`);
    await db.query(sql`create unique index on plain_trades (series, k)`);
    await db.query(sql`insert into plain_trades select t.series, t.lo + u.off, u.px, u.sz, u.k from trades t cross join lateral unnest(t.off, t.px, t.sz, t.k) u(off, px, sz, k)`);
    await db.query(sql`vacuum analyze plain_trades`);
    const plainBytes = Number((await db.query(sql`select pg_total_relation_size('plain_trades') as b`))[0].b);
    const rows = Number((await db.query(sql`select count(*) as n from trades`))[0].n);

    // 3. A 1,000-trade page over HTTP: an event of markets m0 and m1 (4 tokens), its outcomes in Postgres.
    const ev = eventFixture('bench-event-0', 'Bench', 'Crypto', ['m0?', 'm1?']);
    ev.markets = ev.markets.map((m, i) => ({ ...m, id: `m${i}` }));
    await db.query(sql`insert into events (id, slug, title, category) values ('e0', ${ev.slug}, 'Bench', 'Crypto')`);
    for (const i of [0, 1]) {
      await db.query(sql`insert into markets (id, event_id, condition_id, position, question) values (${`m${i}`}, 'e0', ${conditionOf(i)}, ${i}, ${`m${i}?`})`);
      for (const side of [0, 1]) await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values (${`m${i}`}, ${side}, ${side ? 'No' : 'Yes'}, ${tokenOf(i, side)})`);
    }
    const redis = await createTestRedis('bench_trades_api');
    await writeSnapshot(redis.redis, redis.prefix, `event:${ev.slug}`, { event: ev }, '"ev-1"');
    await writeFeed(redis.redis, redis.prefix, true, Date.now());
    const connection = await apiRedis(redis.url);
    const app = await startApp({ redis: connection, env: { RATE_LIMIT_PER_MINUTE: '100000000', DATABASE_URL: database.url, REDIS_PREFIX: redis.prefix } });
    let page: { rps: number; p99: number };
    let baseline: { rps: number; p99: number };
    let shown = 0;
    try {
      const first = (await (await fetch(`${app.base}/api/v1/markets/${ev.slug}/trades?limit=1000`)).json()) as { trades: unknown[] };
      shown = first.trades.length;
      if (shown !== 1000) throw new Error(`the bench event's page holds ${shown} trades, not 1,000: raise BENCH_TRADES`);
      baseline = await wrk(`${app.base}/api/v1/markets/${ev.slug}`);
      page = await wrk(`${app.base}/api/v1/markets/${ev.slug}/trades?limit=1000`);
    } finally {
      await app.close();
      connection.disconnect();
      await redis.cleanup();
    }

    process.stdout.write(`\nbench:trades — ${fmt(PRINTS)} prints over ${MARKETS * 2} tokens, node ${process.version}; load ${execFileSync('uptime', { encoding: 'utf8' }).trim()}\n`);
    console.table([
      { what: 'feed without the tape (baseline)', 'prints/s': fmt(PRINTS / (bare.ms / 1000)), ms: fmt(bare.ms) },
      { what: 'feed with the tape (recorded, committed)', 'prints/s': fmt(tradesPerS), ms: fmt(taped.ms) },
    ]);
    console.table([
      { what: 'tape (packed rows, partitions, index)', 'bytes/trade': (bytes / count).toFixed(1), trades: fmt(count), rows: fmt(rows) },
      { what: 'plain row + unique index (baseline)', 'bytes/trade': (plainBytes / count).toFixed(1), trades: fmt(count), rows: fmt(count) },
    ]);
    console.table([
      { path: `/markets/{slug} (baseline)`, 'req/s': fmt(baseline.rps), 'p99 ms': baseline.p99.toFixed(2) },
      { path: `/markets/{slug}/trades?limit=1000`, 'req/s': fmt(page.rps), 'p99 ms': page.p99.toFixed(2) },
    ]);
    process.stdout.write(
      `stream: ${fmt(entries)} trade messages in ${fmt(streamBytes)} bytes, ${perEntry.toFixed(0)} bytes an entry; ` +
        `${STREAM_RETENTION_MS / 60_000} min of trade messages at ${fmt(tradesPerS)}/s ≈ ${atRateMb.toFixed(0)} MB\n` +
        `recorded ${fmt(taped.recorded)} of ${fmt(PRINTS)} prints (the rest were repeats by identity)\n`,
    );
    process.stdout.write(
      `bench:trades trades_per_s=${Math.round(tradesPerS)} bytes_per_trade=${(bytes / count).toFixed(1)} trades_p99_ms=${page.p99.toFixed(2)} ` +
        `stream_bytes_per_trade=${perEntry.toFixed(0)} stream_mb_at_rate=${atRateMb.toFixed(0)}\n`,
    );
  } finally {
    await database.drop();
  }
}

await main();
process.exit(0);
