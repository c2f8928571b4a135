import { beforeEach, describe, expect, it } from 'vitest';
import { sql } from '@pm/shared/db';
import { quietLogger, TEST_TUNING, useHarness } from '../testing/harness.js';
import { gammaEvent, waitFor } from '../testing/fake-exchange.js';
import { createIngestor, type Ingestor } from '../ingestor.js';
import type { SyncResult } from './catalog-sync.js';
import { loadOutcomes } from './catalog-db.js';

const T = (n: number) => `7132104567925221259462638553270691275033272857194253228963137931245558399${String(n).padStart(4, '0')}`;

const h = useHarness('ingestor_catalog');
let ingestor: Ingestor;
/** Each test's first sync, into an empty database (the tests then change the catalog and sync again). */
let first: SyncResult;
let firstPages: string[];

// Each test: an empty database and Redis prefix, the exchange's catalog as below, a new ingestor and its first sync.
beforeEach(async () => {
  // 150 events: two pages of 100 plus the empty page that ends the sync.
  for (let i = 0; i < 150; i++) h.fake.events.push(gammaEvent(`e${i}`, [{ id: `m${i}`, tokens: [T(2 * i), T(2 * i + 1)], prices: ['0.25', '0.75'] }]));
  // A sports event with teams and a game id, and one that cannot be parsed at all.
  h.fake.events.push(
    gammaEvent('sport', [{ id: 'msport', tokens: [T(900), T(901)] }], {
      title: 'Arsenal vs. Chelsea',
      tags: null,
      gameId: 4242,
      teams: [
        { name: 'Arsenal', abbreviation: 'ARS', ordering: 'home' },
        { name: 'Chelsea', abbreviation: 'CHE', ordering: 'away' },
      ],
    }),
    { id: 'broken', title: 'no slug, no markets' },
  );
  ingestor = h.ingestor();
  first = await ingestor.syncCatalog();
  firstPages = h.fake.requests.filter((q) => q.startsWith('/events?') && q.includes('offset='));
});

describe('catalog sync', () => {
  it('pages the open list until an empty page and upserts events, markets and outcomes', async () => {
    const r = first;
    expect(r.events).toBe(151);
    expect(r.markets).toBe(151);
    expect(r.skipped).toBe(1);
    expect(r.changedEventIds).toHaveLength(151);
    const pages = firstPages;
    expect(pages.map((q) => new URLSearchParams(q.split('?')[1]).get('offset'))).toEqual(['0', '100', '200']);
    expect(pages[0]).toContain('ascending=false');

    const db = h.database.db;
    const [{ n }] = await db.query(sql`select count(*)::int as n from outcomes`);
    expect(n).toBe(302);
    const [ev] = await db.query(sql`select category, game_id, teams, tags, closes_at from events where id = 'sport'`);
    expect(ev.game_id).toBe('4242');
    expect(ev.teams).toEqual([
      { name: 'Arsenal', abbreviation: 'ARS', home: true },
      { name: 'Chelsea', abbreviation: 'CHE', home: false },
    ]);
    expect(ev.tags).toEqual([]);
    expect(ev.closes_at.toISOString()).toBe('2026-04-05T16:00:00.000Z');
    const [m] = await db.query(sql`select label, position, closed, volume from markets where id = 'm3'`);
    expect(m).toMatchObject({ label: 'Mm3', position: 0, closed: false, volume: '10' });
    const outs = await db.query(sql`select outcome_index, name, token_id, catalog_price from outcomes where market_id = 'm3' order by outcome_index`);
    expect(outs).toEqual([
      { outcome_index: 0, name: 'Yes', token_id: T(6), catalog_price: '0.25' },
      { outcome_index: 1, name: 'No', token_id: T(7), catalog_price: '0.75' },
    ]);
  });

  it('is idempotent: a second run changes nothing and bumps no updated_at', async () => {
    const before = await h.database.db.query(sql`select max(updated_at) as t from events`);
    const r = await ingestor.syncCatalog();
    expect(r.changedEventIds).toEqual([]);
    const after = await h.database.db.query(sql`select max(updated_at) as t from events`);
    expect(after[0].t.getTime()).toBe(before[0].t.getTime());
  });

  it('reports only the event whose price moved, in the outbox row written with its page (the relay of the worker marks it)', async () => {
    await h.redis.redis.del(h.keys.dirtyEvents);
    const version = Number((await h.redis.redis.get(h.keys.catalogVersion)) ?? 0);
    const [{ last }] = await h.database.db.query(sql`select coalesce(max(id), 0)::int as last from outbox`);
    const e7 = h.fake.events.find((e) => e.id === 'e7')!;
    (e7.markets as Array<Record<string, unknown>>)[0]!.outcomePrices = '["0.3","0.7"]';
    const r = await ingestor.syncCatalog();
    expect(r.changedEventIds).toEqual(['e7']);
    const rows: Array<{ topic: string; payload: unknown }> = await h.database.db.query(sql`select topic, payload from outbox where id > ${last} order by id`);
    expect(rows).toEqual([{ topic: 'events-changed', payload: { eventIds: ['e7'] } }]);
    // Not marked a second time by the ingestor itself: the relay's delivery is the one mark.
    await ingestor.flush();
    expect(await h.redis.redis.smembers(h.keys.dirtyEvents)).toEqual([]);
    expect(Number(await h.redis.redis.get(h.keys.catalogVersion))).toBe(version);
  });

  it('retries a failed page and completes the sync', async () => {
    h.fake.failNext(2);
    const r = await ingestor.syncCatalog();
    expect(r.events).toBe(151);
  });

  it('a sync that keeps failing leaves the catalog as it was', async () => {
    h.fake.failNext(100);
    await expect(ingestor.syncCatalog()).rejects.toThrow();
    h.fake.failNext(0);
    const [{ n }] = await h.database.db.query(sql`select count(*)::int as n from events where closed = false`);
    expect(n).toBe(151);
  });

  it('closes an event that left the open list only once the catalog confirms it closed', async () => {
    // e2 is confirmed closed (the open list filters it out, `id=` still finds it).
    const e2 = h.fake.events.find((e) => e.id === 'e2')!;
    e2.closed = true;
    const r = await ingestor.syncCatalog();
    expect(h.fake.requests).toContain('/events?id=e2');
    expect(r.changedEventIds).toEqual(['e2']);
    const rows = await h.database.db.query(sql`select id, closed from events where id = 'e2'`);
    expect(rows).toEqual([{ id: 'e2', closed: true }]);
    const [m2] = await h.database.db.query(sql`select closed from markets where id = 'm2'`);
    expect(m2.closed).toBe(true);
  });

  it("forgets a closed event's outcomes once they have been closed a while, and a start loads only the open ones and those", async () => {
    // An ingestor of its own that keeps closed outcomes 300 ms (the default is an hour).
    const short = h.ingestor({ closedOutcomesMs: 300, periodicSync: false });
    await short.syncCatalog();
    const known = short.stats().catalog.outcomes;
    expect(known).toBe(302);
    h.fake.events.find((e) => e.id === 'e2')!.closed = true;
    await short.syncCatalog();
    // Just closed: still known (a late market_resolved frame names its tokens).
    expect(short.stats().catalog.outcomes).toBe(known);
    await waitFor(async () => {
      await short.syncCatalog();
      return short.stats().catalog.outcomes === known - 2;
    }, 5000, "e2's two outcomes forgotten");
    // What a start loads: the open outcomes, and the closed ones only while they are recent.
    const [{ closed_at: closedAt }] = (await h.database.db.query(sql`select closed_at from events where id = 'e2'`)) as [{ closed_at: Date }];
    expect(closedAt).toBeInstanceOf(Date);
    const tokensOf = (refs: Array<{ tokenId: string }>) => new Set(refs.map((r) => r.tokenId));
    const recent = tokensOf(await loadOutcomes(h.database.db, new Date(closedAt.getTime() - 1000)));
    const later = tokensOf(await loadOutcomes(h.database.db, new Date(closedAt.getTime() + 1000)));
    expect([recent.has(T(4)), recent.has(T(5)), recent.size]).toEqual([true, true, 302]);
    expect([later.has(T(4)), later.has(T(5)), later.size]).toEqual([false, false, 300]);
  });

  it('an event missing from the catalog is asked for by id and resolved; one 404 closes nothing', async () => {
    // e1 vanished from every list query, `id=` included; `GET /events/e1` answers it resolved (Yes won).
    const e1 = h.fake.events.find((e) => e.id === 'e1')!;
    e1.closed = true;
    Object.assign((e1.markets as Array<Record<string, unknown>>)[0]!, { closed: true, outcomePrices: '["1","0"]', umaResolutionStatus: 'resolved' });
    h.fake.unlisted.add('e1');
    // e3 is gone altogether: 404 by id.
    const e3 = h.fake.events.findIndex((e) => e.id === 'e3');
    const [gone] = h.fake.events.splice(e3, 1);
    const before = ingestor.stats().catalog;
    const r = await ingestor.syncCatalog();
    expect(h.fake.requests).toContain('/events?id=e1');
    expect(h.fake.requests).toContain('/events/e1');
    expect(h.fake.requests).toContain('/events/e3');
    expect(r.changedEventIds).toEqual(['e1']);
    const events = await h.database.db.query(sql`select id, closed from events where id in ('e1','e3') order by id`);
    expect(events).toEqual([
      { id: 'e1', closed: true },
      { id: 'e3', closed: false },
    ]);
    // e1 resolved from the exchange's answer; e3 untouched: absent is not void.
    const markets = await h.database.db.query(
      sql`select id, closed, resolved_outcome_index, resolved_at is not null as resolved from markets where id in ('m1','m3') order by id`,
    );
    expect(markets).toEqual([
      { id: 'm1', closed: true, resolved_outcome_index: 0, resolved: true },
      { id: 'm3', closed: false, resolved_outcome_index: null, resolved: false },
    ]);
    const after = ingestor.stats().catalog;
    expect(after.confirmedAbsent - before.confirmedAbsent).toBe(1);
    expect(after.vanished - before.vanished).toBe(0);
    // More 404s within the hour still close nothing.
    await ingestor.syncCatalog();
    await ingestor.syncCatalog();
    const [still] = await h.database.db.query(sql`select closed from events where id = 'e3'`);
    expect(still.closed).toBe(false);
    expect(ingestor.stats().catalog.vanished - before.vanished).toBe(0);
    // The event comes back: its misses are forgotten.
    h.fake.events.push(gone!);
    await ingestor.syncCatalog();
    expect(await h.database.db.query(sql`select event_id from catalog_absences`)).toEqual([]);
  });

  it('closes an event the catalog does not know once its absence is confirmed over the grace period', async () => {
    await ingestor.stop();
    const config = { ...h.config, CATALOG_VANISH_GRACE_SECONDS: 0, CATALOG_VANISH_SYNCS: 2 };
    const quick = createIngestor({ config, db: h.database.db, redis: h.redis.redis, logger: quietLogger, tuning: TEST_TUNING });
    const e3 = h.fake.events.findIndex((e) => e.id === 'e3');
    h.fake.events.splice(e3, 1);
    const before = quick.stats().catalog;
    await quick.syncCatalog();
    const [open] = await h.database.db.query(sql`select closed from events where id = 'e3'`);
    expect(open.closed).toBe(false);
    const r = await quick.syncCatalog();
    expect(r.changedEventIds).toEqual(['e3']);
    const [m3] = await h.database.db.query(sql`select closed, resolved_at from markets where id = 'm3'`);
    expect(m3).toEqual({ closed: true, resolved_at: null });
    expect(quick.stats().catalog.vanished - before.vanished).toBe(1);
    // Closed here, never asked again.
    h.fake.requests.length = 0;
    await quick.syncCatalog();
    expect(h.fake.requests.filter((q) => q.includes('e3'))).toEqual([]);
    await quick.stop();
  });

  it('counts every sync in the metrics, the periodic ones too', async () => {
    const before = ingestor.stats().catalog.syncs;
    ingestor.catalog.start(50);
    try {
      await waitFor(() => ingestor.stats().catalog.syncs >= before + 2, 10_000, 'two periodic syncs');
    } finally {
      await ingestor.catalog.stop();
    }
  });
});
