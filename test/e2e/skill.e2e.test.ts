import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  CATEGORIES,
  LEADERBOARD_SORTS,
  LEADERBOARD_WINDOWS,
  leaderboardResponseSchema,
  marketEventResponseSchema,
  userCallsResponseSchema,
  userResponseSchema,
  type Call,
  type LeaderboardRow,
  type UserRecord,
} from '@pm/shared/api';
import { brierOf, calibration, clvOf, skillSums } from '@pm/shared/domain';
import { startStack, type Stack } from '../support/stack.js';
import { until } from '@pm/shared/wait';

/**
 * Skill records end to end (docs/skill.md): the demo crowd calls, the simulator resolves markets,
 * the ingestor records their closing chances, the worker settles and moves the records. Then, from
 * public data alone — each person's settled calls walked with cursors, and each market's
 * `closing_chance` — every person's brier, calibration and clv is recomputed and must equal their
 * record; every board variant answers with rows consistent with the records, `around` puts the
 * person on the page, and `ranks` agree with the boards.
 */
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '1000000', CROWD_RATE: '10' }, readyTimeoutMs: 180_000 });
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

async function get<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
  const res = await fetch(`${stack.apiUrl}${path}`);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return schema.parse(await res.json());
}

/** Every row of a board, walked with its cursors. */
async function walkBoard(query: string): Promise<LeaderboardRow[]> {
  const rows: LeaderboardRow[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 200; page++) {
    const body: z.output<typeof leaderboardResponseSchema> = await get(`/api/v1/leaderboard?${query}&limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, leaderboardResponseSchema);
    rows.push(...body.rows);
    cursor = body.next_cursor;
    if (cursor === null) return rows;
  }
  throw new Error('a board walk did not end');
}

/** A person's settled calls, walked with cursors (won and lost: the calls the skill figures count). */
async function settledCalls(handle: string): Promise<Call[]> {
  const calls: Call[] = [];
  for (const status of ['won', 'lost'] as const) {
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const body: z.output<typeof userCallsResponseSchema> = await get(`/api/v1/users/${handle}/calls?status=${status}&limit=100${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`, userCallsResponseSchema);
      calls.push(...body.calls);
      cursor = body.next_cursor;
      if (cursor === null) break;
    }
  }
  return calls;
}

const closing = new Map<string, Array<number | null>>();
/** A market's closing chances by outcome, from its public page (fixed once recorded, so read once). */
async function closingChances(marketId: string): Promise<Array<number | null>> {
  const known = closing.get(marketId);
  if (known !== undefined) return known;
  const body = await get(`/api/v1/markets/by-id/${marketId}`, marketEventResponseSchema);
  const market = body.event.markets.find((m) => m.id === marketId);
  const chances = market?.outcomes.map((o) => o.closing_chance) ?? [];
  if (market?.closed === true) closing.set(marketId, chances);
  return chances;
}

/** The skill figures recomputed from public data, and whether the record stood still meanwhile. */
async function recompute(handle: string): Promise<{ record: UserRecord; want: Pick<UserRecord, 'brier' | 'clv' | 'calibration'> } | undefined> {
  const before = (await get(`/api/v1/users/${handle}`, userResponseSchema)).user;
  const calls = await settledCalls(handle);
  const skill = [];
  for (const c of calls) {
    const chances = await closingChances(c.market_id);
    skill.push({ status: c.status, chanceAtCall: c.chance_at_call, closingChance: chances[c.outcome_index] ?? null });
  }
  const after = (await get(`/api/v1/users/${handle}`, userResponseSchema)).user;
  // A settlement in between moves the record: read again.
  if (before.settled !== after.settled) return undefined;
  const sums = skillSums(skill);
  return { record: after, want: { brier: brierOf(sums), clv: clvOf(sums), calibration: calibration(skill) } };
}

describe('skill records through the whole stack', () => {
  let people: string[] = [];

  it('records closing chances and gives someone a closing-line value', { timeout: 460_000 }, async () => {
    people = await until(
      'a person with a clv and one with 10 settled calls',
      async () => {
        const rows = await walkBoard('sort=profit');
        const records = await Promise.all(rows.map((r) => get(`/api/v1/users/${r.handle}`, userResponseSchema)));
        const withClv = records.some((r) => r.user.clv !== null);
        const ten = records.some((r) => r.user.settled >= 10);
        return withClv && ten ? rows.map((r) => r.handle) : undefined;
      },
      // The crowd needs a few resolutions; on a loaded shared machine the first record build alone took minutes.
      { timeoutMs: 420_000, everyMs: 3000, context: () => stack.logs() },
    );
    expect(people.length).toBeGreaterThan(0);
  });

  it('gives every person the brier, calibration and clv their settled calls and the closing chances give', { timeout: 240_000 }, async () => {
    for (const handle of people) {
      const seen = await until(`${handle}'s figures to stand still while read`, () => recompute(handle), { timeoutMs: 60_000, everyMs: 500 });
      expect({ brier: seen.record.brier, clv: seen.record.clv, calibration: seen.record.calibration }, handle).toEqual(seen.want);
    }
  });

  it('answers every board variant with rows consistent with the records, around on the page, ranks as the boards say', { timeout: 300_000 }, async () => {
    const fields = [null, ...CATEGORIES.map((c) => `category=${c}`), 'league=nba'];
    let variants = 0;
    for (const window of LEADERBOARD_WINDOWS) {
      for (const sort of LEADERBOARD_SORTS) {
        if (sort === 'week' && window !== 'week') continue;
        for (const field of fields) {
          const query = [`sort=${sort}`, `window=${window}`, field].filter(Boolean).join('&');
          const rows = await walkBoard(query);
          variants++;
          expect(rows.map((r) => r.rank), query).toEqual(rows.map((_, i) => i + 1));
          expect(new Set(rows.map((r) => r.handle)).size, query).toBe(rows.length);
          if (sort === 'right') expect(rows.every((r) => r.settled >= 5), query).toBe(true);
          if (sort === 'clv' || sort === 'brier') expect(rows.every((r) => r.settled >= 10 && r[sort] !== null), query).toBe(true);
          if (sort === 'brier') expect(rows.map((r) => r.brier)).toEqual([...rows.map((r) => r.brier)].sort((a, b) => (a ?? 0) - (b ?? 0)));
          if (sort === 'clv') expect(rows.map((r) => r.clv)).toEqual([...rows.map((r) => r.clv)].sort((a, b) => (b ?? 0) - (a ?? 0)));
        }
      }
    }
    // Per field: day, month and all × 5 sorts, week × 6.
    expect(variants).toBe(21 * fields.length);

    // The all-time boards of every field against the records, around and ranks: read until nothing moved in between.
    for (const sort of LEADERBOARD_SORTS) {
      const query = sort === 'week' ? 'sort=week' : `sort=${sort}`;
      await until(
        `the ${sort} board to agree with the records`,
        async () => {
          const rows = await walkBoard(query);
          const users = await Promise.all(rows.map((r) => get(`/api/v1/users/${r.handle}`, userResponseSchema)));
          for (const [i, row] of rows.entries()) {
            const u = users[i]!.user;
            const same = row.settled === u.settled && row.won === u.won && row.right_pct === u.right_pct && row.profit_on_10 === u.profit_on_10 && row.xp === u.xp && row.clv === u.clv && row.brier === u.brier;
            if (!same || u.ranks[sort] !== row.rank) return undefined;
          }
          const who = rows[Math.floor(rows.length / 2)];
          if (who !== undefined) {
            const around = await get(`/api/v1/leaderboard?${query}&around=${who.handle}&limit=5`, leaderboardResponseSchema);
            expect(around.rows.map((r) => r.handle), query).toContain(who.handle);
          }
          return true;
        },
        { timeoutMs: 60_000, everyMs: 1000 },
      );
    }
    // A computed board's around, and an unknown person's.
    const month = await walkBoard('sort=profit&window=month');
    const who = month[Math.floor(month.length / 2)];
    if (who !== undefined) {
      const around = await get(`/api/v1/leaderboard?sort=profit&window=month&around=@${who.handle.toUpperCase()}&limit=3`, leaderboardResponseSchema);
      expect(around.rows.map((r) => r.handle)).toContain(who.handle);
    }
    const unknown = await fetch(`${stack.apiUrl}/api/v1/leaderboard?around=nobody_at_all`);
    expect(unknown.status).toBe(404);
    const bad = await fetch(`${stack.apiUrl}/api/v1/leaderboard?sort=week&window=day`);
    expect(bad.status).toBe(400);
  });

  it('gives the figures of one category with ?category=', { timeout: 120_000 }, async () => {
    const handle = people[0];
    if (handle === undefined) throw new Error('no person found by the first test');
    const all = await get(`/api/v1/users/${handle}`, userResponseSchema);
    const counted = (r: UserRecord) => r.calibration.reduce((n, b) => n + b.calls, 0);
    let inCategories = 0;
    for (const category of CATEGORIES) {
      const one = await get(`/api/v1/users/${handle}?category=${category}`, userResponseSchema);
      expect(one.category).toBe(category);
      expect(one.user.settled).toBe(all.user.settled);
      inCategories += counted(one.user);
    }
    // Every decided call is in exactly one category (when nothing settled in between).
    const again = await get(`/api/v1/users/${handle}`, userResponseSchema);
    if (again.user.settled === all.user.settled) expect(inCategories).toBe(counted(all.user));
  });
});
