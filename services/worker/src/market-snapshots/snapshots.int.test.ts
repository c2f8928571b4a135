import { z } from 'zod';
import { beforeEach, describe, expect, it } from 'vitest';
import { CATALOG_RELOAD_ALL, redisKeys } from '@pm/shared/redis';
import { sql } from '@pm/shared/db';
import { type TestDatabase, type TestRedisPrefix } from '@pm/shared/testing';
import { eventually } from '@pm/shared/wait';
import { useFreshStores } from '../testing/stores.js';
import { builderSource } from '../testing/builder-source.js';
import { createSnapshotBuilder, type BuildStats, type SnapshotBuilder } from './builder.js';
import {
  eventSnapshotSchema,
  insertFixture,
  listSnapshotSchema,
  readSnapshot,
  readStored,
  scanSnapshots,
  searchSnapshotSchema,
  token,
  WEB_URL,
} from './test-fixture.js';

let tdb: TestDatabase;
let tr: TestRedisPrefix;
let builder: SnapshotBuilder;
let now: number;

const stores = useFreshStores('worker_snapshots');
const rankingSchema = z.object({ version: z.number(), events: z.array(z.tuple([z.string(), z.string(), z.string().nullable()])) });
/** An outcome with no live quotes (the catalog price, or no quotes in Redis). */
const NO_QUOTES = { best_bid: null, best_ask: null, spread: null, last_trade_price: null, closing_chance: null };

// Each test: the fixture catalog alone in Postgres, an empty Redis prefix, a builder with no cache.
beforeEach(async () => {
  now = 1_700_000_000_000;
  ({ tdb, tr } = stores);
  await insertFixture(tdb.db, tr.redis, tr.prefix);
  builder = createSnapshotBuilder({
    ...builderSource(tdb, tr, () => now),
    // Full builds only when a test asks: the incremental path is what these tests exercise.
    fullEveryMs: 3_600_000,
  });
});

const event = (slug: string) => readSnapshot(tr.redis, tr.prefix, `event:${slug}`, eventSnapshotSchema).then((s) => s.event);
const list = (name: Parameters<typeof readSnapshot>[2]) => readSnapshot(tr.redis, tr.prefix, name, listSnapshotSchema);
const dirty = (...ids: string[]) => tr.redis.sadd(redisKeys(tr.prefix).dirtyEvents, ...ids);
/** What SnapshotTrigger.markCatalogChanged(ids) writes: the ids marked, for a re-read of their rows (none: all), and the version bumped. */
const catalogChanged = async (...ids: string[]) => {
  const keys = redisKeys(tr.prefix);
  const tx = tr.redis.multi();
  if (ids.length > 0) tx.sadd(keys.dirtyEvents, ...ids).sadd(keys.catalogDirtyEvents, ...ids);
  else tx.sadd(keys.catalogDirtyEvents, CATALOG_RELOAD_ALL);
  await tx.incr(keys.catalogVersion).exec();
};

describe('a full build of the test catalog', () => {
  let stats: BuildStats;
  beforeEach(async () => {
    stats = await builder.build({ full: true });
  });

  it('writes one snapshot per open event, the lists and search', async () => {
    // 3 open events; trending + 7 categories + 2 leagues (epl, btc) + search; and the first ranking.
    expect(stats).toMatchObject({ events: 3, lists: 12, written: 16, full: true });
    const names = [...(await scanSnapshots(tr.redis, tr.prefix)).keys()].sort();
    expect(names).toEqual([
      'event:ars-che',
      'event:btc-100k',
      'event:us-election',
      'live',
      'markets:category:Crypto',
      'markets:category:Culture',
      'markets:category:Economy',
      'markets:category:Football',
      'markets:category:Politics',
      'markets:category:Sport',
      'markets:category:Tech',
      'markets:league:btc',
      'markets:league:epl',
      'markets:ranking:1',
      'markets:search',
      'markets:trending',
    ]);
  });

  it('records the ranking the lists were cut from, and a new one (the old kept 20 minutes) when the order changes', async () => {
    const keys = redisKeys(tr.prefix);
    const first = await readSnapshot(tr.redis, tr.prefix, 'markets:ranking:1', rankingSchema);
    expect(first.events.map(([slug]) => slug)).toEqual((await list('markets:trending')).events.map((e) => e.slug));
    expect((await list('markets:trending')).ranking).toBe(1);
    // A price move that does not reorder keeps the version.
    await tr.redis.hset(keys.chances, token('m1', 0), '0.33');
    await dirty('e-soccer');
    await builder.build();
    expect((await list('markets:trending')).ranking).toBe(1);
    // Volumes that reorder the list make version 2; version 1 gets its TTL.
    await tdb.db.query(sql`update events set volume_24h = 0 where id = 'e-btc'`);
    await catalogChanged('e-btc');
    await builder.build();
    expect((await list('markets:trending')).ranking).toBe(2);
    expect((await readSnapshot(tr.redis, tr.prefix, 'markets:ranking:2', rankingSchema)).events.at(-1)?.[0]).toBe('btc-100k');
    const ttl = await tr.redis.ttl(keys.snapshot('markets:ranking:1'));
    expect(ttl).toBeGreaterThan(15 * 60);
    expect(ttl).toBeLessThanOrEqual(20 * 60);
  });

  it('event: every market in position order, with odds, splits and the game', async () => {
    const e = await event('ars-che');
    expect(e).toMatchObject({
      slug: 'ars-che',
      title: 'Arsenal vs Chelsea',
      category: 'Football',
      closes_at: '2030-05-01T19:00:00.000Z',
      volume: 12000.5,
      market_count: 5,
      url: `${WEB_URL}/e/ars-che`,
    });
    expect(e.markets.map((m) => m.id)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    const [m1, m2, m3, m4, m5] = e.markets;
    expect(m1).toEqual({
      id: 'm1',
      question: 'Will Arsenal win?',
      label: 'Arsenal',
      kind: 'moneyline',
      outcomes: [
        { name: 'Yes', chance: 0.25, odds: { percent: '25%', decimal: '4.00', fractional: '3/1', american: '+300', price: '25¢' }, ...NO_QUOTES },
        { name: 'No', chance: 0.75, odds: { percent: '75%', decimal: '1.33', fractional: '1/3', american: '-300', price: '75¢' }, ...NO_QUOTES },
      ],
      platform_split: [3, 1],
      closes_at: '2030-05-01T21:00:00.000Z',
      closed: false,
      resolved_outcome: null,
      resolved_at: null,
      settling: null,
      change_24h: 0.05,
      url: `${WEB_URL}/m/m1`,
    });
    // Resolved market: chance 1 and 0, the odds of a certainty (no payout invented for 0).
    expect(m2?.closed).toBe(true);
    expect(m2?.outcomes.map((o) => [o.chance, o.odds.percent, o.odds.decimal, o.odds.price])).toEqual([
      [1, '100%', '1.00', '100¢'],
      [0, '0%', null, '0¢'],
    ]);
    // No live chance: the catalog price.
    expect(m3?.outcomes.map((o) => o.chance)).toEqual([0.3, 0.7]);
    expect(m3?.platform_split).toEqual([]);
    expect(m3?.change_24h).toBe(0);
    expect(m4?.outcomes.map((o) => o.chance)).toEqual([0.44, 0.56]);
    expect(m4?.change_24h).toBe(-0.02);
    expect(m5?.kind).toBe('totals');
    expect(e.game).toEqual({
      live: true,
      score: '1-0',
      clock: '23',
      period: '1H',
      league: 'epl',
      teams: [
        { name: 'Arsenal', abbreviation: 'ARS', home: true },
        { name: 'Chelsea', abbreviation: 'CHE', home: false },
      ],
    });
  });

  it('event without a game: game null, label falls back to the question, kind null', async () => {
    const e = await event('btc-100k');
    expect(e.game).toBeNull();
    expect(e.markets[0]).toMatchObject({ label: 'Bitcoin above 100k on Friday?', kind: null, change_24h: 0.1 });
    const pol = await event('us-election');
    expect(pol.markets.map((m) => m.question)).toEqual([
      'Will the House flip?',
      'Will the Senate flip?',
      'Will a third party win a seat?',
      'Will turnout exceed 70 percent?',
    ]);
  });

  it('trending: open events busiest first (ties by slug), at most three open markets per card', async () => {
    const trending = await list('markets:trending');
    expect(trending.categories).toEqual(['Sport', 'Football', 'Crypto', 'Politics', 'Economy', 'Tech', 'Culture']);
    expect(trending.events.map((e) => e.slug)).toEqual(['btc-100k', 'ars-che', 'us-election']);
    const soccer = trending.events[1];
    // m2 is closed: the card skips it and shows the next open one.
    expect(soccer?.markets.map((m) => m.id)).toEqual(['m1', 'm3', 'm4']);
    expect(soccer?.market_count).toBe(5);
    expect(soccer?.markets[0]).toEqual({
      id: 'm1',
      question: 'Will Arsenal win?',
      outcomes: [
        { name: 'Yes', chance: 0.25, odds: { percent: '25%', decimal: '4.00', fractional: '3/1', american: '+300', price: '25¢' } },
        { name: 'No', chance: 0.75, odds: { percent: '75%', decimal: '1.33', fractional: '1/3', american: '-300', price: '75¢' } },
      ],
    });
    expect(trending.events[2]?.markets).toHaveLength(3);
    expect(trending.events[2]?.market_count).toBe(4);
    expect(trending.leagues).toEqual([
      { group: 'Football', label: 'EPL', league: 'epl' },
      { group: 'Crypto', label: 'Bitcoin', league: 'btc' },
    ]);
  });

  it('category and league lists hold only their events; empty categories exist', async () => {
    expect((await list('markets:category:Football')).events.map((e) => e.slug)).toEqual(['ars-che']);
    expect((await list('markets:category:Politics')).events.map((e) => e.slug)).toEqual(['us-election']);
    expect((await list('markets:category:Tech')).events).toEqual([]);
    expect((await list('markets:league:epl')).events.map((e) => e.slug)).toEqual(['ars-che']);
    expect((await list('markets:league:btc')).events.map((e) => e.slug)).toEqual(['btc-100k']);
  });

  it('search: every open event with the lower-cased title and all questions', async () => {
    const search = await readSnapshot(tr.redis, tr.prefix, 'markets:search', searchSnapshotSchema);
    expect(search.entries.map((e) => e.card.slug)).toEqual(['btc-100k', 'ars-che', 'us-election']);
    const pol = search.entries[2];
    expect(pol?.text).toContain('will turnout exceed 70 percent?');
    expect(pol?.text.startsWith('us midterms\n')).toBe(true);
    expect(pol).toMatchObject({ category: 'Politics', league: null });
    expect(search.entries[1]).toMatchObject({ category: 'Football', league: 'epl' });
  });
});

describe('the market index behind /api/v1/markets/by-id', () => {
  it('maps every market of every built event to its event slug, and is written again after Redis lost it', async () => {
    await builder.build({ full: true });
    const key = redisKeys(tr.prefix).marketEvents;
    const index = await tr.redis.hgetall(key);
    expect(index).toMatchObject({ m1: 'ars-che', m2: 'ars-che', m20: 'us-election' });
    for (const [marketId, slug] of Object.entries(index)) expect((await event(slug)).markets.map((m) => m.id)).toContain(marketId);
    await tr.redis.del(key);
    await builder.build({ full: true });
    expect(await tr.redis.hget(key, 'm1')).toBe('ars-che');
  });
});

describe('incremental builds', () => {
  // Each starts from a full build of the fixture.
  beforeEach(async () => {
    await builder.build({ full: true });
  });

  it('nothing changed: no snapshot is rewritten and every etag stays', async () => {
    const before = await scanSnapshots(tr.redis, tr.prefix);
    now += 1000;
    const stats = await builder.build();
    expect(stats.written).toBe(0);
    const after = await scanSnapshots(tr.redis, tr.prefix);
    expect(after).toEqual(before); // same etag and same built_at everywhere
  });

  it('a chance moves: that event and the lists showing it change etag, the others do not', async () => {
    const [soccerBefore, cryptoBefore, trendingBefore, polBefore] = await Promise.all(
      (['event:ars-che', 'markets:category:Crypto', 'markets:trending', 'event:us-election'] as const).map((n) => readStored(tr.redis, tr.prefix, n)),
    );
    await tr.redis.hset(redisKeys(tr.prefix).chances, token('m1', 0), '0.4');
    await dirty('e-soccer');
    now += 1000;
    const stats = await builder.build();
    expect(stats.full).toBe(false);
    expect(stats.events).toBe(1);
    const soccer = await readStored(tr.redis, tr.prefix, 'event:ars-che');
    expect(soccer?.etag).not.toBe(soccerBefore?.etag);
    expect(soccer?.builtAt).toBe(now);
    expect((await event('ars-che')).markets[0]?.outcomes[0]).toMatchObject({ chance: 0.4, odds: { percent: '40%', decimal: '2.50' } });
    expect((await readStored(tr.redis, tr.prefix, 'markets:trending'))?.etag).not.toBe(trendingBefore?.etag);
    expect((await list('markets:trending')).events[1]?.markets[0]?.outcomes[0]?.chance).toBe(0.4);
    expect(await readStored(tr.redis, tr.prefix, 'markets:category:Crypto')).toEqual(cryptoBefore);
    expect(await readStored(tr.redis, tr.prefix, 'event:us-election')).toEqual(polBefore);
    expect(await tr.redis.scard(redisKeys(tr.prefix).dirtyEvents)).toBe(0);
  });

  it('a chance that moves and moves back: the lists, built from kept cards, come back to their first bodies', async () => {
    const names = ['markets:trending', 'markets:search', 'markets:league:epl'] as const;
    const before = await Promise.all(names.map((n) => readStored(tr.redis, tr.prefix, n)));
    for (const chance of ['0.4', '0.25']) {
      await tr.redis.hset(redisKeys(tr.prefix).chances, token('m1', 0), chance);
      await dirty('e-soccer');
      now += 1000;
      const stats = await builder.build();
      expect(stats.full).toBe(false);
      const after = await Promise.all(names.map((n) => readStored(tr.redis, tr.prefix, n)));
      after.forEach((stored, i) => {
        expect(stored?.builtAt).toBe(now); // rewritten both times
        if (chance === '0.25') expect(stored?.body).toBe(before[i]?.body);
        else expect(stored?.etag).not.toBe(before[i]?.etag);
      });
    }
    expect((await list('markets:trending')).events[1]?.markets[0]?.outcomes[0]?.chance).toBe(0.25);
  });

  it('a moved chance shows on its event page while the build still waits for Postgres', async () => {
    // Hold the games table: the build's Postgres refresh (the games probe) waits until released.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = tdb.db.tx(async (tx) => {
      await tx.query(sql`lock table games in access exclusive mode`);
      locked();
      await released;
    });
    try {
      await isLocked;
      await tr.redis.hset(redisKeys(tr.prefix).chances, token('m1', 0), '0.37');
      await dirty('e-soccer');
      now += 1000;
      const building = builder.build();
      const shown = await eventually(async () => (await event('ars-che')).markets[0]?.outcomes[0]?.chance, (c) => c === 0.37, { timeoutMs: 5_000, everyMs: 10 });
      expect(shown).toBe(0.37);
      // The lists wait for the rest of the build.
      expect((await list('markets:trending')).events[1]?.markets[0]?.outcomes[0]?.chance).not.toBe(0.37);
      release();
      await building;
      expect((await list('markets:trending')).events[1]?.markets[0]?.outcomes[0]?.chance).toBe(0.37);
    } finally {
      release();
      await holder;
    }
  });

  it('a price-only build reuses the cached catalog; a catalog version bump reloads it', async () => {
    await tdb.db.query(sql`update events set title = 'Arsenal v Chelsea (renamed)' where id = 'e-soccer'`);
    await dirty('e-soccer');
    await builder.build();
    expect((await event('ars-che')).title).toBe('Arsenal vs Chelsea');
    await tr.redis.incr(redisKeys(tr.prefix).catalogVersion);
    const stats = await builder.build();
    expect(stats.events).toBe(1); // a reload rebuilds the events whose rows changed (unmarked), not every open one
    expect((await event('ars-che')).title).toBe('Arsenal v Chelsea (renamed)');
    expect((await list('markets:trending')).events[1]?.title).toBe('Arsenal v Chelsea (renamed)');
  });

  it('after a reload, an event new to the catalog gets its page, its markets in the by-id index and its card; the others keep theirs', async () => {
    const before = await scanSnapshots(tr.redis, tr.prefix);
    await tdb.db.query(sql`
      insert into events (id, slug, title, category, league, closes_at, volume, volume_24h, closed, teams)
      values ('e-new', 'eth-10k', 'ETH above 10k?', 'Crypto', null, ${new Date('2030-05-01T19:00:00Z')}, 5e9, 1e6, false, '[]'::jsonb)
    `);
    await tdb.db.query(sql`
      insert into markets (id, event_id, condition_id, position, question, label, kind, closes_at, closed)
      values ('m99', 'e-new', '0xm99', 0, 'ETH above 10k?', 'ETH', null, ${new Date('2030-05-01T21:00:00Z')}, false)
    `);
    await tdb.db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id, catalog_price) values ('m99', 0, 'Yes', ${token('m99', 0)}, 0.2), ('m99', 1, 'No', ${token('m99', 1)}, 0.8)`);
    await tr.redis.incr(redisKeys(tr.prefix).catalogVersion);
    now += 1000;
    const stats = await builder.build();
    expect(stats.events).toBe(1);
    expect((await event('eth-10k')).markets.map((m) => m.id)).toEqual(['m99']);
    expect(await tr.redis.hget(redisKeys(tr.prefix).marketEvents, 'm99')).toBe('eth-10k');
    expect((await list('markets:trending')).events[0]?.slug).toBe('eth-10k'); // the busiest
    const after = await scanSnapshots(tr.redis, tr.prefix);
    for (const name of ['event:ars-che', 'event:btc-100k', 'event:us-election']) {
      expect(before.get(name)?.etag, name).toBeTruthy();
      expect(after.get(name), name).toEqual(before.get(name)); // same etag and built_at: not rewritten
    }
  });

  it('a game update is picked up without a catalog bump or a dirty mark', async () => {
    await tdb.db.query(sql`update games set score = '2-0', clock = '61', period = '2H', updated_at = now() where game_id = 'g1'`);
    const stats = await builder.build();
    expect(stats.events).toBe(1);
    expect((await event('ars-che')).game).toMatchObject({ score: '2-0', clock: '61', period: '2H', live: true });
  });

  it('platform splits of a dirty event are re-read', async () => {
    await tdb.db.query(sql`insert into market_splits (market_id, outcome_index, people) values ('m3', 1, 2)`);
    await dirty('e-soccer');
    await builder.build();
    const e = await event('ars-che');
    expect(e.markets[2]?.platform_split).toEqual([0, 2]);
    expect(e.markets[0]?.platform_split).toEqual([3, 1]);
  });

  it('a catalog change that names its events re-reads only their rows; one that names none re-reads all', async () => {
    await tdb.db.query(sql`update events set title = title || ' (renamed)' where id in ('e-soccer', 'e-btc')`);
    await catalogChanged('e-soccer');
    now += 1000;
    expect((await builder.build()).events).toBe(1);
    expect((await event('ars-che')).title).toBe('Arsenal vs Chelsea (renamed)');
    expect((await list('markets:trending')).events.find((e) => e.slug === 'ars-che')?.title).toBe('Arsenal vs Chelsea (renamed)');
    expect((await event('btc-100k')).title).not.toContain('(renamed)'); // not named: not re-read
    await catalogChanged();
    now += 1000;
    expect((await builder.build()).events).toBe(1);
    expect((await event('btc-100k')).title).toContain('(renamed)');
  });

  it('an event that closes leaves the lists, its league list empties, its page is rebuilt', async () => {
    const before = await builder.build({ full: true });
    const [{ n: closing } = { n: 0 }]: Array<{ n: number }> = await tdb.db.query(sql`select count(*)::int as n from markets where event_id = 'e-btc'`);
    await tdb.db.query(sql`update events set closed = true where id = 'e-btc'`);
    await tdb.db.query(sql`update markets set closed = true where event_id = 'e-btc'`);
    await catalogChanged('e-btc');
    await builder.build();
    const trending = await list('markets:trending');
    expect(trending.events.map((e) => e.slug)).toEqual(['ars-che', 'us-election']);
    expect(trending.leagues.map((l) => l.league)).toEqual(['epl']);
    expect((await list('markets:league:btc')).events).toEqual([]);
    expect((await event('btc-100k')).markets[0]?.closed).toBe(true);

    // Marked dirty later (a price moved after close): still rebuilt from Postgres.
    await tr.redis.hset(redisKeys(tr.prefix).chances, token('m10', 0), '1', token('m10', 1), '0');
    await dirty('e-btc');
    const stats = await builder.build();
    expect(stats.events).toBe(1);
    expect((await event('btc-100k')).markets[0]?.outcomes.map((o) => o.chance)).toEqual([1, 0]);

    // The next full build remembers the by-id index entries of the open events only.
    expect(closing).toBeGreaterThan(0);
    expect((await builder.build({ full: true })).indexed).toBe(before.indexed - closing);
  });

  it('a resolved market shows its result, not the last quote its book left behind', async () => {
    await tr.redis.hset(redisKeys(tr.prefix).chances, token('m4', 0), '0.81', token('m4', 1), '0.19');
    await tdb.db.query(sql`update markets set closed = true, resolved_outcome_index = 1, resolved_at = now() where id = 'm4'`);
    await tr.redis.incr(redisKeys(tr.prefix).catalogVersion);
    await builder.build();
    expect((await event('ars-che')).markets[3]?.outcomes.map((o) => o.chance)).toEqual([0, 1]);

    await tdb.db.query(sql`update markets set closed = true, voided = true, resolved_at = now() where id = 'm21'`);
    await tdb.db.query(sql`update outcomes set catalog_price = 0.5 where market_id = 'm21'`);
    await tr.redis.incr(redisKeys(tr.prefix).catalogVersion);
    await builder.build();
    expect((await event('us-election')).markets[1]?.outcomes.map((o) => o.chance)).toEqual([0.5, 0.5]);
  });

  /** Market m4's outcomes as its event's page shows them: chance and quote. */
  const m4Quotes = async () =>
    (await event('ars-che')).markets[3]?.outcomes.map(({ chance, best_bid, best_ask, spread, last_trade_price }) => ({ chance, best_bid, best_ask, spread, last_trade_price }));

  it('a market page carries the quotes its live chances came from, and a settled one none', async () => {
    const keys = redisKeys(tr.prefix);
    await tr.redis.hset(keys.quotes, token('m4', 0), '0.8|0.82|0.79', token('m4', 1), '0.18|0.2|');
    await tr.redis.hset(keys.chances, token('m4', 0), '0.81', token('m4', 1), '0.19');
    await dirty('e-soccer');
    await builder.build();
    expect(await m4Quotes()).toEqual([
      { chance: 0.81, best_bid: 0.8, best_ask: 0.82, spread: 0.02, last_trade_price: 0.79 },
      { chance: 0.19, best_bid: 0.18, best_ask: 0.2, spread: 0.02, last_trade_price: null },
    ]);
    // The list stays light: cards carry no quotes.
    const card = (await list('markets:trending')).events.find((e) => e.slug === 'ars-che');
    expect(Object.keys(card?.markets[0]?.outcomes[0] ?? {}).sort()).toEqual(['chance', 'name', 'odds']);

    await tdb.db.query(sql`update markets set closed = true, resolved_outcome_index = 0, resolved_at = now() where id = 'm4'`);
    await tr.redis.incr(keys.catalogVersion);
    await builder.build();
    expect((await event('ars-che')).markets[3]?.outcomes.map((o) => [o.chance, o.best_bid, o.best_ask, o.spread, o.last_trade_price])).toEqual([
      [1, null, null, null, null],
      [0, null, null, null, null],
    ]);
  });

  it('a crossed top is shown as it was: a negative spread, the last trade as the chance, a page that reads back', async () => {
    // The exchange's own top crosses at times, for a moment (the ingestor keeps it: it is the
    // exchange's word). A page with it once failed the read schema, and the API answered 500 for
    // the event's pages until the next build.
    const keys = redisKeys(tr.prefix);
    await tr.redis.hset(keys.quotes, token('m4', 0), '0.83|0.8|0.79', token('m4', 1), '0.2|0.17|0.21');
    await tr.redis.hset(keys.chances, token('m4', 0), '0.79', token('m4', 1), '0.21');
    await dirty('e-soccer');
    await builder.build();
    // m4Quotes reads the page through the schema the API reads it with (event()).
    expect(await m4Quotes()).toEqual([
      { chance: 0.79, best_bid: 0.83, best_ask: 0.8, spread: -0.03, last_trade_price: 0.79 },
      { chance: 0.21, best_bid: 0.2, best_ask: 0.17, spread: -0.03, last_trade_price: 0.21 },
    ]);
  });

  it('a full build after Redis lost the snapshots writes them again', async () => {
    await tr.redis.del(redisKeys(tr.prefix).snapshot('event:us-election'), redisKeys(tr.prefix).snapshot('markets:trending'));
    const stats = await builder.build({ full: true });
    expect(stats.written).toBe(2);
    expect((await event('us-election')).market_count).toBe(4);
  });
});
