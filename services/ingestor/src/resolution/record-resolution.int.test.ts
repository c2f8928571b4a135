import { beforeEach, describe, expect, it, vi } from 'vitest';
import { sql } from '@pm/shared/db';
import { useHarness } from '../testing/harness.js';
import { gammaEvent, waitFor } from '../testing/fake-exchange.js';
import type { Ingestor } from '../ingestor.js';
import { createLogger } from '@pm/shared/logger';
import { until } from '@pm/shared/wait';
import { createResolutionRecorder } from './record-resolution.js';

const tok = (n: number) => `2000000000000000000000000000000000000000000000000000000000000000000000${String(n).padStart(3, '0')}`;

const h = useHarness('ingestor_settle');
let ingestor: Ingestor;

// Each test: e1's three open markets alone, nothing resolved, and a new ingestor with its market socket open.
beforeEach(async () => {
  h.fake.events.push(
    gammaEvent('e1', [
      { id: 'm1', tokens: [tok(1), tok(2)] },
      { id: 'm2', tokens: [tok(3), tok(4)] },
      { id: 'm3', tokens: [tok(5), tok(6)] },
    ]),
  );
  ingestor = h.ingestor();
  await ingestor.start();
  await waitFor(() => h.fake.marketSockets.length > 0, 3000, 'market socket');
});

/** `market_resolved` messages the ingestor has read (their resolutions are then pending writes, which `flush` waits for). */
const resolvedMessages = () => ingestor.stats().market.messages.market_resolved ?? 0;

/**
 * A resolution is recorded with its `market-resolved` outbox row in one statement; the worker's relay
 * makes the settle job from it. So "exactly one job" is "exactly one outbox row per market", held
 * by Postgres rather than by a set in the ingestor's memory.
 */
const owed = async (marketId?: string): Promise<Array<{ marketId: string; eventId: string }>> => {
  const rows: Array<{ payload: { marketId: string; eventId: string } }> = await h.database.db.query(
    sql`select payload from outbox where topic = 'market-resolved' order by id`,
  );
  return rows.map((r) => r.payload).filter((p) => marketId === undefined || p.marketId === marketId);
};

describe('settlement owed through the outbox', () => {
  it('a ws resolution and the catalog confirming it owe exactly one settlement', async () => {
    h.fake.broadcastMarket({ event_type: 'market_resolved', id: 'm1', market: '0xm1', assets_ids: [tok(1), tok(2)], winning_asset_id: tok(2), winning_outcome: 'No', timestamp: '100' });
    await waitFor(async () => ((await owed('m1')).length > 0 ? true : undefined), 3000, 'market-resolved row');

    // The catalog now shows the same market closed with final prices; and the ws repeats itself.
    const ev = h.fake.events[0]!;
    const markets = ev.markets as Array<Record<string, unknown>>;
    Object.assign(markets[0]!, { closed: true, outcomePrices: '["0","1"]', umaResolutionStatus: 'resolved' });
    await ingestor.syncCatalog();
    const seen = resolvedMessages();
    h.fake.broadcastMarket({ event_type: 'market_resolved', id: 'm1', market: '0xm1', assets_ids: [tok(1), tok(2)], winning_asset_id: tok(2), winning_outcome: 'No', timestamp: '101' });
    await waitFor(() => resolvedMessages() > seen, 3000, 'the repeated market_resolved read');
    await ingestor.flush();

    expect(await owed('m1')).toEqual([{ marketId: 'm1', eventId: 'e1' }]);
    const log = await h.database.db.query(sql`select market_id, winning_outcome_index, voided, source from market_resolutions`);
    expect(log).toEqual([{ market_id: 'm1', winning_outcome_index: 1, voided: false, source: 'ws' }]);
    const [m] = await h.database.db.query(sql`select closed, resolved_outcome_index, voided, resolved_at from markets where id = 'm1'`);
    expect(m).toMatchObject({ closed: true, resolved_outcome_index: 1, voided: false });
    expect(m.resolved_at).toBeInstanceOf(Date);
  });

  it('the catalog alone resolves a market (winner) and voids one resolved without a winner', async () => {
    const markets = h.fake.events[0]!.markets as Array<Record<string, unknown>>;
    Object.assign(markets[1]!, { closed: true, outcomePrices: '["1","0"]' });
    Object.assign(markets[2]!, { closed: true, outcomePrices: '["0.5","0.5"]', umaResolutionStatus: 'resolved' });
    await ingestor.syncCatalog();
    await ingestor.syncCatalog();
    expect([...(await owed('m2')), ...(await owed('m3'))].map((p) => p.marketId)).toEqual(['m2', 'm3']);
    const log = await h.database.db.query(sql`select market_id, winning_outcome_index, voided from market_resolutions where market_id in ('m2', 'm3') order by market_id`);
    expect(log).toEqual([
      { market_id: 'm2', winning_outcome_index: 0, voided: false },
      { market_id: 'm3', winning_outcome_index: null, voided: true },
    ]);
    const [m3] = await h.database.db.query(sql`select closed, resolved_outcome_index, voided from markets where id = 'm3'`);
    expect(m3).toEqual({ closed: true, resolved_outcome_index: null, voided: true });
  });

  it('the catalog first, then the ws repeating it twice, and a new ingestor process, still owe exactly one settlement', async () => {
    // m11 stays open, so the ingestor keeps a market socket to hear the ws repeats on.
    h.fake.events.push(gammaEvent('e10', [{ id: 'm10', tokens: [tok(11), tok(12)] }, { id: 'm11', tokens: [tok(13), tok(14)] }]));
    await ingestor.syncCatalog();
    await waitFor(() => ingestor.stats().market.sockets.open > 0, 3000, 'a market socket for e10');
    const markets = h.fake.events.find((e) => e.id === 'e10')!.markets as Array<Record<string, unknown>>;
    Object.assign(markets[0]!, { closed: true, outcomePrices: '["1","0"]', umaResolutionStatus: 'resolved' });
    await ingestor.syncCatalog();
    const resolved = { event_type: 'market_resolved', id: 'm10', market: '0xm10', assets_ids: [tok(11), tok(12)], winning_asset_id: tok(11), winning_outcome: 'Yes' };
    const seen = resolvedMessages();
    h.fake.broadcastMarket({ ...resolved, timestamp: '200' });
    h.fake.broadcastMarket([{ ...resolved, timestamp: '201' }]);
    await ingestor.syncCatalog();
    // A restarted ingestor remembers nothing; the catalog still lists the market closed.
    const second = h.ingestor();
    await second.syncCatalog();
    await waitFor(() => resolvedMessages() >= seen + 2, 3000, 'both repeats read');
    await ingestor.flush();
    expect(await owed('m10')).toEqual([{ marketId: 'm10', eventId: 'e10' }]);
    const log = await h.database.db.query(sql`select winning_outcome_index, source from market_resolutions where market_id = 'm10'`);
    expect(log).toEqual([{ winning_outcome_index: 0, source: 'catalog' }]);
  });

  it('a closed market awaiting resolution owes no settlement', async () => {
    h.fake.events.push(gammaEvent('e9', [{ id: 'm9', tokens: [tok(9), tok(10)], closed: true, prices: ['0.97', '0.03'], uma: 'proposed' }]));
    await ingestor.syncCatalog();
    expect(await owed('m9')).toEqual([]);
  });
});

describe('closing chances', () => {
  const book = (asset: string, bid: string, ask: string, ts: number) => ({
    event_type: 'book', asset_id: asset, market: '0xm', bids: [{ price: bid, size: '100' }], asks: [{ price: ask, size: '100' }], timestamp: String(ts), hash: `h${ts}`,
  });
  const closing = async (marketId: string): Promise<Array<string | null> | null> => {
    const [row] = await h.database.db.query(sql`select closing_chances::text[] as c from markets where id = ${marketId}`);
    return (row as { c: Array<string | null> | null }).c;
  };
  const live = async (token: string) => h.redis.redis.hget(h.keys.chances, token);

  it('a resolution records the chances the market displayed, once: later books and a repeated resolution leave them', async () => {
    h.fake.broadcastMarket([book(tok(3), '0.40', '0.44', 1), book(tok(4), '0.56', '0.60', 1)]);
    await waitFor(async () => ((await live(tok(3))) === '0.42' && (await live(tok(4))) === '0.58' ? true : undefined), 3000, 'the live chances');
    expect(await closing('m2')).toBeNull();

    h.fake.broadcastMarket({ event_type: 'market_resolved', id: 'm2', market: '0xm2', assets_ids: [tok(3), tok(4)], winning_asset_id: tok(3), winning_outcome: 'Yes', timestamp: '200' });
    await waitFor(async () => ((await owed('m2')).length > 0 ? true : undefined), 3000, 'market-resolved row');
    expect((await closing('m2'))?.map(Number)).toEqual([0.42, 0.58]);

    // The book lingers and moves; the catalog confirms with final prices: the closing chances stay.
    h.fake.broadcastMarket([book(tok(3), '0.97', '0.99', 2)]);
    await waitFor(async () => ((await live(tok(3))) === '0.98' ? true : undefined), 3000, 'the moved chance');
    const markets = h.fake.events[0]!.markets as Array<Record<string, unknown>>;
    Object.assign(markets[1]!, { closed: true, outcomePrices: '["1","0"]', umaResolutionStatus: 'resolved' });
    await ingestor.syncCatalog();
    await ingestor.flush();
    expect((await closing('m2'))?.map(Number)).toEqual([0.42, 0.58]);
    // An open market has none.
    expect(await closing('m1')).toBeNull();
  });

  it('a market the catalog closes before any resolution records its chances then; an outcome never priced falls back to the catalog price', async () => {
    h.fake.broadcastMarket([book(tok(5), '0.20', '0.24', 3)]);
    await waitFor(async () => ((await live(tok(5))) === '0.22' ? true : undefined), 3000, 'the live chance');
    await h.redis.redis.hdel(h.keys.chances, tok(6));
    const markets = h.fake.events[0]!.markets as Array<Record<string, unknown>>;
    Object.assign(markets[2]!, { closed: true, outcomePrices: '["0.3","0.7"]' });
    await ingestor.syncCatalog();
    expect((await closing('m3'))?.map(Number)).toEqual([0.22, 0.7]);

    // Its resolution later keeps what it closed at.
    h.fake.broadcastMarket({ event_type: 'market_resolved', id: 'm3', market: '0xm3', assets_ids: [tok(5), tok(6)], winning_asset_id: tok(6), winning_outcome: 'No', timestamp: '300' });
    await waitFor(async () => ((await owed('m3')).length > 0 ? true : undefined), 3000, 'market-resolved row');
    expect((await closing('m3'))?.map(Number)).toEqual([0.22, 0.7]);
  });
});

describe('a resolution beside a catalog page writing the same event', () => {
  it('waits for the page and records the resolution; neither transaction is failed as a deadlock', async () => {
    const { db } = h.database;
    // m1 is e1's last open market: resolving it closes the event, which updates the event's row (closed_at).
    await db.query(sql`update markets set closed = true where id in ('m2', 'm3')`);
    const logger = createLogger('test', { LOG_LEVEL: 'silent' });
    const warn = vi.spyOn(logger, 'warn');
    const recorder = createResolutionRecorder({ db, logger });
    let resolved: Promise<boolean> | undefined;
    // A catalog page's order (catalog-db.ts): its events' rows first, then their markets'.
    await db.tx(async (tx) => {
      await tx.query(sql`update events set updated_at = now() where id = 'e1'`);
      resolved = recorder.resolve({ marketId: 'm1', winningOutcomeIndex: 0, voided: false, source: 'ws' });
      // The resolution's transaction is now waiting on a row this page holds.
      await until('the resolution to wait on a lock', async () => {
        const rows = await db.query(sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
        return rows.length > 0;
      }, { timeoutMs: 5000, everyMs: 10 });
      await tx.query(sql`update markets set updated_at = now() where id = 'm1'`);
    });
    expect(await resolved).toBe(true);
    // Not failed and retried either: the retry is for a conflict this order no longer makes.
    expect(warn).not.toHaveBeenCalled();
    expect(await owed('m1')).toEqual([{ marketId: 'm1', eventId: 'e1' }]);
    const [e] = await db.query(sql`select closed_at from events where id = 'e1'`);
    expect(e.closed_at).toBeInstanceOf(Date);
  });
});
