import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { leaderboardRowSchema } from '@pm/shared/api';
import { clvOf, LEADERBOARD_SORTS, profitOn10, rankBoard, rightPct, WEEK_MS, WINDOW_MS, windowRecords, xpIfRight, type BoardRecord, type BoardWindow, type FieldKey, type SkillCall } from '@pm/shared/domain';
import { sql } from '@pm/shared/db';
import { createTestDatabase, type TestDatabase } from '@pm/shared/testing';
import { boardPage, userSkill, type BoardQuery } from './skill-pages.js';

/**
 * The computed boards (skill-pages.ts) held equal to the domain's definition on random data: every
 * window × field × sort ranks the people windowRecords + rankBoard rank, in that order, with their
 * figures; a board is ranked as of its instant (a call settled after it changes nothing); `around`
 * puts the person on the page. The window boards read the kept window rows as the worker keeps them
 * (the calls settled in each span's (since, through], which lag or lead the window's start and the
 * instant, or no rows before a first rebuild), corrected to the board's window.
 */

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('skill_boards');
});
afterAll(async () => {
  await tdb?.drop();
});

const asOf = new Date('2026-09-30T12:00:00Z');
const HOUR = 3_600_000;
const MARKETS = [
  { id: 'mf', event: 'ef', category: 'Football', league: 'epl' },
  { id: 'mf2', event: 'ef', category: 'Football', league: 'epl' },
  { id: 'mc', event: 'ec', category: 'Crypto', league: null },
] as const;

const call = fc.record({
  person: fc.integer({ min: 0, max: 3 }),
  market: fc.integer({ min: 0, max: 2 }),
  outcome: fc.integer({ min: 0, max: 1 }),
  chance: fc.integer({ min: 1, max: 19 }).map((n) => n / 20),
  status: fc.constantFrom('won', 'lost', 'lost', 'won', 'void', 'open'),
  // Hours before the instant: inside a day, a week, a month, older, and after it (-1).
  hoursAgo: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 1000 }), fc.constant(-1)),
});
// Per span: its kept rows' range, in hours from the window's start and from the instant (null: never built).
const since = fc.option(fc.tuple(fc.integer({ min: -60, max: 60 }), fc.integer({ min: -30, max: 30 })), { nil: null });
// The field records' edge, in hours from the instant (null: no edge, every settled call counted).
const fieldThrough = fc.option(fc.integer({ min: -1200, max: 30 }), { nil: null });
const closing = fc.option(fc.tuple(fc.integer({ min: 1, max: 19 }).map((n) => n / 20), fc.integer({ min: 1, max: 19 }).map((n) => n / 20)), { nil: null });

describe('computed boards against the domain', () => {
  it('rank every window, field and sort as windowRecords and rankBoard do', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.stringMatching(/^[a-zA-Z]{1,3}$/), { selector: (h) => h.toLowerCase(), minLength: 4, maxLength: 4 }),
        fc.array(call, { minLength: 10, maxLength: 60 }),
        fc.array(closing, { minLength: 3, maxLength: 3 }),
        fc.tuple(since, since, since),
        fieldThrough,
        async (handles, calls, closings, sinces, fieldHours) => {
          const db = tdb.db;
          await db.query(sql`truncate user_field_edges, user_window_edges, user_window_records, user_field_records, user_records, calls, outcomes, markets, events, users restart identity cascade`);
          await db.query(sql`insert into events (id, slug, title, category, league) values ('ef', 'ef', 'F', 'Football', 'epl'), ('ec', 'ec', 'C', 'Crypto', null)`);
          for (const [i, m] of MARKETS.entries()) {
            const c = closings[i];
            await db.query(sql`insert into markets (id, event_id, condition_id, position, question, closed, closing_chances)
                               values (${m.id}, ${m.event}, ${m.id}, ${i}, ${m.id}, ${c !== null && c !== undefined}, ${c ? [c[0], c[1]] : null}::numeric[])`);
            await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) values (${m.id}, 0, 'Yes', ${`${m.id}-0`}), (${m.id}, 1, 'No', ${`${m.id}-1`})`);
          }
          const ids: number[] = [];
          for (const h of handles) ids.push(((await db.query(sql`insert into users (handle, display_name) values (${h}, ${h}) returning id`)) as [{ id: number }])[0].id);
          const rows = calls.map((c, i) => {
            const settled = c.status !== 'open';
            return {
              id: `k${String(i).padStart(3, '0')}`, userId: ids[c.person]!, market: MARKETS[c.market]!, outcome: c.outcome, chance: c.chance,
              status: c.status as SkillCall['status'],
              profit: settled ? profitOn10(c.status as SkillCall['status'], c.chance) : null,
              xp: c.status === 'won' ? xpIfRight(c.chance) : 0,
              settledAt: settled ? new Date(asOf.getTime() - c.hoursAgo * HOUR - 1000) : null,
            };
          });
          // Input: the generated calls. Output: none.
          await db.query(sql`
            insert into calls (id, user_id, market_id, outcome_index, chance_at_call, status, profit_on_10, xp_awarded, made_at, settled_at)
            select id, user_id, market_id, outcome_index, chance, status, profit, xp, ${new Date(asOf.getTime() - 2000 * HOUR)}, settled_at
            from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.userId)}::bigint[], ${rows.map((r) => r.market.id)}::text[],
                        ${rows.map((r) => r.outcome)}::int[], ${rows.map((r) => r.chance)}::numeric[], ${rows.map((r) => r.status)}::text[],
                        ${rows.map((r) => r.profit)}::numeric[], ${rows.map((r) => r.xp)}::int[], ${rows.map((r) => r.settledAt)}::timestamptz[])
                 as t(id, user_id, market_id, outcome_index, chance, status, profit, xp, settled_at)`);
          const skillCalls: SkillCall[] = rows.map((r) => {
            const c = closings[MARKETS.indexOf(r.market)];
            return {
              userId: r.userId, status: r.status, chanceAtCall: r.chance, closingChance: c ? c[r.outcome]! : null, profitOn10: r.profit,
              xpAwarded: r.xp, settledAt: r.settledAt, category: r.market.category, league: r.market.league,
            };
          });
          // The all-time field records as the worker keeps them (its SQL is held equal to windowRecords in rules.int.test.ts),
          // counting the calls settled up to their edge, before or after the instant (no edge: every
          // settled call); the board adds or takes off those in between.
          const future = new Date(asOf.getTime() + 1000 * HOUR);
          const fieldEdge = fieldHours === null ? null : new Date(asOf.getTime() + fieldHours * HOUR);
          if (fieldEdge !== null) await db.query(sql`insert into user_field_edges (through) values (${fieldEdge})`);
          const inFieldRows = skillCalls.filter((c) => fieldEdge === null || (c.settledAt !== null && c.settledAt <= fieldEdge));
          for (const field of ['c:Football', 'c:Crypto', 'l:epl'] as const) {
            for (const w of windowRecords(inFieldRows, new Map(), 'all', field, future)) {
              await db.query(sql`
                insert into user_field_records (user_id, field, settled, won, lost, profit_on_10, xp, brier_sum, clv_sum, clv_calls)
                values (${w.userId}, ${field}, ${w.settled}, ${w.won}, ${w.lost}, ${w.profitOn10}, ${w.xp},
                        ${(Number(w.brierSum) / 1e12).toFixed(12)}::numeric, ${(Number(w.clvSum) / 1e6).toFixed(6)}::numeric, ${w.clvCalls})`);
            }
          }
          // The window rows as the worker keeps them (rules.int.test.ts holds its SQL equal to windowRecords): per
          // span, the calls settled after its since, in every field ('') and each category and league.
          for (const [i, span] of (['day', 'week', 'month'] as const).entries()) {
            const offset = sinces[i];
            if (offset === null || offset === undefined) continue;
            const from = new Date(asOf.getTime() - WINDOW_MS[span] + offset[0] * HOUR);
            const through = new Date(asOf.getTime() + offset[1] * HOUR);
            await db.query(sql`insert into user_window_edges (span, since, through) values (${span}, ${from}, ${through})`);
            const kept = skillCalls.filter((c) => c.settledAt !== null && c.settledAt > from && c.settledAt <= through);
            for (const field of [null, 'c:Football', 'c:Crypto', 'l:epl'] as const) {
              for (const w of windowRecords(kept, new Map(), 'all', field, future)) {
                await db.query(sql`
                  insert into user_window_records (span, field, user_id, settled, won, lost, profit_on_10, xp, brier_sum, clv_sum, clv_calls)
                  values (${span}, ${field ?? ''}, ${w.userId}, ${w.settled}, ${w.won}, ${w.lost}, ${w.profitOn10}, ${w.xp},
                          ${(Number(w.brierSum) / 1e12).toFixed(12)}::numeric, ${(Number(w.clvSum) / 1e6).toFixed(6)}::numeric, ${w.clvCalls})`);
              }
            }
          }
          const byHandle = new Map(ids.map((id, i) => [id, handles[i]!]));
          const variants: Array<[BoardWindow, FieldKey | null]> = [
            ...(['day', 'week', 'month'] as const).flatMap((w) => [null, 'c:Football', 'l:epl'].map((f) => [w, f as FieldKey | null] as [BoardWindow, FieldKey | null])),
            ['all', 'c:Football'], ['all', 'c:Crypto'], ['all', 'l:epl'], ['all', 'l:none'],
          ];
          for (const [window, field] of variants) {
            const records = windowRecords(skillCalls, byHandle, window, field, asOf);
            for (const sort of ['profit', 'right', 'xp', 'clv', 'brier'] as const) {
              const q: BoardQuery = { sort, window, field, asOf };
              const page = await db.tx((tx) => boardPage(tx, q, { after: 0 }, 100));
              const got = page!.bodies.map((b) => leaderboardRowSchema.parse(JSON.parse(b)));
              const want = rankBoard(sort, records).map((id) => records.find((r) => r.userId === id)!);
              const label = `${sort} ${window} ${field ?? 'every field'}`;
              expect(got.map((r) => r.handle), label).toEqual(want.map((r) => r.handle));
              expect(got.map((r) => r.rank), label).toEqual(want.map((_, i) => i + 1));
              for (const [i, r] of got.entries()) {
                const w = want[i]!;
                expect({ settled: r.settled, right: r.right_pct, profit: r.profit_on_10, xp: r.xp }, label).toEqual({ settled: w.settled, right: w.rightPct, profit: w.profitOn10, xp: w.xp });
                // The domain's figure (halves away from zero, as Postgres rounds numeric): a JavaScript
                // Math.round of the mean took -0.20625 to -0.2062 where both give -0.2063.
                expect(r.clv, label).toEqual(clvOf(w));
                expect(r.brier !== null, label).toBe(w.decided > 0);
              }
              // around: the person in the middle of a page of 3 (where the ranks allow).
              const who = want[Math.floor(want.length / 2)];
              if (who !== undefined) {
                const around = await db.tx((tx) => boardPage(tx, q, { around: who.handle.toLowerCase() }, 3));
                expect(around!.bodies.map((b) => leaderboardRowSchema.parse(JSON.parse(b)).handle), label).toContain(who.handle);
              }
            }
          }
          expect(await db.tx((tx) => boardPage(tx, { sort: 'profit', window: 'day', field: null, asOf }, { around: 'nobody-here' }, 3))).toBeNull();
        },
      ),
      { numRuns: 8 },
    );
  }, 240_000);
});

// A person's record as the all-time boards see it, drawn from small ranges so that scores, settled
// counts and means tie often (ties go to settled, then the handle).
const record = fc
  .record({
    won: fc.integer({ min: 0, max: 8 }),
    lost: fc.integer({ min: 0, max: 8 }),
    voided: fc.integer({ min: 0, max: 3 }),
    cents: fc.integer({ min: -6, max: 6 }).map((n) => n * 250),
    xp: fc.integer({ min: 0, max: 4 }).map((n) => n * 10),
    week: fc.option(fc.integer({ min: -3, max: 3 }).map((n) => n * 500), { nil: null }),
    brier: fc.integer({ min: 0, max: 4 }).map((n) => BigInt(n) * 62_500_000_000n),
    clv: fc.integer({ min: -3, max: 3 }).map((n) => BigInt(n) * 50_000n),
    clvCalls: fc.integer({ min: 0, max: 3 }),
  })
  .filter((r) => r.won + r.lost + r.voided > 0 || r.week === null);

describe("a person's ranks", () => {
  it('are their places on every all-time board as rankBoard ranks them, ties included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.stringMatching(/^[a-zA-Z]{1,3}$/), { selector: (h) => h.toLowerCase(), minLength: 3, maxLength: 12 }).chain((handles) =>
          fc.tuple(fc.constant(handles), fc.array(record, { minLength: handles.length, maxLength: handles.length })),
        ),
        async ([handles, drawn]) => {
          const db = tdb.db;
          await db.query(sql`truncate user_field_edges, user_window_edges, user_window_records, user_field_records, user_records, calls, outcomes, markets, events, users restart identity cascade`);
          const records: BoardRecord[] = [];
          for (const [i, h] of handles.entries()) {
            const r = drawn[i]!;
            const settled = r.won + r.lost + r.voided;
            const decided = r.won + r.lost;
            const clvCalls = Math.min(r.clvCalls, decided);
            const [{ id }] = (await db.query(sql`insert into users (handle, display_name) values (${h}, ${h}) returning id`)) as [{ id: number }];
            const rec: BoardRecord = {
              userId: id, handle: h, settled, rightPct: rightPct(r.won, r.lost), profitOn10: r.cents / 100, profit7d: (r.week ?? 0) / 100, xp: r.xp,
              playedThisWeek: r.week !== null && settled > 0, decided, brierSum: decided > 0 ? r.brier : 0n, clvSum: clvCalls > 0 ? r.clv : 0n, clvCalls,
            };
            records.push(rec);
            // Played this week: a settlement an hour ago; otherwise eight days ago (or never).
            const lastSettled = settled === 0 ? null : new Date(asOf.getTime() - (rec.playedThisWeek ? HOUR : WEEK_MS + 24 * HOUR));
            await db.query(sql`
              insert into user_records (user_id, calls, settled, won, lost, right_pct, profit_on_10, profit_7d, xp, brier_sum, clv_sum, clv_calls, last_settled_at)
              values (${id}, ${settled}, ${settled}, ${r.won}, ${r.lost}, ${rec.rightPct}, ${rec.profitOn10}, ${rec.profit7d}, ${rec.xp},
                      ${(Number(rec.brierSum) / 1e12).toFixed(12)}::numeric, ${(Number(rec.clvSum) / 1e6).toFixed(6)}::numeric, ${clvCalls}, ${lastSettled})`);
          }
          const want = new Map(LEADERBOARD_SORTS.map((sort) => [sort, rankBoard(sort, records)]));
          for (const rec of records) {
            const skill = await db.tx((tx) => userSkill(tx, rec.handle.toLowerCase(), null, asOf));
            for (const sort of LEADERBOARD_SORTS) {
              const place = want.get(sort)!.indexOf(rec.userId);
              expect(skill!.ranks[sort], `${rec.handle} on ${sort}`).toBe(place === -1 ? null : place + 1);
            }
          }
          expect(await db.tx((tx) => userSkill(tx, 'nobody-here', null, asOf))).toBeNull();
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
