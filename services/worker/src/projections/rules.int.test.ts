import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { profitOn10, rightPct, streak, xpIfRight } from '@pm/shared/domain';
import { sql } from '@pm/shared/db';
import { createTestDatabase, type TestDatabase } from '@pm/shared/testing';
import { settleMarket } from '../settlement/settle-market.js';
import { insertMarkets, logResolution } from '../settlement/test-fixture.js';
import { projectChanges } from './run.js';

/**
 * The rules Postgres computes at scale, held equal to their one definition in shared/src/domain on
 * random data (issue 10 item 4):
 * - settlement (settle-market.ts): a call's profit_on_10 and XP = profitOn10 and xpIfRight;
 * - user_records (user-records.ts): right_pct = rightPct(won, lost); streak = streak(statuses
 *   newest settled first), over calls settled at the same instant too (ties by made_at, then id).
 */

let tdb: TestDatabase;
let markets = 0;
let people = 0;

beforeAll(async () => {
  tdb = await createTestDatabase('rules');
  await insertMarkets(tdb.db, ['base']);
});

afterAll(async () => {
  await tdb?.drop();
});

/** Chances as the write path stores them: (0, 1) with up to 4 decimals. */
const chance = fc.integer({ min: 1, max: 9999 }).map((n) => (n / 10_000).toFixed(4));

describe('settlement SQL against the domain', () => {
  it('scores every call as profitOn10 and xpIfRight do', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(chance, { minLength: 1, maxLength: 30 }), fc.constantFrom(0, 1, null), async (chances, winner) => {
        const marketId = `p${++markets}`;
        await insertMarkets(tdb.db, [marketId]);
        const [user] = await tdb.db.query(sql`insert into users (handle, display_name) values (${`s${markets}`}, 'S') returning id`);
        // Input: chances, market, user. Output: none; one open call per chance, outcome alternating.
        await tdb.db.query(sql`
          insert into calls (id, user_id, market_id, outcome_index, chance_at_call)
          select ${marketId} || '-' || n, ${user.id}, ${marketId}, (n % 2)::int, c::numeric
          from unnest(${chances}::text[]) with ordinality as t(c, n)`);
        await logResolution(tdb.db, marketId, winner);
        await settleMarket(tdb.db, marketId, new Date());
        const rows: Array<{ outcome_index: number; chance: string; status: 'won' | 'lost' | 'void'; profit: string; xp: number }> = await tdb.db.query(sql`
          select outcome_index, chance_at_call::text as chance, status, profit_on_10::text as profit, xp_awarded as xp
          from calls where market_id = ${marketId}`);
        for (const r of rows) {
          const expected = winner === null ? 'void' : r.outcome_index === winner ? 'won' : 'lost';
          expect(r.status).toBe(expected);
          expect(Number(r.profit), `profit at ${r.chance}`).toBe(profitOn10(expected, Number(r.chance)));
          expect(r.xp, `xp at ${r.chance}`).toBe(expected === 'won' ? xpIfRight(Number(r.chance)) : 0);
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe('user_records SQL against the domain', () => {
  const settledCall = fc.record({
    status: fc.constantFrom('won', 'lost', 'void', 'open'),
    // Few distinct instants, so calls settled together (ties) are common.
    settledMinute: fc.integer({ min: 0, max: 5 }),
    madeMinute: fc.integer({ min: 0, max: 3 }),
  });

  it('gives right_pct and streak as rightPct and streak do', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(settledCall, { maxLength: 25 }), async (calls) => {
        const [user] = await tdb.db.query(sql`insert into users (handle, display_name) values (${`r${++people}`}, 'R') returning id`);
        const base = Date.parse('2026-06-01T00:00:00Z');
        const rows = calls.map((c, i) => ({
          // Zero-padded ASCII ids sort the same in JavaScript and in the database's collation.
          id: `r${people}-${String(i).padStart(3, '0')}`,
          status: c.status,
          madeAt: new Date(base + c.madeMinute * 60_000),
          settledAt: c.status === 'open' ? null : new Date(base + 3_600_000 + c.settledMinute * 60_000),
        }));
        // Input: the generated calls. Output: none; settled ones carry a profit as settlement leaves it.
        await tdb.db.query(sql`
          insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, made_at, settled_at)
          select id, ${user.id}, 'base', 0, 0.5, status,
                 case status when 'open' then null when 'won' then 10 when 'lost' then -10 else 0 end, made_at, settled_at
          from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.status)}::text[],
                      ${rows.map((r) => r.madeAt)}::timestamptz[], ${rows.map((r) => r.settledAt)}::timestamptz[])
               as t(id, status, made_at, settled_at)`);
        await projectChanges(tdb.db, { userIds: [user.id], marketIds: [] }, new Date(base + 86_400_000));
        const [record] = await tdb.db.query(sql`select right_pct, streak, won, lost from user_records where user_id = ${user.id}`);
        const settled = rows
          .filter((r): r is typeof r & { settledAt: Date; status: 'won' | 'lost' | 'void' } => r.settledAt !== null)
          .sort((a, b) => b.settledAt.getTime() - a.settledAt.getTime() || b.madeAt.getTime() - a.madeAt.getTime() || (a.id < b.id ? 1 : -1));
        const won = rows.filter((r) => r.status === 'won').length;
        const lost = rows.filter((r) => r.status === 'lost').length;
        expect(record).toEqual({ right_pct: rightPct(won, lost), streak: streak(settled.map((r) => r.status)), won, lost });
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
