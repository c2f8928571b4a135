import { z } from 'zod';
import { CALL_LIST_SIZE, CALL_STATUSES, COMBO_LIST_SIZE, LEADERBOARD_SIZE, LEADERBOARD_SORTS } from '@pm/shared/api';
import type { SnapshotName } from '@pm/shared/redis';
import { recordJson, sql, type Db } from '@pm/shared/db';
import { RIGHT_MIN_SETTLED } from '../projections/leaderboard.js';

/**
 * The record snapshots' bodies, made in Postgres: each statement returns `(name, body)` rows whose
 * body is the final JSON text, so Node only moves strings (hashing them for the ETag). A body is
 * byte for byte what `JSON.stringify` made of the docs/api.md resource before (same key order, compact,
 * ISO timestamps with milliseconds via `pm_iso`, links via `pm_uri_component`; migration 0003).
 * Numbers print as float8 does (with the default extra_float_digits = 1): the shortest round-trip
 * digits, as JavaScript; only a value below 1e-4 would differ in form (5e-05 for 0.00005), never
 * in value, and no chance or amount is that small.
 *
 * Objects are concatenated text with their keys in docs/api.md's order (jsonObject); lists are
 * `string_agg` of those objects (json_agg would add spaces). The resources themselves are defined
 * once in shared/src/db/record-json.ts, which the API's pages past the first build from too.
 * Each statement is set-based over any
 * number of ids; the indexes of migration 0003 are behind every one (see record-queries.int.test.ts).
 */

type Queryable = Pick<Db, 'query'>;

export interface SnapshotBody {
  name: SnapshotName;
  body: string;
  /** Set on a closed event's market list (full-build.ts `withClosedExpiry`). */
  expireAtMs?: number;
}

const bodyRow = z.object({ name: z.string(), body: z.string() });

/** The record families of SnapshotName (shared/src/redis/keys.ts), the only names these statements make. */
const RECORD_NAME = /^(calls:latest|calls:market:.+|leaderboard:.+|combos:.+)$/;
const isRecordName = (name: string): name is SnapshotName => RECORD_NAME.test(name);

export function parseBodies(rows: unknown[]): SnapshotBody[] {
  return rows.map((raw) => {
    const { name, body } = bodyRow.parse(raw);
    if (!isRecordName(name)) throw new Error(`record snapshot query made an unknown name: ${name}`);
    return { name, body };
  });
}

type Fragment = recordJson.Fragment;
const { jsonList, callObject, comboObject, leaderboardRowObject, CALL_JOINS } = recordJson;

/** A list's calls `r` with their cached Call object as `cj.body` (ensureCallJson made any missing one). */
const CACHED_CALL = sql`join record_call_json cj on cj.call_id = r.id`;

/**
 * The end of every insert into record_call_json (call_id, body, src_xmin): a row is rewritten only
 * when its text or the version of the call row it was made from changed.
 */
export const CALL_JSON_UPSERT = sql`
  on conflict (call_id) do update set body = excluded.body, src_xmin = excluded.src_xmin
  where record_call_json.body is distinct from excluded.body or record_call_json.src_xmin is distinct from excluded.src_xmin
`;

/**
 * inputs: call ids, the public web url. outputs: none; record_call_json holds the current Call
 * object of each of those calls (a row is rewritten only when its text or its call row's version changed).
 */
export async function refreshCallJson(db: Queryable, ids: readonly string[], webUrl: string): Promise<void> {
  if (ids.length === 0) return;
  await db.query(sql`
    insert into record_call_json (call_id, body, src_xmin)
    select c.id, ${callObject(webUrl)}, c.xmin
    from (select distinct id from unnest(${[...ids]}::text[]) as u(id)) k join calls c on c.id = k.id ${CALL_JOINS}
    ${CALL_JSON_UPSERT}
  `);
}

/**
 * inputs: dirty call ids and market ids, the public web url, and `listedOn`: the markets they touch
 * (touchedMarkets). outputs: how many of the touched calls a list snapshot shows (the CALL_LIST_SIZE
 * newest of each of those markets, and of all calls), and of those how many objects it made (the
 * others' rows had not changed since theirs was made); record_call_json holds the current Call
 * object of each of them — the dirty calls and the calls of a dirty market that has resolved
 * (settlement changed them all) — in ONE statement: the calls are found and their objects made where
 * they are, never sent to Node and back (a settlement's 10,000 ids). Touched calls no list shows are
 * left: a list that comes to show one remakes its stale object (ensureCallJson).
 */
export async function refreshTouchedCallJson(
  db: Queryable,
  dirty: { calls: readonly string[]; markets: readonly string[] },
  webUrl: string,
  listedOn: readonly string[],
): Promise<{ calls: number; made: number }> {
  if (dirty.calls.length === 0 && dirty.markets.length === 0) return { calls: 0, made: 0 };
  const calls = [...dirty.calls];
  const markets = [...dirty.markets];
  const rows: Array<{ calls: number; made: number }> = await db.query(sql`
    with resolved as (
      select id from markets where id = any(${markets}::text[]) and (resolved_at is not null or closed)
    ), k as (
      -- The calls the lists show (at most CALL_LIST_SIZE per touched market and of all calls), kept
      -- when touched: a membership test of a few hundred ids, not a set of 10,000 built first.
      select l.id from (
        select l.id, l.market_id from unnest(${[...listedOn]}::text[]) as t(market_id) cross join lateral (
          select id, market_id from calls where market_id = t.market_id order by made_at desc, id desc limit ${CALL_LIST_SIZE}
        ) l
        union
        select id, market_id from (select id, market_id from calls order by made_at desc, id desc limit ${CALL_LIST_SIZE}) g
      ) l
      where l.id = any(${calls}::text[]) or l.market_id in (select id from resolved)
    ), stale as (
      -- Only calls whose row changed since their object was made (migration 0007): a settlement's
      -- calls are asked for by the job and again by the relay's delivery of the same outbox row.
      select k.id from k join calls c on c.id = k.id where ${STALE}
    ), made as (
      insert into record_call_json (call_id, body, src_xmin)
      select c.id, ${callObject(webUrl)}, c.xmin from stale s join calls c on c.id = s.id ${CALL_JOINS}
      ${CALL_JSON_UPSERT}
    )
    select (select count(*) from k)::integer as calls, (select count(*) from stale)::integer as made
  `);
  return { calls: rows[0]?.calls ?? 0, made: rows[0]?.made ?? 0 };
}

/**
 * A call `c` whose cached object is missing, or was made from an older version of its row (its
 * xmin: any update of the row gives it a new one; migration 0007). A probe of record_call_json's
 * key per call (a correlated subquery: as an anti-join the planner hashed all of record_call_json,
 * a million rows, to check 10,000).
 */
const STALE = sql`(select j.src_xmin from record_call_json j where j.call_id = c.id) is distinct from c.xmin`;

/**
 * inputs: which calls (a condition on `c`, calls), the public web url. outputs: none; every one of
 * them has its current Call object in record_call_json. Normally none is missing or stale (a call's
 * own build makes it) and this is one key probe per call; the lists below then only join text. A
 * call made after this and before the list is read is left out of that list until its own build.
 */
async function ensureCallJson(db: Queryable, which: Fragment, webUrl: string): Promise<void> {
  const stale: Array<{ id: string }> = await db.query(sql`select c.id from calls c where ${which} and ${STALE}`);
  await refreshCallJson(db, stale.map((m) => m.id), webUrl);
}

/**
 * Whether a list first makes any missing or stale cached Call object of its calls (`check`, a key
 * probe per listed call), or trusts record_call_json as it is (`fresh`: the full build refreshed every call's
 * a moment before; at a million calls the checks were two million key probes).
 */
export type CallJsonCache = 'check' | 'fresh';

/**
 * inputs: market ids, the public web url. outputs: `calls:market:<id>` for each id: its
 * platform_split (people per outcome in outcome order from market_splits, `[]` when the market has
 * no rows there — nobody has called it) and its CALL_LIST_SIZE newest calls, newest first.
 */
export async function marketBodies(db: Queryable, ids: readonly string[], webUrl: string, cache: CallJsonCache = 'check'): Promise<SnapshotBody[]> {
  if (ids.length === 0) return [];
  // Only the calls the lists show (each market's newest CALL_LIST_SIZE), not every call on the markets.
  if (cache === 'check') {
    await ensureCallJson(
      db,
      sql`c.id in (
        select l.id from unnest(${[...ids]}::text[]) as t(id)
        cross join lateral (select id from calls where market_id = t.id order by made_at desc, id desc limit ${CALL_LIST_SIZE}) l
      )`,
      webUrl,
    );
  }
  return parseBodies(
    await db.query(sql`
      with target as (
        select distinct id from unnest(${[...ids]}::text[]) as t(id)
      ), ranked as (
        select t.id as market_id, k.id, k.made_at
        from target t cross join lateral (
          select c.id, c.made_at from calls c where c.market_id = t.id order by c.made_at desc, c.id desc limit ${CALL_LIST_SIZE}
        ) k
      ), listed as (
        select r.market_id, r.made_at, r.id, cj.body as j
        from ranked r ${CACHED_CALL}
      ), lists as (
        select market_id, ${jsonList(sql`j`, sql`made_at desc, id desc`)} as calls from listed group by market_id
      ), splits as (
        select t.id as market_id,
               case when count(s.market_id) > 0
                    then '[' || string_agg(coalesce(s.people, 0)::text, ',' order by o.outcome_index) || ']'
                    else '[]' end as split
        from target t
        left join outcomes o on o.market_id = t.id
        left join market_splits s on s.market_id = o.market_id and s.outcome_index = o.outcome_index
        group by t.id
      )
      select 'calls:market:' || s.market_id as name,
             '{"platform_split":' || s.split || ',"calls":' || coalesce(l.calls, '[]') || '}' as body
      from splits s left join lists l on l.market_id = s.market_id
    `),
  );
}

/**
 * inputs: the public web url. outputs: the small global lists, read in one snapshot of the database
 * (a combo and its legs agree): `calls:latest` (the CALL_LIST_SIZE newest calls), `leaderboard:<sort>`
 * (the top LEADERBOARD_SIZE rows of each board from leaderboard_rows and the ranking version they are;
 * `right` keeps only people with RIGHT_MIN_SETTLED or more settled calls, whatever the projection
 * holds) and `combos:<status>`
 * (the COMBO_LIST_SIZE newest combos of each status with their legs in leg order).
 */
export async function globalBodies(db: Db, webUrl: string): Promise<SnapshotBody[]> {
  // Before the read-only transaction: this may write the cache.
  await ensureCallJson(db, sql`c.id in (select id from calls order by made_at desc, id desc limit ${CALL_LIST_SIZE})`, webUrl);
  return db.tx(async (tx) => {
    await tx.query(sql`set transaction isolation level repeatable read, read only`);
    return parseBodies(
      await tx.query(sql`
        with latest as (
          select r.made_at, r.id, cj.body as j
          from (select id, made_at from calls order by made_at desc, id desc limit ${CALL_LIST_SIZE}) r ${CACHED_CALL}
        ), sorts as (
          select sort from unnest(${[...LEADERBOARD_SORTS]}::text[]) as s(sort)
        ), boards as (
          select l.sort, l.rank, ${leaderboardRowObject()} as j
          from leaderboard_rows l
          join users u on u.id = l.user_id
          left join user_records r on r.user_id = l.user_id
          where l.rank <= ${LEADERBOARD_SIZE} and (l.sort <> 'right' or coalesce(r.settled, 0) >= ${RIGHT_MIN_SETTLED})
        ), statuses as (
          select status from unnest(${[...CALL_STATUSES]}::text[]) as s(status)
        ), combo_list as (
          select s.status, k.made_at, k.id, ${comboObject(webUrl)} as j
          from statuses s
          cross join lateral (
            select * from combos k where k.status = s.status order by k.made_at desc, k.id desc limit ${COMBO_LIST_SIZE}
          ) k
          join users u on u.id = k.user_id
        )
        select 'calls:latest' as name, '{"calls":' || (select ${jsonList(sql`j`, sql`made_at desc, id desc`)} from latest) || '}' as body
        union all
        -- The ranking version the rows are (migration 0005): the API's next_cursor pins it.
        select 'leaderboard:' || s.sort,
               '{"version":' || (select coalesce(max(version), 0) from leaderboard_versions)::text
               || ',"rows":' || ${jsonList(sql`b.j`, sql`b.rank`)} || '}'
        from sorts s left join boards b on b.sort = s.sort group by s.sort
        union all
        select 'combos:' || s.status, '{"combos":' || ${jsonList(sql`c.j`, sql`c.made_at desc, c.id desc`)} || '}'
        from statuses s left join combo_list c on c.status = s.status group by s.status
      `),
    );
  });
}
