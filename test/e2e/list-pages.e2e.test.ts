import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  callListResponseSchema,
  comboListResponseSchema,
  leaderboardResponseSchema,
  marketEventResponseSchema,
  userCallsResponseSchema,
} from '@pm/shared/api';
import { createDb, sql, type Db } from '@pm/shared/db';
import { startStack, type Stack } from '../support/stack.js';
import { until } from '@pm/shared/wait';

/**
 * Paging and links through the whole stack while the demo crowd plays:
 * walking each of the four lists with its cursors returns every item that was on it when the walk
 * began exactly once (the database says which those were), and every call's market id leads to its
 * event through /markets/by-id. One stack for the file.
 */
let stack: Stack;
let db: Db;

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
  db = createDb(stack.databaseUrl, { poolSize: 2 });
  // The crowd's showcase writes backdated calls (made days ago); walks start once it is over and
  // settled: won and lost combos exist, and the first page of calls is full.
  await until(
    'the crowd showcase settled',
    async () => {
      const [row]: Array<{ won: number; lost: number; calls: number }> = await db.query(sql`
        select count(*) filter (where status = 'won')::int as won, count(*) filter (where status = 'lost')::int as lost,
               (select count(*)::int from calls) as calls
        from combos`);
      return row && row.won > 0 && row.lost > 0 && row.calls > 100 ? row : undefined;
    },
    { timeoutMs: 150_000, everyMs: 1000, context: () => stack.logs() },
  );
});

afterAll(async () => {
  await db?.dispose();
  await stack?.stop();
});

async function ok<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
  const res = await fetch(`${stack.apiUrl}${path}`);
  const body: unknown = await res.json();
  expect(res.status, `${path}: ${JSON.stringify(body).slice(0, 300)}`).toBe(200);
  return schema.parse(body);
}

/** Follows next_cursor to the end; the items' keys in walk order. */
async function walk<T>(first: string, read: (path: string) => Promise<{ items: T[]; next: string | null }>, key: (item: T) => string): Promise<string[]> {
  const keys: string[] = [];
  let page = await read(first);
  for (let pages = 1; ; pages++) {
    keys.push(...page.items.map(key));
    if (page.next === null) return keys;
    expect(pages).toBeLessThan(400);
    page = await read(`${first}${first.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(page.next)}`);
  }
}

/** The ids of every item a list of calls or combos pages through from `path`. */
function walkIds<S extends z.ZodType<{ next_cursor: string | null }>>(path: string, schema: S, items: (body: z.output<S>) => Array<{ id: string }>): Promise<string[]> {
  return walk(
    path,
    async (p) => {
      const body = await ok(p, schema);
      return { items: items(body), next: body.next_cursor };
    },
    (item) => item.id,
  );
}

/**
 * Ids of `table` (calls or combos) matching `where`, at or after (in list order: newest first) the
 * item `head`, committed at least two seconds before now: what the list held below its first item
 * when a walk's first page was read. Anything else a walk meets arrived during it.
 */
async function heldBelow(table: 'calls' | 'combos', where: ReturnType<typeof sql>, head: string): Promise<string[]> {
  const rows: Array<{ id: string }> = await db.query(sql`
    select t.id from ${sql.ident(table)} t, (select made_at, id from ${sql.ident(table)} where id = ${head}) h
    where ${where} and (t.made_at, t.id) <= (h.made_at, h.id) and t.made_at < now() - interval '2 seconds'
  `);
  return rows.map((r) => r.id);
}

/** Every id of `expected` exactly once in `walked`, which repeats nothing. */
function expectEachOnce(walked: string[], expected: string[]): void {
  expect(new Set(walked).size, 'no item twice').toBe(walked.length);
  const seen = new Set(walked);
  expect(expected.filter((id) => !seen.has(id)), 'items missed').toEqual([]);
}

describe('walking the lists while the crowd plays', () => {
  it('/calls returns every call on it when the walk began, once', async () => {
    const first = await ok('/api/v1/calls?limit=10', callListResponseSchema);
    const expected = await heldBelow('calls', sql`true`, first.calls[0]!.id);
    const walked = await walkIds('/api/v1/calls?limit=10', callListResponseSchema, (b) => b.calls);
    expect(expected.length).toBeGreaterThan(100);
    expectEachOnce(walked, expected);
  });

  it("/users/{handle}/calls returns every one of a person's calls once", async () => {
    const [top]: Array<{ handle: string; id: number }> = await db.query(sql`
      select u.handle, u.id from users u join calls c on c.user_id = u.id group by u.id order by count(*) desc limit 1`);
    const path = `/api/v1/users/${top!.handle}/calls?limit=3`;
    const first = await ok(path, userCallsResponseSchema);
    const expected = await heldBelow('calls', sql`t.user_id = ${top!.id}`, first.calls[0]!.id);
    const walked = await walkIds(path, userCallsResponseSchema, (b) => b.calls);
    expect(expected.length).toBeGreaterThan(3);
    expectEachOnce(walked, expected);
  });

  it('/combos returns every combo of a settled status once', async () => {
    // A settled status: combos join it as markets resolve and never leave it.
    for (const status of ['lost', 'won'] as const) {
      const path = `/api/v1/combos?status=${status}&limit=1`;
      const first = await ok(path, comboListResponseSchema);
      const expected = await heldBelow('combos', sql`t.status = ${status}`, first.combos[0]!.id);
      const walked = await walkIds(path, comboListResponseSchema, (b) => b.combos);
      expectEachOnce(walked, expected);
    }
  });

  it('/leaderboard returns the ranking its first page showed: each person once, in rank order', async () => {
    const rows: Array<{ rank: number; handle: string }> = [];
    let version: number | undefined;
    await walk('/api/v1/leaderboard?limit=3', async (p) => {
      const b = await ok(p, leaderboardResponseSchema);
      rows.push(...b.rows);
      if (version === undefined && b.next_cursor) {
        version = (JSON.parse(Buffer.from(b.next_cursor.split('.')[0]!, 'base64url').toString()) as { version: number }).version;
      }
      return { items: b.rows, next: b.next_cursor };
    }, (r) => r.handle);
    expect(version).toBeDefined();
    // The board of that version, as the database keeps it (migration 0005).
    const ranking: Array<{ handle: string }> = await db.query(sql`
      select u.handle from (
        select rank, user_id from leaderboard_rows where sort = 'profit' and from_version <= ${version}
        union all
        select rank, user_id from leaderboard_retired where sort = 'profit' and from_version <= ${version} and to_version > ${version}
      ) l join users u on u.id = l.user_id order by l.rank`);
    expect(rows.map((r) => r.handle)).toEqual(ranking.map((r) => r.handle));
    expect(rows.map((r) => r.rank)).toEqual(ranking.map((_, i) => i + 1));
  });
});

describe('links', () => {
  it('every call in /calls leads to the event holding its market through /markets/by-id', async () => {
    const { calls } = await ok('/api/v1/calls?limit=100', callListResponseSchema);
    const { combos } = await ok('/api/v1/combos?status=lost&limit=50', comboListResponseSchema);
    const markets = new Map<string, string>();
    for (const c of calls) markets.set(c.market_id, c.event);
    for (const k of combos) for (const leg of k.legs) markets.set(leg.market_id, leg.event);
    expect(markets.size).toBeGreaterThan(5);
    for (const [marketId, slug] of markets) {
      const { event } = await ok(`/api/v1/markets/by-id/${encodeURIComponent(marketId)}`, marketEventResponseSchema);
      expect(event.slug).toBe(slug);
      expect(event.markets.map((m) => m.id)).toContain(marketId);
    }
  });
});
