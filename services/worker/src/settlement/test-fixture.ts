import type { Redis } from 'ioredis';
import { redisKeys } from '@pm/shared/redis';
import { writeOutbox } from '@pm/shared/outbox';
import { sql, type Db } from '@pm/shared/db';

/**
 * Markets for the settlement and projection integration tests, inserted with plain SQL as the
 * ingestor would leave them, with live chances in Redis; and resolutions logged as the ingestor
 * logs them (market_resolutions row, market columns and the `market-resolved` outbox row, in one
 * transaction).
 */
export const tokenOf = (marketId: string, outcomeIndex: number) => `tok-${marketId}-${outcomeIndex}`;

export async function insertMarkets(db: Db, marketIds: string[], outcomes: string[] = ['Yes', 'No']): Promise<void> {
  await db.query(sql`
    insert into events (id, slug, title, category) values ('ev-fixture', 'fixture', 'Fixture event', 'Sport')
    on conflict do nothing
  `);
  for (const [position, id] of marketIds.entries()) {
    await db.query(sql`
      insert into markets (id, event_id, condition_id, position, question)
      values (${id}, 'ev-fixture', ${`cond-${id}`}, ${position}, ${`Question ${id}?`})
    `);
    for (const [i, name] of outcomes.entries()) {
      await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values (${id}, ${i}, ${name}, ${tokenOf(id, i)})`);
    }
  }
}

/** The live chance of an outcome, as the ingestor publishes it (chance text + the time it was set). */
export async function setChance(redis: Redis, prefix: string, marketId: string, outcomeIndex: number, chance: string, at = Date.now()): Promise<void> {
  const keys = redisKeys(prefix);
  await redis.hset(keys.chances, tokenOf(marketId, outcomeIndex), chance);
  await redis.hset(keys.chanceAt, tokenOf(marketId, outcomeIndex), String(at));
}

/** Log a resolution the way the ingestor does (winner null = voided), with the outbox row that owes its settlement. */
export async function logResolution(db: Db, marketId: string, winner: number | null): Promise<void> {
  const voided = winner === null;
  await db.tx(async (tx) => {
    await tx.query(sql`
      insert into market_resolutions (market_id, winning_outcome_index, voided, source) values (${marketId}, ${winner}::integer, ${voided}, 'ws')
      on conflict do nothing
    `);
    const marked: Array<{ event_id: string }> = await tx.query(sql`
      update markets set closed = true, resolved_outcome_index = ${winner}::integer, voided = ${voided}, resolved_at = now()
      where id = ${marketId} and resolved_at is null
      returning event_id
    `);
    if (marked[0]) await writeOutbox(tx, 'market-resolved', { marketId, eventId: marked[0].event_id });
  });
}
