import { z } from 'zod';
import { CALL_STATUSES, COMBO_LIST_SIZE, CALL_LIST_SIZE, LEADERBOARD_SIZE } from '@pm/shared/api';
import { sql, type Db } from '@pm/shared/db';

/**
 * The record snapshot builder's reads: set-based, one statement per kind of row for any number of
 * ids (`= any($ids)`), never one query per call or per user. Rows cross a boundary, so they are
 * parsed with zod; numeric columns are cast to float8 for output only (chances and 2-decimal money
 * print the same either way) and bigint ids come back as numbers (createDb's bigIntMode).
 */

type Queryable = Pick<Db, 'query'>;

const status = z.enum(CALL_STATUSES);
const id = z.union([z.string(), z.number()]).transform(String);

export const callRow = z.object({
  id: z.string(),
  user_id: id,
  handle: z.string(),
  avatar: z.string().nullable(),
  market_id: z.string(),
  event_slug: z.string(),
  question: z.string(),
  outcome: z.string(),
  outcome_index: z.number().int(),
  chance_at_call: z.number(),
  thesis: z.string(),
  copied_from: z.string().nullable(),
  copied_handle: z.string().nullable(),
  is_fade: z.boolean(),
  status,
  profit_on_10: z.number().nullable(),
  made_at: z.date(),
  settled_at: z.date().nullable(),
});
export type CallRow = z.infer<typeof callRow>;

/** The columns and joins every call read shares; `c` is the call. */
const CALL_COLUMNS = sql`
  c.id, c.user_id, u.handle, u.avatar, c.market_id, e.slug as event_slug, m.question, o.name as outcome,
  c.outcome_index, c.chance_at_call::float8 as chance_at_call, c.thesis, c.copied_from,
  cu.handle as copied_handle, c.is_fade, c.status, c.profit_on_10::float8 as profit_on_10,
  c.made_at, c.settled_at
`;
const CALL_JOINS = sql`
  join users u on u.id = c.user_id
  join markets m on m.id = c.market_id
  join events e on e.id = m.event_id
  join outcomes o on o.market_id = c.market_id and o.outcome_index = c.outcome_index
  left join calls cc on cc.id = c.copied_from
  left join users cu on cu.id = cc.user_id
`;

const parseCalls = (rows: unknown[]): CallRow[] => rows.map((r) => callRow.parse(r));

/** inputs: none. outputs: the CALL_LIST_SIZE newest calls, newest first (ties by id desc). */
export async function latestCalls(db: Queryable): Promise<CallRow[]> {
  return parseCalls(
    await db.query(sql`
      select ${CALL_COLUMNS}
      from calls c ${CALL_JOINS}
      order by c.made_at desc, c.id desc
      limit ${CALL_LIST_SIZE}
    `),
  );
}

/** inputs: call ids. outputs: those calls (any order). */
export async function callsById(db: Queryable, ids: readonly string[]): Promise<CallRow[]> {
  if (ids.length === 0) return [];
  return parseCalls(await db.query(sql`select ${CALL_COLUMNS} from calls c ${CALL_JOINS} where c.id = any(${[...ids]}::text[])`));
}

/** inputs: market ids. outputs: the CALL_LIST_SIZE newest calls of each market, newest first per market. */
export async function newestCallsOfMarkets(db: Queryable, marketIds: readonly string[]): Promise<CallRow[]> {
  if (marketIds.length === 0) return [];
  return parseCalls(
    await db.query(sql`
      with ranked as (
        select c.id, row_number() over (partition by c.market_id order by c.made_at desc, c.id desc) as n
        from calls c
        where c.market_id = any(${[...marketIds]}::text[])
      )
      select ${CALL_COLUMNS}
      from ranked r join calls c on c.id = r.id ${CALL_JOINS}
      where r.n <= ${CALL_LIST_SIZE}
      order by c.market_id, c.made_at desc, c.id desc
    `),
  );
}

export interface UserCallRow extends CallRow {
  /** In the person's CALL_LIST_SIZE newest calls (the `all` list). */
  inAll: boolean;
  /** In the person's CALL_LIST_SIZE newest calls of its status (that status's list). */
  inStatus: boolean;
}

/**
 * inputs: user ids. outputs: for each user, every call that is among its CALL_LIST_SIZE newest
 * (`inAll`) or among the CALL_LIST_SIZE newest of its status (`inStatus`) — one row per call, newest
 * first per user — from which the five lists of a person are cut.
 */
export async function newestCallsOfUsers(db: Queryable, userIds: readonly string[]): Promise<UserCallRow[]> {
  if (userIds.length === 0) return [];
  const rows = await db.query(sql`
    with ranked as (
      select c.id,
             row_number() over (partition by c.user_id order by c.made_at desc, c.id desc) as n_all,
             row_number() over (partition by c.user_id, c.status order by c.made_at desc, c.id desc) as n_status
      from calls c
      where c.user_id = any(${userIds.map(Number)}::bigint[])
    )
    select r.n_all <= ${CALL_LIST_SIZE} as in_all, r.n_status <= ${CALL_LIST_SIZE} as in_status, ${CALL_COLUMNS}
    from ranked r join calls c on c.id = r.id ${CALL_JOINS}
    where r.n_all <= ${CALL_LIST_SIZE} or r.n_status <= ${CALL_LIST_SIZE}
    order by c.user_id, c.made_at desc, c.id desc
  `);
  const flags = z.object({ in_all: z.boolean(), in_status: z.boolean() });
  return rows.map((r: unknown) => {
    const f = flags.parse(r);
    return { ...callRow.parse(r), inAll: f.in_all, inStatus: f.in_status };
  });
}

const thesisUpdateRow = z.object({ call_id: z.string(), body: z.string(), at: z.date() });
export type ThesisUpdateRow = z.infer<typeof thesisUpdateRow>;

/** inputs: call ids. outputs: their thesis updates, oldest first per call. */
export async function thesisUpdates(db: Queryable, callIds: readonly string[]): Promise<ThesisUpdateRow[]> {
  if (callIds.length === 0) return [];
  const rows = await db.query(sql`
    select call_id, body, at from thesis_updates where call_id = any(${[...callIds]}::text[]) order by call_id, at, id
  `);
  return rows.map((r: unknown) => thesisUpdateRow.parse(r));
}

const splitRow = z.object({ market_id: z.string(), outcome_index: z.number().int(), people: z.number().int(), has_split: z.boolean() });

/**
 * inputs: market ids. outputs: market id → people per outcome in outcome order, [] when the market
 * has no market_splits rows (nobody has called it) — the same rule as the market snapshots.
 */
export async function platformSplits(db: Queryable, marketIds: readonly string[]): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  if (marketIds.length === 0) return out;
  const rows = await db.query(sql`
    select o.market_id, o.outcome_index, coalesce(s.people, 0)::int as people,
           exists (select 1 from market_splits x where x.market_id = o.market_id) as has_split
    from outcomes o
    left join market_splits s on s.market_id = o.market_id and s.outcome_index = o.outcome_index
    where o.market_id = any(${[...marketIds]}::text[])
    order by o.market_id, o.outcome_index
  `);
  for (const raw of rows) {
    const r = splitRow.parse(raw);
    const list = out.get(r.market_id) ?? [];
    if (r.has_split) list.push(r.people);
    out.set(r.market_id, list);
  }
  return out;
}

export const userRow = z.object({
  id,
  handle: z.string(),
  display_name: z.string(),
  avatar: z.string().nullable(),
  bio: z.string(),
  interests: z.array(z.string()),
  joined_at: z.date(),
  calls: z.number().int(),
  settled: z.number().int(),
  won: z.number().int(),
  right_pct: z.number().int(),
  profit_on_10: z.number(),
  profit_7d: z.number(),
  xp: z.number().int(),
  streak: z.number().int(),
  followers: z.number().int(),
  following: z.number().int(),
  copies: z.number().int(),
});
export type UserRow = z.infer<typeof userRow>;

/**
 * inputs: user ids. outputs: each user with its user_records projection; a user the projections have
 * not reached yet (just created) reads as all zeros, which is what it has.
 */
export async function usersById(db: Queryable, userIds: readonly string[]): Promise<UserRow[]> {
  if (userIds.length === 0) return [];
  const rows = await db.query(sql`
    select u.id, u.handle, u.display_name, u.avatar, u.bio, u.interests, u.joined_at,
           coalesce(r.calls, 0) as calls, coalesce(r.settled, 0) as settled, coalesce(r.won, 0) as won,
           coalesce(r.right_pct, 0) as right_pct, coalesce(r.profit_on_10, 0)::float8 as profit_on_10,
           coalesce(r.profit_7d, 0)::float8 as profit_7d, coalesce(r.xp, 0) as xp, coalesce(r.streak, 0) as streak,
           coalesce(r.followers, 0) as followers, coalesce(r.following, 0) as following, coalesce(r.copies, 0) as copies
    from users u left join user_records r on r.user_id = u.id
    where u.id = any(${userIds.map(Number)}::bigint[])
  `);
  return rows.map((r: unknown) => userRow.parse(r));
}

/** inputs: a user id to start after and a batch size. outputs: the next user ids in id order (full builds page with it). */
export async function userIdsAfter(db: Queryable, after: number, batch: number): Promise<string[]> {
  const rows = await db.query(sql`select id from users where id > ${after} order by id limit ${batch}`);
  return rows.map((r: unknown) => z.object({ id }).parse(r).id);
}

/** inputs: a call id to start after and a batch size. outputs: the next call ids in id order. */
export async function callIdsAfter(db: Queryable, after: string, batch: number): Promise<string[]> {
  const rows = await db.query(sql`select id from calls where id > ${after} order by id limit ${batch}`);
  return rows.map((r: unknown) => z.object({ id: z.string() }).parse(r).id);
}

/** inputs: a market id to start after and a batch size. outputs: the next called market ids in id order. */
export async function calledMarketIdsAfter(db: Queryable, after: string, batch: number): Promise<string[]> {
  const rows = await db.query(sql`
    select distinct market_id from calls where market_id > ${after} order by market_id limit ${batch}
  `);
  return rows.map((r: unknown) => z.object({ market_id: z.string() }).parse(r).market_id);
}

const leaderboardRow = z.object({
  sort: z.enum(['profit', 'right', 'xp', 'week']),
  rank: z.number().int(),
  handle: z.string(),
  display_name: z.string(),
  avatar: z.string().nullable(),
  right_pct: z.number().int(),
  settled: z.number().int(),
  won: z.number().int(),
  profit_on_10: z.number(),
  profit_7d: z.number(),
  xp: z.number().int(),
  streak: z.number().int(),
});
export type LeaderboardDbRow = z.infer<typeof leaderboardRow>;

/**
 * inputs: none. outputs: the top LEADERBOARD_SIZE rows of every sort from the leaderboard_rows
 * projection, by sort then rank. `right` keeps only people with 5 or more settled calls (SPEC.md),
 * whatever the projection holds.
 */
export async function leaderboards(db: Queryable): Promise<LeaderboardDbRow[]> {
  const rows = await db.query(sql`
    select l.sort, l.rank, u.handle, u.display_name, u.avatar,
           coalesce(r.right_pct, 0) as right_pct, coalesce(r.settled, 0) as settled, coalesce(r.won, 0) as won,
           coalesce(r.profit_on_10, 0)::float8 as profit_on_10, coalesce(r.profit_7d, 0)::float8 as profit_7d,
           coalesce(r.xp, 0) as xp, coalesce(r.streak, 0) as streak
    from leaderboard_rows l
    join users u on u.id = l.user_id
    left join user_records r on r.user_id = l.user_id
    where l.rank <= ${LEADERBOARD_SIZE} and (l.sort <> 'right' or coalesce(r.settled, 0) >= 5)
    order by l.sort, l.rank
  `);
  return rows.map((r: unknown) => leaderboardRow.parse(r));
}

const comboRow = z.object({
  id: z.string(),
  handle: z.string(),
  chance: z.number(),
  wins_on_10: z.number(),
  status,
  xp_awarded: z.number().int(),
  made_at: z.date(),
});
export type ComboRow = z.infer<typeof comboRow>;

const legRow = z.object({
  combo_id: z.string(),
  market_id: z.string(),
  question: z.string(),
  outcome: z.string(),
  outcome_index: z.number().int(),
  chance_at_call: z.number(),
  status,
});
export type LegRow = z.infer<typeof legRow>;

/**
 * inputs: none. outputs: the COMBO_LIST_SIZE newest combos of each status (newest first) and their
 * legs in leg order, read in one snapshot of the database so a combo and its legs agree.
 */
export async function newestCombos(db: Db): Promise<{ combos: ComboRow[]; legs: LegRow[] }> {
  return db.tx(async (tx) => {
    await tx.query(sql`set transaction isolation level repeatable read, read only`);
    const combos = (
      await tx.query(sql`
        with ranked as (
          select k.id, row_number() over (partition by k.status order by k.made_at desc, k.id desc) as n from combos k
        )
        select k.id, u.handle, k.chance::float8 as chance, k.wins_on_10::float8 as wins_on_10, k.status, k.xp_awarded, k.made_at
        from ranked r join combos k on k.id = r.id join users u on u.id = k.user_id
        where r.n <= ${COMBO_LIST_SIZE}
        order by k.status, k.made_at desc, k.id desc
      `)
    ).map((r: unknown) => comboRow.parse(r));
    if (combos.length === 0) return { combos, legs: [] };
    const legs = (
      await tx.query(sql`
        select l.combo_id, l.market_id, m.question, o.name as outcome, l.outcome_index,
               l.chance_at_call::float8 as chance_at_call, l.status
        from combo_legs l
        join markets m on m.id = l.market_id
        join outcomes o on o.market_id = l.market_id and o.outcome_index = l.outcome_index
        where l.combo_id = any(${combos.map((c) => c.id)}::text[])
        order by l.combo_id, l.leg_index
      `)
    ).map((r: unknown) => legRow.parse(r));
    return { combos, legs };
  });
}

/**
 * What else a set of dirty records touches.
 * inputs: dirty call ids, user ids, market ids.
 * outputs: calls whose single-call snapshot to rebuild (the dirty ones, and every call on a dirty
 *   market that has resolved: settlement changed them all), users whose record and lists to rebuild
 *   (the dirty ones, the authors of those calls, the authors of the calls they copy — their `copies`
 *   moved — and owners of combos with a leg on a resolved dirty market: their XP may have moved),
 *   and markets whose call list to rebuild (the dirty ones and those of the dirty calls).
 */
export async function expandDirty(
  db: Queryable,
  dirty: { calls: readonly string[]; users: readonly string[]; markets: readonly string[] },
): Promise<{ calls: string[]; users: string[]; markets: string[] }> {
  const rows = await db.query(sql`
    with dc as (
      select id, user_id, market_id, copied_from from calls where id = any(${[...dirty.calls]}::text[])
    ), resolved as (
      select id from markets where id = any(${[...dirty.markets]}::text[]) and (resolved_at is not null or closed)
    ), settled as (
      select c.id, c.user_id from calls c where c.market_id in (select id from resolved)
    )
    select 'call' as kind, id from dc
    union select 'call', id from settled
    union select 'user', user_id::text from dc
    union select 'user', user_id::text from settled
    union select 'user', cc.user_id::text from dc join calls cc on cc.id = dc.copied_from
    union select 'user', k.user_id::text from combos k join combo_legs l on l.combo_id = k.id where l.market_id in (select id from resolved)
    union select 'user', u.id::text from users u where u.id = any(${dirty.users.map(Number)}::bigint[])
    union select 'market', market_id from dc
    union select 'market', m.id from markets m where m.id = any(${[...dirty.markets]}::text[])
  `);
  const out = { calls: [] as string[], users: [] as string[], markets: [] as string[] };
  for (const raw of rows) {
    const r = z.object({ kind: z.enum(['call', 'user', 'market']), id: z.string() }).parse(raw);
    if (r.kind === 'call') out.calls.push(r.id);
    else if (r.kind === 'user') out.users.push(r.id);
    else out.markets.push(r.id);
  }
  return out;
}
