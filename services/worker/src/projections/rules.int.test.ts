import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  copiesOf, LEADERBOARD_SORTS, micro, platformSplit, profitOn10, rankBoard, rightPct, skillSums, streak, weekProfit, WEEK_MS, WINDOW_MS, windowRecords, xpIfRight,
  type BoardRecord, type SkillCall,
} from '@pm/shared/domain';
import { sql } from '@pm/shared/db';
import { createTestDatabase, type TestDatabase } from '@pm/shared/testing';
import { settleMarket } from '../settlement/settle-market.js';
import { insertMarkets, logResolution } from '../settlement/test-fixture.js';
import { leaderboard, LEADERBOARD_DEPTH } from './leaderboard.js';
import { upkeepWindows, projectChanges } from './run.js';
import { SPANS, windowRecords as windowProjection } from './window-records.js';

/**
 * The rules Postgres computes at scale, held equal to their one definition in shared/src/domain on
 * random data:
 * - settlement (settle-market.ts): a call's profit_on_10 and XP = profitOn10 and xpIfRight;
 * - user_records (user-records.ts): right_pct = rightPct(won, lost); streak = streak(statuses
 *   newest settled first), over calls settled at the same instant too (ties by made_at, then id);
 *   profit_7d = weekProfit (the window's edge included in the data); copies = copiesOf;
 * - market_splits (market-splits.ts): platform_split = platformSplit (latest call per person, ties);
 * - leaderboard_rows (leaderboard.ts): each board's order = rankBoard (ties by settled, then handle);
 * - user_field_records and user_window_records (field-records.ts, window-records.ts): windowRecords.
 * Combo status and combo XP are computed in TypeScript only (settle-market.ts calls comboStatus and
 * comboXp), so they have no SQL twin to hold equal.
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

describe('a settlement\'s delta on user_records against the full projection and the domain', () => {
  const MIN = 60_000;
  // A person's earlier calls, settled around the moments that matter: the 7-day edge between the
  // record's projection and the settlement, the settlement's own instant (a tie), and after it.
  const earlier = fc.record({
    status: fc.constantFrom('won', 'lost', 'void', 'open'),
    settled: fc.oneof(
      fc.integer({ min: -20_000, max: -1 }).map((m) => ({ from: 'settle' as const, m })),
      fc.integer({ min: -3, max: 3 }).map((m) => ({ from: 'edge' as const, m })),
      fc.constantFrom({ from: 'settle' as const, m: 0 }, { from: 'settle' as const, m: 1 }),
    ),
    madeMinute: fc.integer({ min: 0, max: 3 }),
    profitCents: fc.integer({ min: -1000, max: 5000 }),
  });
  // Open calls on the market being settled: outcome, chance, when made (ties by made_at common).
  const open = fc.record({ outcome: fc.integer({ min: 0, max: 1 }), chance, madeMinute: fc.integer({ min: 0, max: 3 }) });
  const person = fc.record({ hasRecord: fc.boolean(), earlier: fc.array(earlier, { maxLength: 8 }), open: fc.array(open, { minLength: 1, maxLength: 4 }) });

  it('gives every figure the full projection gives (and streak, right_pct, profit_7d as the domain does)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(person, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(0, 1, null),
        // Minutes between the record's projection and the settlement (negative: a backdated
        // settlement, older than the record, with everyone's record made first).
        fc.constantFrom(0, 1, 5, 2 * 24 * 60, -5, -2 * 24 * 60, -8 * 24 * 60),
        async (people, winner, gapMinutes) => {
          const marketId = `d${++markets}`;
          await insertMarkets(tdb.db, [marketId]);
          const settleAt = new Date(Date.parse('2026-08-01T00:00:00Z') + markets * 10 * MIN);
          const projectedAt = new Date(settleAt.getTime() - gapMinutes * MIN);
          // The people with a call on the market: the settlement touches no one else (the others'
          // profit_7d follows the clock through the week roll-over, not through a settlement).
          const ids: number[] = [];
          // The records end as of the later of the touched records' time and the settlement's (the
          // settlement's when nobody had a record).
          const asOf = people.some((p) => p.hasRecord) ? new Date(Math.max(settleAt.getTime(), projectedAt.getTime())) : settleAt;
          for (const [p, spec] of people.entries()) {
            const userId = await newUser('d');
            if (spec.open.length > 0) ids.push(userId);
            const rows = spec.earlier.map((c, i) => {
              const settledAt = c.settled.from === 'edge' ? projectedAt.getTime() - WEEK_MS + c.settled.m * MIN * Math.max(1, gapMinutes / 4) : settleAt.getTime() + c.settled.m * MIN;
              return {
                id: `${marketId}-${p}-e${String(i).padStart(2, '0')}`,
                status: c.status,
                profit: c.status === 'open' ? null : c.status === 'lost' ? '-10' : c.status === 'void' ? '0' : (c.profitCents / 100).toFixed(2),
                madeAt: new Date(settleAt.getTime() - 30 * 24 * 60 * MIN + c.madeMinute * MIN),
                settledAt: c.status === 'open' ? null : new Date(settledAt),
              };
            });
            // Input: the generated earlier calls (on 'base'). Output: none.
            await tdb.db.query(sql`
              insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, xp_awarded, made_at, settled_at)
              select id, ${userId}, 'base', 0, 0.5, status, profit::numeric, case when status = 'won' then 55 else 0 end, made_at, settled_at
              from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.status)}::text[], ${rows.map((r) => r.profit)}::text[],
                          ${rows.map((r) => r.madeAt)}::timestamptz[], ${rows.map((r) => r.settledAt)}::timestamptz[])
                   as t(id, status, profit, made_at, settled_at)`);
            // Input: the generated open calls on the market. Output: none.
            await tdb.db.query(sql`
              insert into calls (id, user_id, market_id, outcome_index, chance_at_call, made_at)
              select ${`${marketId}-${p}-o`} || n, ${userId}, ${marketId}, outcome, c::numeric, made_at
              from unnest(${spec.open.map((o) => o.outcome)}::int[], ${spec.open.map((o) => o.chance)}::text[],
                          ${spec.open.map((o) => new Date(settleAt.getTime() - 60 * MIN + o.madeMinute * MIN))}::timestamptz[])
                   with ordinality as t(outcome, c, made_at, n)`);
            // The record as the projection after the person's last change left it (or none yet).
            if (spec.hasRecord) await projectChanges(tdb.db, { userIds: [userId], marketIds: [] }, projectedAt);
          }
          await logResolution(tdb.db, marketId, winner);
          // Closing chances as the ingestor records them at the resolution (some markets have none).
          if (markets % 3 !== 0) await tdb.db.query(sql`update markets set closing_chances = array[0.3125, 0.6875]::numeric[] where id = ${marketId}`);
          // In parts of one to three calls (a part takes a person's calls whole): the parts' deltas
          // together equal the full projection, as one transaction's did.
          await settleMarket(tdb.db, marketId, settleAt, { partCalls: 1 + (markets % 3) });
          const figures = sql`user_id, calls, settled, won, lost, right_pct, profit_on_10::text as profit_on_10, profit_7d::text as profit_7d, xp, streak,
                              brier_sum::numeric(40,20)::text as brier_sum, clv_sum::numeric(40,20)::text as clv_sum, clv_calls, last_settled_at`;
          const byDelta = await tdb.db.query(sql`select ${figures} from user_records where user_id = any(${ids}::bigint[]) order by user_id`);
          await projectChanges(tdb.db, { userIds: ids, marketIds: [] }, asOf);
          const byFull = await tdb.db.query(sql`select ${figures} from user_records where user_id = any(${ids}::bigint[]) order by user_id`);
          expect(byDelta).toEqual(byFull);
          for (const r of byDelta as Array<{ user_id: number; right_pct: number; streak: number; profit_7d: string; won: number; lost: number }>) {
            const calls: Array<{ status: 'won' | 'lost' | 'void'; profit: string; made_at: Date; settled_at: Date; id: string }> = await tdb.db.query(sql`
              select status, profit_on_10::text as profit, made_at, settled_at, id from calls where user_id = ${r.user_id} and status <> 'open'`);
            const newest = [...calls].sort((a, b) => b.settled_at.getTime() - a.settled_at.getTime() || b.made_at.getTime() - a.made_at.getTime() || (a.id < b.id ? 1 : -1));
            expect(r.streak).toBe(streak(newest.map((c) => c.status)));
            expect(r.right_pct).toBe(rightPct(r.won, r.lost));
            expect(Number(r.profit_7d)).toBe(weekProfit(calls.map((c) => ({ profitOn10: Number(c.profit), settledAt: c.settled_at })), asOf));
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 180_000);
});

/** A fresh person with a unique handle; returns their id. */
async function newUser(prefix: string): Promise<number> {
  const [user] = await tdb.db.query(sql`insert into users (handle, display_name) values (${`${prefix}${++people}`}, 'P') returning id`);
  return user.id as number;
}

describe('profit_7d SQL against the domain', () => {
  // Settled this many minutes before `now`: around the 7-day edge (10080 min) and inside it.
  const settledCall = fc.record({
    minutesAgo: fc.oneof(fc.integer({ min: 10_070, max: 10_090 }), fc.integer({ min: 0, max: 20_000 })),
    profitCents: fc.integer({ min: -1000, max: 100_000 }),
  });

  it('sums the profit of calls settled in the last 7 days as weekProfit does', async () => {
    const now = new Date('2026-07-01T00:00:00Z');
    await fc.assert(
      fc.asyncProperty(fc.array(settledCall, { maxLength: 20 }), async (calls) => {
        const userId = await newUser('w');
        const rows = calls.map((c, i) => ({ id: `w${people}-${i}`, profit: (c.profitCents / 100).toFixed(2), settledAt: new Date(now.getTime() - c.minutesAgo * 60_000) }));
        // Input: the generated settled calls. Output: none.
        await tdb.db.query(sql`
          insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, made_at, settled_at)
          select id, ${userId}, 'base', 0, 0.5, 'won', profit::numeric, settled_at - interval '1 day', settled_at
          from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.profit)}::text[], ${rows.map((r) => r.settledAt)}::timestamptz[])
               as t(id, profit, settled_at)`);
        await projectChanges(tdb.db, { userIds: [userId], marketIds: [] }, now);
        const [record] = await tdb.db.query(sql`select profit_7d::text as profit_7d from user_records where user_id = ${userId}`);
        expect(Number(record.profit_7d)).toBe(weekProfit(rows.map((r) => ({ profitOn10: Number(r.profit), settledAt: r.settledAt })), now));
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe('copies SQL against the domain', () => {
  it('counts calls by others copied from a person as copiesOf does', async () => {
    await fc.assert(
      // Each call: its author (one of three people) and which earlier call it copies, if any.
      fc.asyncProperty(fc.array(fc.record({ author: fc.integer({ min: 0, max: 2 }), copies: fc.option(fc.nat(), { nil: null }) }), { maxLength: 20 }), async (spec) => {
        const users = [await newUser('c'), await newUser('c'), await newUser('c')];
        const calls = spec.map((c, i) => ({
          id: `c${people}-${String(i).padStart(3, '0')}`,
          userId: users[c.author] as number,
          copiedFrom: c.copies === null || i === 0 ? null : `c${people}-${String(c.copies % i).padStart(3, '0')}`,
        }));
        // Input: the generated calls, in order (a copy names an earlier call). Output: none.
        for (const c of calls) {
          await tdb.db.query(sql`insert into calls (id, user_id, market_id, outcome_index, chance_at_call, copied_from) values (${c.id}, ${c.userId}, 'base', 0, 0.5, ${c.copiedFrom})`);
        }
        await projectChanges(tdb.db, { userIds: users, marketIds: [] }, new Date());
        const records: Array<{ user_id: number; copies: number }> = await tdb.db.query(sql`select user_id, copies from user_records where user_id = any(${users}::bigint[])`);
        expect(new Map(records.map((r) => [r.user_id, r.copies]))).toEqual(new Map(users.map((u) => [u, copiesOf(u, calls)])));
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe('market_splits SQL against the domain', () => {
  it('splits a market by each person\'s latest call as platformSplit does', async () => {
    const outcomes = ['A', 'B', 'C'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ person: fc.integer({ min: 0, max: 3 }), outcome: fc.integer({ min: 0, max: 2 }), madeMinute: fc.integer({ min: 0, max: 3 }) }), { maxLength: 20 }),
        async (spec) => {
          const marketId = `s${++markets}`;
          await insertMarkets(tdb.db, [marketId], outcomes);
          const users = await Promise.all([0, 1, 2, 3].map(() => newUser('p')));
          const base = Date.parse('2026-06-01T00:00:00Z');
          const calls = spec.map((c, i) => ({
            id: `${marketId}-${String(i).padStart(3, '0')}`,
            userId: users[c.person] as number,
            outcomeIndex: c.outcome,
            madeAt: new Date(base + c.madeMinute * 60_000),
          }));
          // Input: the generated calls on one market. Output: none.
          await tdb.db.query(sql`
            insert into calls (id, user_id, market_id, outcome_index, chance_at_call, made_at)
            select id, user_id, ${marketId}, outcome_index, 0.5, made_at
            from unnest(${calls.map((c) => c.id)}::text[], ${calls.map((c) => c.userId)}::bigint[], ${calls.map((c) => c.outcomeIndex)}::int[],
                        ${calls.map((c) => c.madeAt)}::timestamptz[]) as t(id, user_id, outcome_index, made_at)`);
          await projectChanges(tdb.db, { userIds: [], marketIds: [marketId] }, new Date());
          const rows: Array<{ people: number }> = await tdb.db.query(sql`select people from market_splits where market_id = ${marketId} order by outcome_index`);
          expect(rows.map((r) => r.people)).toEqual(platformSplit(calls, outcomes.length));
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe('leaderboard_rows SQL against the domain', () => {
  let ldb: TestDatabase;
  beforeAll(async () => {
    // A database of its own: a board ranks everyone, so no other test's people may be on it.
    ldb = await createTestDatabase('rules_board');
    await insertMarkets(ldb.db, ['board']);
  });
  afterAll(async () => {
    await ldb?.drop();
  });

  // Small ranges, so equal scores and equal settled counts (ties) are common.
  const record = fc.record({
    settled: fc.integer({ min: 0, max: 7 }),
    rightPct: fc.integer({ min: 0, max: 3 }).map((n) => n * 25),
    profitCents: fc.integer({ min: -2, max: 2 }).map((n) => n * 1050),
    profit7dCents: fc.integer({ min: -1, max: 1 }).map((n) => n * 500),
    xp: fc.integer({ min: 0, max: 3 }).map((n) => n * 10),
    playedThisWeek: fc.boolean(),
    // Skill sums in few distinct values (ties common), people around the 10-settled line.
    skillSettled: fc.integer({ min: 8, max: 12 }),
    decided: fc.integer({ min: 0, max: 3 }),
    brierUnits: fc.integer({ min: 0, max: 4 }),
    clvCalls: fc.integer({ min: 0, max: 2 }),
    clvUnits: fc.integer({ min: -2, max: 2 }),
    skill: fc.boolean(),
  });
  const handles = fc.uniqueArray(fc.stringMatching(/^[a-zA-Z]{1,4}$/), { selector: (h) => h.toLowerCase(), maxLength: 15 });

  it('ranks every board as rankBoard does', async () => {
    const now = new Date('2026-07-01T00:00:00Z');
    await fc.assert(
      fc.asyncProperty(handles.chain((hs) => fc.tuple(fc.constant(hs), fc.array(record, { minLength: hs.length, maxLength: hs.length }))), async ([hs, recs]) => {
        // Input: none. Output: none; the previous run's people gone.
        await ldb.db.query(sql`truncate leaderboard_rows, user_records, calls, users restart identity cascade`);
        const board: BoardRecord[] = [];
        for (const [i, handle] of hs.entries()) {
          const g = recs[i]!;
          // Half the people play the skill boards: more settled calls, some decided, sums that tie often.
          const r = g.skill ? { ...g, settled: g.skillSettled } : { ...g, decided: 0, clvCalls: 0, brierUnits: 0, clvUnits: 0 };
          const won = Math.min(r.decided, 1);
          const lost = r.decided - won;
          const clvCalls = Math.min(r.clvCalls, r.decided);
          const brierSum = r.decided === 0 ? 0 : r.brierUnits * 0.0625;
          const clvSum = clvCalls === 0 ? 0 : r.clvUnits * 0.05;
          const [user] = await ldb.db.query(sql`insert into users (handle, display_name) values (${handle}, 'B') returning id`);
          // The newest of their settled calls (as each settlement keeps it): this week's, or one a fortnight ago.
          const lastSettled = r.settled === 0 ? null : new Date(now.getTime() - (r.playedThisWeek ? WEEK_MS / 2 : 2 * WEEK_MS));
          // Input: one generated record. Output: none.
          await ldb.db.query(sql`
            insert into user_records (user_id, settled, won, lost, right_pct, profit_on_10, profit_7d, xp, brier_sum, clv_sum, clv_calls, last_settled_at)
            values (${user.id}, ${r.settled}, ${won}, ${lost}, ${r.rightPct}, ${(r.profitCents / 100).toFixed(2)}::numeric, ${(r.profit7dCents / 100).toFixed(2)}::numeric, ${r.xp},
                    ${brierSum}::numeric, ${clvSum.toFixed(2)}::numeric, ${clvCalls}, ${lastSettled})`);
          if (r.playedThisWeek) {
            await ldb.db.query(sql`
              insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, settled_at)
              values (${`b${user.id}`}, ${user.id}, 'board', 0, 0.5, 'won', 10, ${new Date(now.getTime() - WEEK_MS / 2)})`);
          }
          board.push({
            userId: user.id, handle, settled: r.settled, rightPct: r.rightPct, profitOn10: r.profitCents / 100, profit7d: r.profit7dCents / 100, xp: r.xp, playedThisWeek: r.playedThisWeek,
            decided: r.decided, brierSum: BigInt(r.brierUnits) * 62_500_000_000n * (r.decided === 0 ? 0n : 1n), clvSum: micro(clvSum), clvCalls,
          });
        }
        await ldb.db.tx((tx) => leaderboard.apply(tx, { all: true, now }));
        const rows: Array<{ sort: string; user_id: number }> = await ldb.db.query(sql`select sort, user_id from leaderboard_rows order by sort, rank`);
        for (const sort of LEADERBOARD_SORTS) {
          expect(rows.filter((r) => r.sort === sort).map((r) => r.user_id), sort).toEqual(rankBoard(sort, board).slice(0, LEADERBOARD_DEPTH));
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe('skill sums and field records SQL against the domain', () => {
  // Settled calls of a few people on a few markets in two fields, some markets with closing chances.
  const call = fc.record({
    person: fc.integer({ min: 0, max: 2 }),
    market: fc.integer({ min: 0, max: 3 }),
    outcome: fc.integer({ min: 0, max: 1 }),
    chance,
  });
  const closing = fc.option(fc.tuple(chance, chance), { nil: null });

  it('moves user_records by the settlement, and user_field_records by it or the upkeep after it, as skillSums and windowRecords say', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(call, { minLength: 1, maxLength: 20 }), fc.array(closing, { minLength: 4, maxLength: 4 }), fc.array(fc.constantFrom(0, 1, null), { minLength: 4, maxLength: 4 }), fc.boolean(), async (calls, closings, winners, lateClock) => {
        const users = [await newUser('k'), await newUser('k'), await newUser('k')];
        const ids = [0, 1, 2, 3].map((m) => `k${++markets}-${m}`);
        await insertMarkets(tdb.db, ids);
        // Markets 2 and 3 are in another category and a league.
        await tdb.db.query(sql`insert into events (id, slug, title, category, league) values ('ev-k', 'k', 'K', 'Crypto', 'btc') on conflict do nothing`);
        await tdb.db.query(sql`update markets set event_id = 'ev-k' where id = any(${ids.slice(2)}::text[])`);
        const rows = calls.map((c, i) => ({ id: `${ids[c.market]}-${i}`, userId: users[c.person]!, market: ids[c.market]!, outcome: c.outcome, chance: c.chance }));
        // Input: the generated calls. Output: none.
        await tdb.db.query(sql`
          insert into calls (id, user_id, market_id, outcome_index, chance_at_call)
          select * from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.userId)}::bigint[], ${rows.map((r) => r.market)}::text[],
                               ${rows.map((r) => r.outcome)}::int[], ${rows.map((r) => r.chance)}::numeric[])`);
        await projectChanges(tdb.db, { userIds: users, marketIds: [] }, new Date());
        // The field records count the calls settled up to their edge: with the edge after the
        // settlements (a settling clock behind the upkeep's) each settlement adds its calls itself;
        // with it before them, the upkeep adds them.
        const edge = new Date(Date.now() + (lateClock ? 3_600_000 : -3_600_000));
        await tdb.db.query(sql`update user_field_edges set through = ${edge}`);
        for (const [m, id] of ids.entries()) {
          await logResolution(tdb.db, id, winners[m]!);
          const c = closings[m];
          if (c) await tdb.db.query(sql`update markets set closing_chances = ${[c[0], c[1]]}::numeric[] where id = ${id}`);
          await settleMarket(tdb.db, id, new Date(Date.now() + m), { partCalls: 1 + (m % 2) });
        }
        const settled: Array<{ user_id: number; status: 'won' | 'lost' | 'void'; chance: string; closing: string | null; profit: string; xp: number; settled_at: Date; category: string; league: string | null }> =
          await tdb.db.query(sql`
            select c.user_id, c.status, c.chance_at_call::text as chance, (m.closing_chances[c.outcome_index + 1])::text as closing,
                   c.profit_on_10::text as profit, c.xp_awarded as xp, c.settled_at, e.category, e.league
            from calls c join markets m on m.id = c.market_id join events e on e.id = m.event_id
            where c.user_id = any(${users}::bigint[])`);
        const skillCalls: SkillCall[] = settled.map((c) => ({
          userId: c.user_id, status: c.status, chanceAtCall: Number(c.chance), closingChance: c.closing === null ? null : Number(c.closing),
          profitOn10: Number(c.profit), xpAwarded: c.xp, settledAt: c.settled_at, category: c.category, league: c.league,
        }));
        const asOf = new Date(Date.now() + 60_000);
        const check = async (through: Date) => {
          const records: Array<{ user_id: number; brier_sum: string; clv_sum: string; clv_calls: number }> = await tdb.db.query(sql`
            select user_id, brier_sum::text, clv_sum::text, clv_calls from user_records where user_id = any(${users}::bigint[])`);
          for (const r of records) {
            const s = skillSums(skillCalls.filter((c) => c.userId === r.user_id));
            expect({ brier: BigInt(Math.round(Number(r.brier_sum) * 1e8)) * 10_000n, clv: micro(Number(r.clv_sum)), n: r.clv_calls }).toEqual({ brier: s.brierSum, clv: s.clvSum, n: s.clvCalls });
          }
          const fields: Array<{ user_id: number; field: string; settled: number; won: number; lost: number; profit_on_10: string; xp: number; brier_sum: string; clv_sum: string; clv_calls: number }> =
            await tdb.db.query(sql`select user_id, field, settled, won, lost, profit_on_10::text, xp, brier_sum::text, clv_sum::text, clv_calls
                                   from user_field_records where user_id = any(${users}::bigint[]) order by field, user_id`);
          const expected = (['c:Sport', 'c:Crypto', 'l:btc'] as const).flatMap((field) =>
            windowRecords(skillCalls.filter((c) => c.settledAt !== null && c.settledAt <= through), new Map(), 'all', field, asOf).map((w) => ({
              user_id: w.userId, field, settled: w.settled, won: w.won, lost: w.lost, profit: w.profitOn10, xp: w.xp, brier: w.brierSum, clv: w.clvSum, n: w.clvCalls,
            })),
          );
          const order = (a: { field: string; user_id: number }, b: { field: string; user_id: number }) => (a.field < b.field ? -1 : a.field > b.field ? 1 : a.user_id - b.user_id);
          const got = fields.map((f) => ({
            user_id: f.user_id, field: f.field, settled: f.settled, won: f.won, lost: f.lost, profit: Number(f.profit_on_10), xp: f.xp,
            brier: BigInt(Math.round(Number(f.brier_sum) * 1e8)) * 10_000n, clv: micro(Number(f.clv_sum)), n: f.clv_calls,
          }));
          expect(got.sort(order)).toEqual(expected.sort(order));
        };
        // By the settlements' deltas (the field records: those up to the edge), then after the
        // upkeep (every call), then recomputed whole: the same rows.
        await check(edge);
        await upkeepWindows(tdb.db, asOf);
        const [moved] = (await tdb.db.query(sql`select through from user_field_edges`)) as [{ through: Date }];
        expect(moved.through.getTime()).toBe(Math.max(edge.getTime(), asOf.getTime()));
        await check(asOf);
        await projectChanges(tdb.db, { userIds: users, marketIds: [] }, asOf);
        await check(asOf);
      }),
      { numRuns: 30 },
    );
  }, 180_000);
});

describe('window records SQL against the domain', () => {
  const HOUR = 3_600_000;
  const call = fc.record({
    person: fc.integer({ min: 0, max: 2 }),
    market: fc.integer({ min: 0, max: 3 }),
    outcome: fc.integer({ min: 0, max: 1 }),
    chance,
  });
  // Each market settles some hours after the rows were built; after it, maybe an upkeep run some hours later.
  const step = fc.record({ settleAfter: fc.integer({ min: 0, max: 40 * 24 }), ageAfter: fc.option(fc.integer({ min: 0, max: 35 * 24 }), { nil: null }) });

  type Row = { span: string; field: string; user_id: number; settled: number; won: number; lost: number; profit: number; xp: number; brier: bigint; clv: bigint; n: number };
  const order = (a: Row, b: Row) => (a.span + a.field < b.span + b.field ? -1 : a.span + a.field > b.span + b.field ? 1 : a.user_id - b.user_id);

  it('keeps, through settlements and the upkeep, the calls settled in each span\'s range, and after the upkeep exactly the window', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(call, { minLength: 1, maxLength: 20 }),
        fc.array(fc.option(fc.tuple(chance, chance), { nil: null }), { minLength: 4, maxLength: 4 }),
        fc.array(fc.constantFrom(0, 1, null), { minLength: 4, maxLength: 4 }),
        fc.array(step, { minLength: 4, maxLength: 4 }),
        async (calls, closings, winners, steps) => {
          const users = [await newUser('w'), await newUser('w'), await newUser('w')];
          const ids = [0, 1, 2, 3].map((m) => `w${++markets}-${m}`);
          await insertMarkets(tdb.db, ids);
          await tdb.db.query(sql`insert into events (id, slug, title, category, league) values ('ev-w', 'w', 'W', 'Crypto', 'eth') on conflict do nothing`);
          await tdb.db.query(sql`update markets set event_id = 'ev-w' where id = any(${ids.slice(2)}::text[])`);
          const rows = calls.map((c, i) => ({ id: `${ids[c.market]}-${i}`, userId: users[c.person]!, market: ids[c.market]!, outcome: c.outcome, chance: c.chance }));
          // Input: the generated calls. Output: none.
          await tdb.db.query(sql`
            insert into calls (id, user_id, market_id, outcome_index, chance_at_call)
            select * from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.userId)}::bigint[], ${rows.map((r) => r.market)}::text[],
                                 ${rows.map((r) => r.outcome)}::int[], ${rows.map((r) => r.chance)}::numeric[])`);
          // The rows built from scratch as a rebuild does, 50 days ago (other tests' calls are newer: counted, not checked).
          const start = Date.now() - 50 * 24 * HOUR;
          await tdb.db.tx(async (tx) => {
            await tx.query(sql`delete from user_window_records`);
            await windowProjection.apply(tx, { all: true, now: new Date(start) });
          });
          const kept = async (): Promise<Row[]> => {
            const got: Array<{ span: string; field: string; user_id: number; settled: number; won: number; lost: number; profit_on_10: string; xp: number; brier_sum: string; clv_sum: string; clv_calls: number }> =
              await tdb.db.query(sql`select span, field, user_id, settled, won, lost, profit_on_10::text, xp, brier_sum::text, clv_sum::text, clv_calls
                                     from user_window_records where user_id = any(${users}::bigint[])`);
            return got.map((f) => ({
              span: f.span, field: f.field, user_id: f.user_id, settled: f.settled, won: f.won, lost: f.lost, profit: Number(f.profit_on_10), xp: f.xp,
              brier: BigInt(Math.round(Number(f.brier_sum) * 1e8)) * 10_000n, clv: micro(Number(f.clv_sum)), n: f.clv_calls,
            })).sort(order);
          };
          const settledCalls = async (): Promise<SkillCall[]> => {
            const settled: Array<{ user_id: number; status: 'won' | 'lost' | 'void'; chance: string; closing: string | null; profit: string; xp: number; settled_at: Date; category: string; league: string | null }> =
              await tdb.db.query(sql`
                select c.user_id, c.status, c.chance_at_call::text as chance, (m.closing_chances[c.outcome_index + 1])::text as closing,
                       c.profit_on_10::text as profit, c.xp_awarded as xp, c.settled_at, e.category, e.league
                from calls c join markets m on m.id = c.market_id join events e on e.id = m.event_id
                where c.user_id = any(${users}::bigint[]) and c.settled_at is not null`);
            return settled.map((c) => ({
              userId: c.user_id, status: c.status, chanceAtCall: Number(c.chance), closingChance: c.closing === null ? null : Number(c.closing),
              profitOn10: Number(c.profit), xpAwarded: c.xp, settledAt: c.settled_at, category: c.category, league: c.league,
            }));
          };
          /** The rows windowRecords gives: per span, over the calls `inSpan` says it counts. */
          const expected = (skillCalls: SkillCall[], inSpan: (span: (typeof SPANS)[number]) => (c: SkillCall) => boolean): Row[] =>
            SPANS.flatMap((span) =>
              ([null, 'c:Sport', 'c:Crypto', 'l:eth'] as const).flatMap((field) =>
                windowRecords(skillCalls.filter(inSpan(span)), new Map(), 'all', field, new Date(start + 1000 * 24 * HOUR)).map((w) => ({
                  span, field: field ?? '', user_id: w.userId, settled: w.settled, won: w.won, lost: w.lost, profit: w.profitOn10, xp: w.xp, brier: w.brierSum, clv: w.clvSum, n: w.clvCalls,
                })),
              ),
            ).sort(order);
          const rangeOf = async () =>
            new Map(((await tdb.db.query(sql`select span, since, through from user_window_edges`)) as Array<{ span: string; since: Date; through: Date }>).map((e) => [e.span, e]));
          let last = start;
          for (const [m, id] of ids.entries()) {
            await logResolution(tdb.db, id, winners[m]!);
            const c = closings[m];
            if (c) await tdb.db.query(sql`update markets set closing_chances = ${[c[0], c[1]]}::numeric[] where id = ${id}`);
            const at = start + steps[m]!.settleAfter * HOUR + m;
            await settleMarket(tdb.db, id, new Date(at), { partCalls: 1 + (m % 3) });
            last = Math.max(last, at);
            const ageAfter = steps[m]!.ageAfter;
            if (ageAfter !== null) {
              last = Math.max(last, at + ageAfter * HOUR);
              await upkeepWindows(tdb.db, new Date(last));
            }
            // After every step: each span's rows count exactly its calls settled in (since, through] (a
            // settlement after `through` waits for the upkeep; one at or before it, a late clock, is added).
            const range = await rangeOf();
            const skillCalls = await settledCalls();
            expect(await kept()).toEqual(expected(skillCalls, (span) => (k) => k.settledAt! > range.get(span)!.since && k.settledAt! <= range.get(span)!.through));
          }
          // The upkeep after the last settlement: each span's rows are its window as of then (the calls
          // settled before it left them), as windowRecords defines the window.
          const end = new Date(last + 1);
          await upkeepWindows(tdb.db, end);
          const skillCalls = await settledCalls();
          const want = expected(skillCalls, (span) => (k) => k.settledAt!.getTime() > end.getTime() - WINDOW_MS[span]);
          expect(await kept()).toEqual(want);
          for (const span of SPANS) {
            for (const field of [null, 'c:Sport', 'c:Crypto', 'l:eth'] as const) {
              const byDomain = windowRecords(skillCalls, new Map(), span, field, end).map((w) => w.userId).sort();
              expect(want.filter((r) => r.span === span && r.field === (field ?? '')).map((r) => r.user_id).sort()).toEqual(byDomain);
            }
          }
          // Recomputed whole for these people: the same rows.
          await projectChanges(tdb.db, { userIds: users, marketIds: [] }, end);
          expect(await kept()).toEqual(want);
        },
      ),
      { numRuns: 25 },
    );
  }, 180_000);
});
