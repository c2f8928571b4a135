import type { Redis } from 'ioredis';
import { redisKeys } from '@pm/shared/redis';
import { sql, type Db, type Events, type Markets, type Outcomes } from '@pm/shared/db';

/**
 * The markets the crowd can call right now: open, two outcomes, and a live price the write path
 * will accept (seen by the feed within the last 30 s, well inside its 60 s limit).
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

export async function callableMarkets(db: Db, redis: Redis, prefix: string, now: number): Promise<CallableMarket[]> {
  // inputs: none. outputs: open two-outcome markets of open events, with outcome names and token ids in outcome order.
  const rows: MarketRow[] = await db.query(sql`
    select m.id, m.event_id, m.question, e.category, e.league, m.kind,
           array_agg(o.name order by o.outcome_index) as outcomes,
           array_agg(o.token_id order by o.outcome_index) as tokens
    from markets m
    join events e on e.id = m.event_id
    join outcomes o on o.market_id = m.id
    where not m.closed and m.resolved_at is null and not m.voided and not e.closed
    group by m.id, e.category, e.league
    having count(*) = 2
  `);
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
