import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDb, sql, type Db } from '../db/index.js';
import { parseMarketFrame, type LastTradeMessage } from '../exchange/market-ws.js';
import { seriesIds } from '../history/write.js';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { ordinals, storedTrade } from './identity.js';
import { readTape, tradeId, type TapePosition } from './read.js';
import { runTradesUpkeep, tradePartitions } from './retention.js';
import { recordTrades, type SeriesTrade } from './write.js';

/**
 * The tape's storage against a real Postgres: each print exactly once whoever writes it and however
 * often (two writers at once, a repeat hours later, a retried batch), identical prints of one message
 * kept apart, pages newest first that a walk crosses without a repeat or a gap while trades arrive,
 * and retention by whole days that leaves when each series' data began.
 */

const DAY = 86_400_000;
const T0 = 20_000 * DAY + 3_600_000; // an hour into a day

let database: TestDatabase;
let second: Db;
let seriesA: number;
let seriesB: number;

beforeAll(async () => {
  database = await createTestDatabase('trades');
  // A second pool: another ingestor, with its own connections.
  second = createDb(database.url, { poolSize: 3 });
});

afterAll(async () => {
  await second?.dispose();
  await database?.drop();
});

beforeEach(async () => {
  await database.db.query(sql`truncate trades, trade_series`);
  const ids = await seriesIds(database.db, ['token-a', 'token-b']);
  seriesA = ids.get('token-a') as number;
  seriesB = ids.get('token-b') as number;
});

/** The prints of one market-channel frame, as the ingestor stores them. */
function framePrints(frame: unknown[], series: Map<string, number>): SeriesTrade[] {
  const parsed = parseMarketFrame(JSON.stringify(frame));
  if (parsed.kind !== 'messages') throw new Error('not a frame');
  const prints = parsed.messages
    .filter((m): m is LastTradeMessage & { trade: NonNullable<LastTradeMessage['trade']> } => m.type === 'last_trade_price' && m.trade !== null)
    .map((m) => ({ assetId: m.assetId, trade: m.trade }));
  const nth = ordinals(prints);
  return prints.map((p, i) => ({ ...storedTrade(p.trade, nth[i] as number), series: series.get(p.assetId) as number }));
}

const print = (asset: string, at: number, price: string, size: string, side: 'BUY' | 'SELL', hash?: string) => ({
  event_type: 'last_trade_price',
  asset_id: asset,
  market: '0xabc',
  price,
  size,
  side,
  fee_rate_bps: '0',
  timestamp: String(at),
  ...(hash === undefined ? {} : { transaction_hash: hash }),
});

async function tape(): Promise<Array<{ series: number; at_ms: number; price: number; size: number; side: string }>> {
  return database.db.query(sql`select series, at_ms, price, size, side from trade_prints order by series, at_ms, price, size, side`);
}

describe('recording', () => {
  it('keeps identical prints of one message apart, and adds nothing when the message comes again', async () => {
    const series = new Map([
      ['token-a', seriesA],
      ['token-b', seriesB],
    ]);
    const frame = [
      print('token-a', T0, '0.52', '10', 'BUY'),
      print('token-a', T0, '0.52', '10', 'BUY'),
      print('token-a', T0, '0.52', '10', 'SELL'),
      print('token-b', T0, '0.48', '10', 'SELL', '0xAB01'),
    ];
    expect(await recordTrades(database.db, framePrints(frame, series))).toHaveLength(4);
    // The same message delivered again (a reconnect; a second ingestor): nothing added.
    expect(await recordTrades(database.db, framePrints(frame, series))).toHaveLength(0);
    // A message with only one of the identical prints is the first of them, already stored.
    expect(await recordTrades(database.db, framePrints([frame[0]], series))).toHaveLength(0);
    expect(await tape()).toEqual([
      { series: seriesA, at_ms: T0, price: 0.52, size: 10, side: 'BUY' },
      { series: seriesA, at_ms: T0, price: 0.52, size: 10, side: 'BUY' },
      { series: seriesA, at_ms: T0, price: 0.52, size: 10, side: 'SELL' },
      { series: seriesB, at_ms: T0, price: 0.48, size: 10, side: 'SELL' },
    ]);
  });

  it('knows a print with a transaction hash again by its hash, hours later, in a batch of new ones', async () => {
    const series = new Map([['token-a', seriesA]]);
    const first = framePrints([print('token-a', T0, '0.5', '3', 'BUY', '0xfeed')], series);
    await recordTrades(database.db, first);
    // Hours of other trades in between, each flush its own row.
    for (let h = 1; h <= 5; h++) await recordTrades(database.db, framePrints([print('token-a', T0 + h * 3_600_000, '0.6', '1', 'SELL', `0x${h}`)], series));
    // The repeat comes with a new print, hours later (a reconnect's replay), its hash in other case.
    const later = framePrints([print('token-a', T0, '0.5', '3', 'BUY', '0xFEED'), print('token-a', T0 + 6 * 3_600_000, '0.7', '2', 'BUY', '0xbeef')], series);
    const added = await recordTrades(database.db, later);
    expect(added.map((t) => t.atMs)).toEqual([T0 + 6 * 3_600_000]);
    expect((await tape()).filter((t) => t.at_ms === T0)).toHaveLength(1);
  });

  it('records each print once when two writers store overlapping batches at the same time', async () => {
    const series = new Map([
      ['token-a', seriesA],
      ['token-b', seriesB],
    ]);
    // 40 messages of 5 prints each over two tokens; the writers take overlapping halves, racing.
    const frames = Array.from({ length: 40 }, (_, f) =>
      Array.from({ length: 5 }, (_, i) => print(i % 2 === 0 ? 'token-a' : 'token-b', T0 + f * 100 + i, '0.5', String(1 + (f % 3)), i % 3 === 0 ? 'SELL' : 'BUY', f % 2 === 0 ? `0x${f}-${i}` : undefined)),
    );
    const batches = frames.map((frame) => framePrints(frame, series));
    // Each message reaches both writers at once (a handover: both hold the market for a moment).
    const results = await Promise.all(batches.flatMap((b) => [recordTrades(database.db, b), recordTrades(second, b)]));
    const added = results.reduce((n, r) => n + r.length, 0);
    expect(added).toBe(200);
    expect(await tape()).toHaveLength(200);
    // A retried write of everything adds nothing.
    expect(await recordTrades(second, batches.flat())).toHaveLength(0);
    expect(await tape()).toHaveLength(200);
  });

  it('notes when each series\' data begins, never later, and keeps it past retention', async () => {
    const series = new Map([['token-a', seriesA]]);
    await recordTrades(database.db, framePrints([print('token-a', T0, '0.5', '1', 'BUY', '0x1')], series));
    await recordTrades(database.db, framePrints([print('token-a', T0 + 2 * DAY, '0.5', '1', 'BUY', '0x2')], series));
    const first = async () => (await database.db.query(sql`select first_ms from trade_series where series = ${seriesA}`))[0]?.first_ms as number;
    expect(await first()).toBe(T0);
    // An older print found later (a replayed recording) moves it earlier.
    await recordTrades(database.db, framePrints([print('token-a', T0 - DAY, '0.5', '1', 'BUY', '0x0')], series));
    expect(await first()).toBe(T0 - DAY);

    // Retention of 2 days at T0 + 2 days: the partitions of T0 − 1 day and T0 go whole, the last stays.
    const dropped = await runTradesUpkeep(database.db, { nowMs: T0 + 2 * DAY, retentionDays: 2 });
    expect(dropped).toEqual([`trades_d${20_000 - 1}`]);
    const dropped2 = await runTradesUpkeep(database.db, { nowMs: T0 + 3 * DAY, retentionDays: 2 });
    expect(dropped2).toEqual([`trades_d${20_000}`]);
    expect((await tape()).map((t) => t.at_ms)).toEqual([T0 + 2 * DAY]);
    expect(await first()).toBe(T0 - DAY);
    // Made ahead: tomorrow and the day after are there before any print of them.
    expect((await tradePartitions(database.db)).map((p) => p.day)).toEqual(expect.arrayContaining([20_003, 20_004, 20_005]));
  });

  it('stores a skipped print nowhere: a frame without size or side is not a trade', () => {
    const parsed = parseMarketFrame(JSON.stringify([{ ...print('token-a', T0, '0.5', '', 'BUY') }, { ...print('token-a', T0, '0.5', '2', 'BUY'), side: 'HOLD' }]));
    expect(parsed.kind === 'messages' && parsed.messages.map((m) => (m as LastTradeMessage).trade)).toEqual([null, null]);
  });
});

describe('pages', () => {
  /** `n` prints of series `s`, one every `gap` ms from `at`, each its own transaction hash. */
  const run = (s: number, at: number, n: number, gap: number, tag: string): SeriesTrade[] =>
    Array.from({ length: n }, (_, i) => ({ ...storedTrade({ price: '0.5', size: String(1 + i), side: 'BUY', timestamp: at + i * gap, transactionHash: `0x${tag}${i}`, feeRateBps: null }, 0), series: s }));

  it('walks newest first with cursors, neither repeating nor skipping while trades arrive', async () => {
    // Present before the walk: 300 prints over two series, some at the same millisecond.
    const before = [...run(seriesA, T0, 150, 1_000, 'a'), ...run(seriesB, T0, 150, 1_000, 'b')];
    for (let i = 0; i < before.length; i += 37) await recordTrades(database.db, before.slice(i, i + 37));
    const query = { series: [seriesA, seriesB], fromMs: T0 - DAY, toMs: T0 + DAY };
    const seen: string[] = [];
    let after: TapePosition | undefined;
    let page = 0;
    for (;;) {
      const rows = await readTape(database.db, { ...query, after, limit: 40 });
      for (const r of rows) seen.push(tradeId(r));
      // Meanwhile, new prints: newer than the walk, and late ones inside the span already walked.
      await recordTrades(database.db, run(seriesA, T0 + 200_000 + page * 10_000, 5, 1, `n${page}`));
      await recordTrades(database.db, run(seriesB, T0 + 140_000 + page, 1, 1, `late${page}`));
      page++;
      if (rows.length < 40) break;
      const last = rows[rows.length - 1] as TapePosition;
      after = { series: last.series, atMs: last.atMs, key: last.key };
    }
    expect(new Set(seen).size).toBe(seen.length);
    const expected = before.map((t) => tradeId({ series: t.series, atMs: t.atMs, key: t.key }));
    expect(seen.filter((id) => expected.includes(id)).sort()).toEqual([...expected].sort());
    // Newest first throughout the walk.
    const times = seen.map((id) => Buffer.from(id, 'base64url').readBigInt64BE(4));
    expect(times.every((t, i) => i === 0 || t <= (times[i - 1] as bigint))).toBe(true);
  });

  it('reaches back past quiet spells and stops at the window\'s start', async () => {
    await recordTrades(database.db, [...run(seriesA, T0 - 20 * 3_600_000, 3, 1, 'old'), ...run(seriesA, T0, 2, 1, 'new')]);
    const all = await readTape(database.db, { series: [seriesA], fromMs: T0 - DAY, toMs: T0 + 1_000, limit: 10 });
    expect(all.map((t) => t.atMs)).toEqual([T0 + 1, T0, T0 - 20 * 3_600_000 + 2, T0 - 20 * 3_600_000 + 1, T0 - 20 * 3_600_000]);
    const windowed = await readTape(database.db, { series: [seriesA], fromMs: T0 - 20 * 3_600_000 + 1, toMs: T0 + 1, limit: 10 });
    expect(windowed.map((t) => t.atMs)).toEqual([T0, T0 - 20 * 3_600_000 + 2, T0 - 20 * 3_600_000 + 1]);
  });
});
