import type { Redis } from 'ioredis';
import { redisKeys } from '@pm/shared/redis';
import { sql, type Db, type Events, type Markets, type Outcomes } from '@pm/shared/db';
import type { Random } from './theses.js';

/**
 * The markets the crowd can call right now: open, two outcomes, and a live price the write path
 * will accept (seen by the feed within the last 30 s, well inside its 60 s limit).
 *
 * The live prices are read only for the markets the crowd is choosing among: `ids`, or a random
 * `sample` of the open ones (`openMarketIds`, which the crowd re-reads every half minute: joining
 * every open market to its outcomes each time it acted was the largest statement Postgres ran, a
 * 130-ms sort spilled to disk every few seconds, beside a stack that is being measured). Reading all of them (20,000 tokens with 5,000 open events, from two
 * hashes) held Redis for 4–12 ms each time the crowd acted, and every other client of that Redis,
 * the API's rate-limit counts among them, waited behind it.
 */
export interface CallableMarket {
  id: string;
  eventId: string;
  question: string;
  category: string;
  league: string | null;
  kind: string | null;
  /** Chance of each outcome, in outcome order. */
  chances: number[];
  outcomes: string[];
}

const FRESH_MS = 30_000;

/** A callable market as the query below returns it: the generated column types plus its outcomes, in order. */
type MarketRow = Pick<Markets, 'id' | 'event_id' | 'question' | 'kind'> &
  Pick<Events, 'category' | 'league'> & { outcomes: Array<Outcomes['name']>; tokens: Array<Outcomes['token_id']> };

export interface CallableQuery {
  /** Only these markets (those that are callable, in this order). */
  ids?: readonly string[];
  /** At most `size` of the markets `of` (ids from `openMarketIds`: any that closed since are left out), drawn with `random`. */
  sample?: { size: number; random: Random; of: readonly string[] };
}

/** The open two-outcome markets of open events (what `callableMarkets` can return), in no order. */
export async function openMarketIds(db: Db): Promise<string[]> {
  // inputs: none. outputs: ids of open, unresolved markets of open events with exactly two outcomes.
  const rows: Array<Pick<Markets, 'id'>> = await db.query(sql`
    select m.id
    from markets m
    join events e on e.id = m.event_id
    join (select market_id from outcomes group by market_id having count(*) = 2) o on o.market_id = m.id
    where not m.closed and m.resolved_at is null and not m.voided and not e.closed
  `);
  return rows.map((r) => r.id);
}

export async function callableMarkets(db: Db, redis: Redis, prefix: string, now: number, query: CallableQuery = {}): Promise<CallableMarket[]> {
  const ids = query.ids ?? (query.sample ? sampleOf(query.sample.of, query.sample.size, query.sample.random) : undefined);
  if (ids?.length === 0) return [];
  const only = ids ? sql`and m.id = any(${[...ids]}::text[])` : sql``;
  // inputs: optional market ids. outputs: open two-outcome markets of open events, with outcome names and token ids in outcome order.
  const found: MarketRow[] = await db.query(sql`
    select m.id, m.event_id, m.question, e.category, e.league, m.kind,
           array_agg(o.name order by o.outcome_index) as outcomes,
           array_agg(o.token_id order by o.outcome_index) as tokens
    from markets m
    join events e on e.id = m.event_id
    join outcomes o on o.market_id = m.id
    where not m.closed and m.resolved_at is null and not m.voided and not e.closed ${only}
    group by m.id, e.category, e.league
    having count(*) = 2
  `);
  const rows = ids ? inOrder(found, ids) : found;
  if (rows.length === 0) return [];
  const keys = redisKeys(prefix);
  const tokens = rows.flatMap((r) => r.tokens);
  const [chances, ats] = await Promise.all([redis.hmget(keys.chances, ...tokens), redis.hmget(keys.chanceAt, ...tokens)]);
  const out: CallableMarket[] = [];
  rows.forEach((r, i) => {
    const values = [chances[2 * i], chances[2 * i + 1]].map((v) => (v == null ? NaN : Number(v)));
    const fresh = [ats[2 * i], ats[2 * i + 1]].every((v) => v != null && now - Number(v) < FRESH_MS);
    // Both sides strictly inside (0, 1): a call needs a price on the side it picks, and a fade the other.
    if (!fresh || !values.every((v) => v > 0.02 && v < 0.98)) return;
    out.push({ id: r.id, eventId: r.event_id, question: r.question, category: r.category, league: r.league, kind: r.kind, chances: values, outcomes: r.outcomes });
  });
  return out;
}

function inOrder(rows: readonly MarketRow[], ids: readonly string[]): MarketRow[] {
  const byId = new Map(rows.map((r) => [r.id, r] as const));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** `size` of `rows` drawn at random (a partial Fisher–Yates shuffle of a copy). */
function sampleOf<T>(rows: readonly T[], size: number, random: Random): T[] {
  if (rows.length <= size) return [...rows];
  const copy = [...rows];
  for (let i = 0; i < size; i++) {
    const j = i + Math.floor(random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, size);
}
