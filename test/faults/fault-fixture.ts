import type { Redis } from 'ioredis';
import { redisKeys } from '@pm/shared/redis';
import { marketCallsSnapshotSchema } from '@pm/shared/api';
import { sql, type Db } from '@pm/shared/db';
import type { Records } from '@pm/shared/records';
import { until } from '@pm/shared/wait';
import { setChance } from '../../services/worker/src/settlement/test-fixture.js';

/**
 * What the fault tests count: calls on resolved markets settled (each market once), projections
 * that agree with the calls, and market list snapshots in Redis that show each call's status.
 */

export const PEOPLE = ['ann', 'ben', 'cat', 'dan'] as const;
const CHANCES = ['0.2', '0.35', '0.5', '0.65', '0.8'];

/** `perMarket` calls on each market: the people in turn, alternating outcomes, at varying chances. */
export async function callOn(records: Records, redis: Redis, prefix: string, marketIds: readonly string[], perMarket: number): Promise<string[]> {
  const ids: string[] = [];
  for (const marketId of marketIds) {
    for (let i = 0; i < perMarket; i++) {
      const outcome = i % 2;
      await setChance(redis, prefix, marketId, outcome, CHANCES[i % CHANCES.length]!);
      ids.push((await records.recordCall({ handle: PEOPLE[i % PEOPLE.length]!, marketId, outcomeIndex: outcome, thesis: `fault test ${i}` })).id);
    }
  }
  return ids;
}

export interface Settled {
  expected: number;
  settled: number;
  /** Markets whose calls were settled by more than one settlement (distinct settle times). */
  settledTwice: number;
}

export async function settledCalls(db: Db, marketIds: readonly string[]): Promise<Settled> {
  // Input: market ids. Output: calls on them, those settled, and markets settled at more than one time.
  const rows: Array<{ expected: number; settled: number; twice: number }> = await db.query(sql`
    with per_market as (
      select market_id, count(*)::int as n, count(*) filter (where status <> 'open')::int as settled,
             count(distinct settled_at)::int as times
      from calls where market_id = any(${[...marketIds]}::text[]) group by market_id
    )
    select coalesce(sum(n), 0)::int as expected, coalesce(sum(settled), 0)::int as settled,
           count(*) filter (where times > 1)::int as twice
    from per_market
  `);
  const r = rows[0]!;
  return { expected: r.expected, settled: r.settled, settledTwice: r.twice };
}

/** People whose user_records row agrees with their calls (count and settled count), of all people. */
export async function projectionsRight(db: Db): Promise<{ right: number; people: number }> {
  // Input: none. Output: how many people's records match their calls, and how many people there are.
  const rows: Array<{ right: number; people: number }> = await db.query(sql`
    select count(*) filter (where r.user_id is not null and r.calls = c.calls and r.settled = c.settled)::int as right,
           count(*)::int as people
    from users u
    left join user_records r on r.user_id = u.id
    cross join lateral (
      select count(*)::int as calls, count(*) filter (where status <> 'open')::int as settled from calls where user_id = u.id
    ) c
  `);
  return rows[0]!;
}

/**
 * Calls whose Call object in their market's list snapshot (`calls:market:<id>` in Redis, which the
 * worker builds from Postgres) shows the call's status in Postgres. A call's own page is no snapshot
 * (the API reads it from Postgres): a market's list is the snapshot that shows each call, and the one
 * that has to come back after Redis lost it. A call missing from its list, or a list missing, counts
 * as wrong.
 */
export async function listedCallsRight(db: Db, redis: Redis, prefix: string, callIds: readonly string[]): Promise<number> {
  const keys = redisKeys(prefix);
  // Input: call ids. Output: each call's market and status.
  const rows: Array<{ id: string; market_id: string; status: string }> = await db.query(sql`select id, market_id, status from calls where id = any(${[...callIds]}::text[])`);
  const markets = [...new Set(rows.map((r) => r.market_id))];
  const bodies = await Promise.all(markets.map((m) => redis.hget(keys.snapshot(`calls:market:${m}`), 'body')));
  const shown = new Map<string, string>();
  for (const body of bodies) {
    const list = body === null ? undefined : marketCallsSnapshotSchema.safeParse(JSON.parse(body)).data;
    for (const c of list?.calls ?? []) shown.set(c.id, c.status);
  }
  return rows.filter((r) => shown.get(r.id) === r.status).length;
}

/** Poll `check` until it is true or `timeoutMs` passed; returns the seconds it took (throws on timeout with `describe()`). */
export async function secondsUntil(check: () => Promise<boolean>, timeoutMs: number, describe: () => Promise<string>): Promise<number> {
  const started = Date.now();
  try {
    // A check that throws (a server coming back) counts as "not yet".
    await until('recovery', check, { timeoutMs, everyMs: 200 });
  } catch {
    throw new Error(`not recovered within ${timeoutMs / 1000} s: ${await describe()}`);
  }
  return (Date.now() - started) / 1000;
}
