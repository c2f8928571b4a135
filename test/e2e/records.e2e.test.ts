import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  callListResponseSchema,
  comboListResponseSchema,
  leaderboardResponseSchema,
  userCallsResponseSchema,
  userResponseSchema,
  type Call,
  type CallStatus,
} from '@pm/shared/api';
import { startStack, type Stack } from '../support/stack.js';
import * as waiting from '@pm/shared/wait';

/**
 * Calls, combos and records end to end: the run line starts the simulator with the demo crowd, and
 * within 90 s of the API answering, the crowd's calls have reached every status through the real
 * settlement path (simulator → ingestor → settlement worker → projections → snapshots → API).
 */
let stack: Stack;
let readyAt = 0;
const WITHIN_MS = 90_000;

beforeAll(async () => {
  // The checks below poll many people's lists; the 120-a-minute rate limit is not what they test.
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  readyAt = Date.now();
});

afterAll(async () => {
  await stack?.stop();
});

async function get<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S> | undefined> {
  const res = await fetch(`${stack.apiUrl}${path}`);
  if (res.status !== 200) return undefined;
  return schema.parse(await res.json());
}

/** Poll until `check` returns a value, or fail at the 90 s mark (from readiness) with the last thing seen. */
const eventually = <T>(what: string, check: () => Promise<T | undefined>) =>
  waiting.until(`${what} within ${WITHIN_MS / 1000} s`, check, { timeoutMs: Math.max(0, readyAt + WITHIN_MS - Date.now()), everyMs: 1000, context: () => stack.logs() });

const STATUSES: CallStatus[] = ['open', 'won', 'lost', 'void'];

describe('the demo crowd through the whole stack', () => {
  it('reaches calls in all four statuses', async () => {
    const seen = await eventually('calls in every status', async () => {
      const board = await get('/api/v1/leaderboard?sort=profit&limit=100', leaderboardResponseSchema);
      const found = new Map<CallStatus, Call>();
      for (const row of board?.rows ?? []) {
        for (const status of STATUSES) {
          if (found.has(status)) continue;
          const list = await get(`/api/v1/users/${row.handle}/calls?status=${status}&limit=1`, userCallsResponseSchema);
          const call = list?.calls[0];
          if (call) found.set(status, call);
        }
        if (found.size === STATUSES.length) return found;
      }
      return undefined;
    });
    for (const status of STATUSES) {
      const call = seen.get(status);
      expect(call?.status).toBe(status);
      expect(call?.profit_on_10 === null).toBe(status === 'open');
      expect(call?.settled_at === null).toBe(status === 'open');
    }
    expect(seen.get('lost')?.profit_on_10).toBe(-10);
    expect(seen.get('void')?.profit_on_10).toBe(0);
    const won = seen.get('won');
    expect(won?.profit_on_10).toBeCloseTo(10 / (won?.chance_at_call ?? 1) - 10, 1);
  });

  it('lists the newest calls, newest first', async () => {
    const body = await eventually('a call list', () => get('/api/v1/calls?limit=100', callListResponseSchema).then((b) => (b && b.count > 0 ? b : undefined)));
    const times = body.calls.map((c) => Date.parse(c.made_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('has combos open, won and lost', async () => {
    for (const status of ['open', 'won', 'lost'] as const) {
      const body = await eventually(`a ${status} combo`, () =>
        get(`/api/v1/combos?status=${status}`, comboListResponseSchema).then((b) => (b && b.count > 0 ? b : undefined)),
      );
      expect(body.status).toBe(status);
      expect(body.combos.every((c) => c.status === status && c.legs.length >= 2)).toBe(true);
      if (status === 'lost') expect(body.combos.every((c) => c.legs.some((l) => l.status === 'lost'))).toBe(true);
      if (status === 'won') expect(body.combos.every((c) => c.legs.every((l) => l.status !== 'lost' && l.status !== 'open'))).toBe(true);
    }
  });

  it('ranks at least 10 people with 5 or more settled calls on the `right` leaderboard', async () => {
    const body = await eventually('10 people on the right leaderboard', () =>
      get('/api/v1/leaderboard?sort=right&limit=100', leaderboardResponseSchema).then((b) => (b && b.count >= 10 ? b : undefined)),
    );
    expect(body.rows.every((r) => r.settled >= 5)).toBe(true);
    expect(body.rows.map((r) => r.rank)).toEqual(body.rows.map((_, i) => i + 1));
  });

  it("keeps every ranked person's record in agreement with the calls listed for them", async () => {
    const board = await eventually('10 people on the profit leaderboard', () =>
      get('/api/v1/leaderboard?sort=profit&limit=100', leaderboardResponseSchema).then((b) => (b && b.count >= 10 ? b : undefined)),
    );
    // The crowd keeps calling, so a record and a list read a moment apart may differ by a call:
    // each person is read until one reading agrees, which a record that miscounts never gives.
    const disagreeing: string[] = [];
    for (const row of board.rows) {
      const last: { reading?: unknown } = {};
      const agreed = await waiting.until(
        `${row.handle}'s record to agree with their calls`,
        async () => {
          const user = await get(`/api/v1/users/@${row.handle.toUpperCase()}`, userResponseSchema);
          const list = await get(`/api/v1/users/${row.handle}/calls?limit=100`, userCallsResponseSchema);
          if (!user || !list) return undefined;
          const settled = list.calls.filter((c) => c.status !== 'open');
          const won = settled.filter((c) => c.status === 'won').length;
          const lost = settled.filter((c) => c.status === 'lost').length;
          const profit = Math.round(settled.reduce((sum, c) => sum + (c.profit_on_10 ?? 0), 0) * 100) / 100;
          const fromCalls = {
            calls: list.count,
            settled: settled.length,
            won,
            right_pct: won + lost === 0 ? 0 : Math.round((100 * won) / (won + lost)),
            profit_on_10: profit,
          };
          const record = { calls: user.user.calls, settled: user.user.settled, won: user.user.won, right_pct: user.user.right_pct, profit_on_10: user.user.profit_on_10 };
          last.reading = { record, fromCalls };
          // A list holds 100 calls at most: past that only the count can be compared.
          if (user.user.calls > 100) return user.user.calls === list.count;
          return (
            user.user.handle.toLowerCase() === row.handle.toLowerCase() &&
            record.calls === fromCalls.calls &&
            record.settled === fromCalls.settled &&
            record.won === fromCalls.won &&
            record.right_pct === fromCalls.right_pct &&
            Math.abs(record.profit_on_10 - fromCalls.profit_on_10) < 0.005
          );
        },
        { timeoutMs: 15_000, everyMs: 250 },
      ).catch(() => false);
      if (!agreed) disagreeing.push(`${row.handle}: ${JSON.stringify(last.reading)}`);
    }
    expect(disagreeing, 'records that never agreed with their calls').toEqual([]);
    expect(board.rows.length).toBeGreaterThanOrEqual(10);
  });
});
