import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createDb, type Db } from '@pm/shared/db';
import { eventSchema, type Event } from '@pm/shared/api';
import { createRecords, type Records } from '@pm/shared/records';
import { startStack, type Stack } from '../support/stack.js';
import * as waiting from '@pm/shared/wait';

/**
 * "a call recorded through the write path carries exactly the chance the API showed at
 * that moment". With the simulator's random walk paused and a book fixed, the API shows a chance;
 * a call recorded then must carry that same number, as its own public page shows it.
 */
let stack: Stack;
let db: Db;
let redis: Redis;
let records: Records;

beforeAll(async () => {
  stack = await startStack({ env: { CROWD: '0' } });
  db = createDb(stack.databaseUrl, { poolSize: 2 });
  redis = new Redis(stack.redisUrl);
  records = createRecords({ db, redis, prefix: stack.prefix });
});

afterAll(async () => {
  await records?.close();
  redis?.disconnect();
  await db?.dispose();
  await stack?.stop();
});

const until = <T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000) =>
  waiting.until(what, fn, { timeoutMs, everyMs: 200, context: () => stack.logs() });

describe('a call and the price the API showed', () => {
  it('records exactly the chance shown at /api/v1/markets/{slug} at that moment', async () => {
    // The API answers before the ingestor's first catalog sync has landed: wait for events.
    const slug = await until('a Politics event in the market list', async () => {
      const list = (await (await fetch(`${stack.apiUrl}/api/v1/markets?category=Politics`)).json()) as { events?: Array<{ slug: string }> };
      return list.events?.[0]?.slug;
    });
    const gamma = (await (await fetch(`${stack.simUrl}/events?slug=${encodeURIComponent(slug)}`)).json()) as Array<{
      markets: Array<{ id: string; clobTokenIds: string; closed: boolean }>;
    }>;
    const market = gamma[0]!.markets.find((m) => !m.closed)!;
    const yesToken = (JSON.parse(market.clobTokenIds) as string[])[0]!;

    await stack.simControl('/_sim/pause', {});
    try {
      // A book whose midpoint has three decimals, so a rounding anywhere on the way would show.
      await stack.simControl('/_sim/book', { token_id: yesToken, bids: [{ price: '0.37', size: '900' }], asks: [{ price: '0.38', size: '900' }] });
      const shown = await until('the API to show 0.375', async () => {
        const body = (await (await fetch(`${stack.apiUrl}/api/v1/markets/${slug}`)).json()) as { event: Event };
        const outcome = eventSchema.parse(body.event).markets.find((m) => m.id === market.id)?.outcomes[0];
        return outcome?.chance === 0.375 ? outcome.chance : undefined;
      });

      await records.createUser({ handle: 'pricecheck', displayName: 'Price Check' });
      const call = await records.recordCall({ handle: 'pricecheck', marketId: market.id, outcomeIndex: 0, thesis: 'midpoint of 0.37/0.38' });
      expect(call.chanceAtCall).toBe(shown);

      const page = await until(`/api/v1/calls/${call.id}`, async () => {
        const res = await fetch(`${stack.apiUrl}/api/v1/calls/${call.id}`);
        return res.status === 200 ? ((await res.json()) as { call: { chance_at_call: number; status: string } }) : undefined;
      });
      expect(page.call).toMatchObject({ chance_at_call: shown, status: 'open' });
    } finally {
      await stack.simControl('/_sim/resume', {});
    }
  });
});
