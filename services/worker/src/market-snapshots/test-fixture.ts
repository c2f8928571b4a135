import type { Redis } from 'ioredis';
import { z } from 'zod';
import { categorySchema, eventCardSchema, eventSchema, leagueEntrySchema } from '@pm/shared/api';
import { redisKeys, snapshotEtag, type SnapshotName } from '@pm/shared/redis';
import { sql, type Db } from '@pm/shared/db';

/**
 * A small catalog for the integration tests, inserted with plain SQL as the ingestor would leave it:
 * - `ars-che` (Football/epl, a live game): 5 markets, the one at position 1 closed;
 * - `btc-100k` (Crypto/btc): 1 market, the busiest event;
 * - `us-election` (Politics, no league): 4 markets, same 24 h volume as ars-che (tie → slug order);
 * - `old-final` (Football/epl, closed): never listed.
 * Chances in Redis for some tokens; the rest fall back to the catalog price.
 */
export { WEB_URL } from '../testing/builder-source.js';

export const token = (market: string, outcome: number) => `${market.replace(/\D/g, '').padStart(3, '0')}${outcome}`.padEnd(72, '7');

export const fixture = {
  events: [
    { id: 'e-soccer', slug: 'ars-che', title: 'Arsenal vs Chelsea', category: 'Football', league: 'epl', volume: 12000.5, volume24h: 5000, closed: false, gameId: 'g1' },
    { id: 'e-btc', slug: 'btc-100k', title: 'Bitcoin above 100k on Friday?', category: 'Crypto', league: 'btc', volume: 90000, volume24h: 9000, closed: false, gameId: null },
    { id: 'e-pol', slug: 'us-election', title: 'US midterms', category: 'Politics', league: null, volume: 400, volume24h: 5000, closed: false, gameId: null },
    { id: 'e-old', slug: 'old-final', title: 'Old final', category: 'Football', league: 'epl', volume: 1, volume24h: 99999, closed: true, gameId: null },
  ],
  markets: [
    // event, id, position, question, label, kind, closed, one_day_price_change, outcomes [name, catalog_price]
    { eventId: 'e-soccer', id: 'm1', position: 0, question: 'Will Arsenal win?', label: 'Arsenal', kind: 'moneyline', closed: false, change: 0.05, outcomes: [['Yes', 0.2], ['No', 0.8]] },
    { eventId: 'e-soccer', id: 'm2', position: 1, question: 'Arsenal leading at half-time?', label: 'Half-time', kind: 'first_half_moneyline', closed: true, change: null, outcomes: [['Yes', 1], ['No', 0]] },
    { eventId: 'e-soccer', id: 'm3', position: 2, question: 'Will it be a draw?', label: 'Draw', kind: 'moneyline', closed: false, change: null, outcomes: [['Yes', 0.3], ['No', 0.7]] },
    { eventId: 'e-soccer', id: 'm4', position: 3, question: 'Will Chelsea win?', label: 'Chelsea', kind: 'moneyline', closed: false, change: -0.02, outcomes: [['Yes', 0.45], ['No', 0.55]] },
    { eventId: 'e-soccer', id: 'm5', position: 4, question: 'Over 2.5 goals?', label: 'O/U 2.5', kind: 'totals', closed: false, change: null, outcomes: [['Over', 0.6], ['Under', 0.4]] },
    { eventId: 'e-btc', id: 'm10', position: 0, question: 'Bitcoin above 100k on Friday?', label: '', kind: null, closed: false, change: 0.1, outcomes: [['Yes', 0.5], ['No', 0.5]] },
    { eventId: 'e-pol', id: 'm20', position: 0, question: 'Will the House flip?', label: 'House', kind: null, closed: false, change: null, outcomes: [['Yes', 0.6], ['No', 0.4]] },
    { eventId: 'e-pol', id: 'm21', position: 1, question: 'Will the Senate flip?', label: 'Senate', kind: null, closed: false, change: null, outcomes: [['Yes', 0.35], ['No', 0.65]] },
    { eventId: 'e-pol', id: 'm22', position: 2, question: 'Will a third party win a seat?', label: 'Third party', kind: null, closed: false, change: null, outcomes: [['Yes', 0.05], ['No', 0.95]] },
    { eventId: 'e-pol', id: 'm23', position: 3, question: 'Will turnout exceed 70 percent?', label: 'Turnout', kind: null, closed: false, change: null, outcomes: [['Yes', 0.15], ['No', 0.85]] },
    { eventId: 'e-old', id: 'm30', position: 0, question: 'Who won the old final?', label: '', kind: 'moneyline', closed: true, change: null, outcomes: [['Yes', 1], ['No', 0]] },
  ],
  /** Live chances (Redis) by token; m3 and m5 have none, so they show their catalog price. */
  chances: {
    [token('m1', 0)]: '0.25',
    [token('m1', 1)]: '0.75',
    [token('m2', 0)]: '1',
    [token('m2', 1)]: '0',
    [token('m4', 0)]: '0.44',
    [token('m4', 1)]: '0.56',
    [token('m10', 0)]: '0.62',
    [token('m10', 1)]: '0.38',
    [token('m20', 0)]: '0.61',
    [token('m20', 1)]: '0.39',
  } as Record<string, string>,
  /** market_splits: m1 has callers; nobody has called the others. */
  splits: [
    { marketId: 'm1', outcomeIndex: 0, people: 3 },
    { marketId: 'm1', outcomeIndex: 1, people: 1 },
  ],
} as const;

export async function insertFixture(db: Db, redis: Redis, prefix: string): Promise<void> {
  const teams = JSON.stringify([
    { name: 'Arsenal', abbreviation: 'ARS', home: true },
    { name: 'Chelsea', abbreviation: 'CHE', home: false },
  ]);
  for (const e of fixture.events) {
    await db.query(sql`
      insert into events (id, slug, title, category, league, closes_at, volume, volume_24h, closed, game_id, teams)
      values (${e.id}, ${e.slug}, ${e.title}, ${e.category}, ${e.league}, ${new Date('2030-05-01T19:00:00Z')},
              ${e.volume}, ${e.volume24h}, ${e.closed}, ${e.gameId}, ${e.gameId ? teams : '[]'}::jsonb)
    `);
  }
  for (const m of fixture.markets) {
    await db.query(sql`
      insert into markets (id, event_id, condition_id, position, question, label, kind, closes_at, closed, one_day_price_change)
      values (${m.id}, ${m.eventId}, ${`0x${m.id}`}, ${m.position}, ${m.question}, ${m.label}, ${m.kind},
              ${new Date('2030-05-01T21:00:00Z')}, ${m.closed}, ${m.change})
    `);
    for (const [i, [name, price]] of m.outcomes.entries()) {
      await db.query(sql`
        insert into outcomes (market_id, outcome_index, name, token_id, catalog_price)
        values (${m.id}, ${i}, ${name}, ${token(m.id, i)}, ${price})
      `);
    }
  }
  await db.query(sql`
    insert into games (game_id, event_id, league, home_team, away_team, status, score, period, clock, live)
    values ('g1', 'e-soccer', 'epl', 'Arsenal', 'Chelsea', 'InProgress', '1-0', '1H', '23', true)
  `);
  for (const s of fixture.splits) {
    await db.query(sql`insert into market_splits (market_id, outcome_index, people) values (${s.marketId}, ${s.outcomeIndex}, ${s.people})`);
  }
  await redis.hset(redisKeys(prefix).chances, fixture.chances);
}

// ── Reading snapshots back, validated against the resource schemas ─────────────────────────────────
export const eventSnapshotSchema = z.object({ event: eventSchema });
export const listSnapshotSchema = z.object({
  ranking: z.number().int().optional(),
  categories: z.array(categorySchema),
  leagues: z.array(leagueEntrySchema),
  events: z.array(eventCardSchema).max(60),
});
export const searchSnapshotSchema = z.object({
  categories: z.array(categorySchema),
  leagues: z.array(leagueEntrySchema),
  entries: z.array(z.object({ text: z.string(), category: categorySchema, league: z.string().nullable(), card: eventCardSchema })),
});

export interface StoredSnapshot {
  body: string;
  etag: string;
  builtAt: number;
}

export async function readStored(redis: Redis, prefix: string, name: SnapshotName): Promise<StoredSnapshot | null> {
  const h = await redis.hgetall(redisKeys(prefix).snapshot(name));
  if (h.body === undefined || h.etag === undefined || h.built_at === undefined) return null;
  return { body: h.body, etag: h.etag, builtAt: Number(h.built_at) };
}

export async function readSnapshot<T extends z.ZodType>(redis: Redis, prefix: string, name: SnapshotName, schema: T): Promise<z.infer<T>> {
  const stored = await readStored(redis, prefix, name);
  if (stored === null) throw new Error(`snapshot ${name} missing`);
  if (stored.etag !== snapshotEtag(stored.body)) throw new Error(`snapshot ${name}: etag does not match body`);
  return schema.parse(JSON.parse(stored.body));
}

/** Every snapshot hash under the prefix: name → stored fields (possibly partial). */
export async function scanSnapshots(redis: Redis, prefix: string): Promise<Map<string, Record<string, string>>> {
  const out = new Map<string, Record<string, string>>();
  const base = redisKeys(prefix).snapshot('markets:trending').replace(/markets:trending$/, '');
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${base}*`, 'COUNT', 500);
    cursor = next;
    for (const key of found) out.set(key.slice(base.length), await redis.hgetall(key));
  } while (cursor !== '0');
  return out;
}
