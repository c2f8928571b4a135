import { z } from 'zod';
import { CALL_LIST_SIZE, CALL_STATUSES, COMBO_LIST_SIZE, LEADERBOARD_SIZE, LEADERBOARD_SORTS, USER_CALL_FILTERS } from '@pm/shared/api';
import type { SnapshotName } from '@pm/shared';
import { sql, type Db } from '@pm/shared/db';
import { RIGHT_MIN_SETTLED } from '../projections/leaderboard.js';

/**
 * The record snapshots' bodies, made in Postgres: each statement returns `(name, body)` rows whose
 * body is the final JSON text, so Node only moves strings (hashing them for the ETag). A body is
 * byte for byte what `JSON.stringify` made of the SPEC.md resource before (same key order, compact,
 * numbers as float8 print them — the same shortest form as JavaScript for every chance and amount —
 * ISO timestamps with milliseconds via `pm_iso`, links via `pm_uri_component`; migration 0003).
 *
 * Objects are `row_to_json` of a sub-select, so a key's place is its column's place; lists are
 * `string_agg` of those objects (json_agg would add spaces). Each statement is set-based over any
 * number of ids; the indexes of migration 0003 are behind every one (see explain.int.test.ts).
 */

type Queryable = Pick<Db, 'query'>;

export interface SnapshotBody {
  name: SnapshotName;
  body: string;
}

const bodyRow = z.object({ name: z.string(), body: z.string() });

/** The record families of SnapshotName (shared/src/redis/keys.ts), the only names these statements make. */
const RECORD_NAME = /^(calls:latest|calls:market:.+|call:.+|user:.+|user-calls:.+:.+|leaderboard:.+|combos:.+)$/;
const isRecordName = (name: string): name is SnapshotName => RECORD_NAME.test(name);

function parseBodies(rows: unknown[]): SnapshotBody[] {
  return rows.map((raw) => {
    const { name, body } = bodyRow.parse(raw);
    if (!isRecordName(name)) throw new Error(`record snapshot query made an unknown name: ${name}`);
    return { name, body };
  });
}

/** `[a,b,…]` of the text `item` in `order`, `[]` for none: a JSON list without json_agg's spaces. */
const jsonList = (item: ReturnType<typeof sql>, order: ReturnType<typeof sql>) =>
  sql`coalesce('[' || string_agg(${item}, ',' order by ${order}) || ']', '[]')`;

/** The joins every call object needs; `c` is the call. */
const CALL_JOINS = sql`
  join users u on u.id = c.user_id
  join markets m on m.id = c.market_id
  join events e on e.id = m.event_id
  join outcomes o on o.market_id = c.market_id and o.outcome_index = c.outcome_index
  left join calls cc on cc.id = c.copied_from
  left join users cu on cu.id = cc.user_id
`;

/**
 * SPEC.md's Call as JSON text (over CALL_JOINS). `copied_from` is `{id, handle}` or null: a missing
 * author would mean a deleted user, and a half object is worse than none. `profit_on_10` is null
 * while open.
 */
const callObject = (webUrl: string) => sql`(
  select row_to_json(x)::text from (select
    c.id,
    (select row_to_json(y) from (select u.handle, u.avatar) y) as "user",
    c.market_id, e.slug as event, m.question, o.name as outcome, c.outcome_index,
    c.chance_at_call::float8 as chance_at_call, c.thesis,
    case when c.copied_from is not null and cu.handle is not null
         then (select row_to_json(y) from (select c.copied_from as id, cu.handle) y) end as copied_from,
    c.is_fade, c.status,
    case when c.status <> 'open' then c.profit_on_10::float8 end as profit_on_10,
    pm_iso(c.made_at) as made_at, pm_iso(c.settled_at) as settled_at,
    ${webUrl}::text || '/c/' || pm_uri_component(c.id) as url
  ) x
)`;

/**
 * inputs: call ids, the public web url. outputs: `call:<id>` of each existing call: SPEC.md's call
 * subset with its thesis updates, oldest first.
 */
export async function callBodies(db: Queryable, ids: readonly string[], webUrl: string): Promise<SnapshotBody[]> {
  if (ids.length === 0) return [];
  return parseBodies(
    await db.query(sql`
      select 'call:' || c.id as name, '{"call":' || (
        select row_to_json(x)::text from (select
          c.id,
          (select row_to_json(y) from (select u.handle) y) as "user",
          m.question, o.name as outcome, c.chance_at_call::float8 as chance_at_call, c.status,
          case when c.status <> 'open' then c.profit_on_10::float8 end as profit_on_10,
          c.thesis,
          (select ${jsonList(sql`row_to_json(t)::text`, sql`tu.at, tu.id`)}::json
           from thesis_updates tu cross join lateral (select tu.body, pm_iso(tu.at) as at) t
           where tu.call_id = c.id) as thesis_updates,
          ${webUrl}::text || '/c/' || pm_uri_component(c.id) as url
        ) x
      ) || '}' as body
      from calls c
      join users u on u.id = c.user_id
      join markets m on m.id = c.market_id
      join outcomes o on o.market_id = c.market_id and o.outcome_index = c.outcome_index
      where c.id = any(${[...ids]}::text[])
    `),
  );
}

/**
 * inputs: user ids, the public web url. outputs: for each existing user `user:<handle lower-cased>`
 * (the user_records projection; zeros for someone it has not reached yet) and the five
 * `user-calls:<handle>:<filter>` lists: the CALL_LIST_SIZE newest calls (`all`) and the
 * CALL_LIST_SIZE newest of each status, newest first — empty lists included (an `open` list can empty).
 */
export async function userBodies(db: Queryable, ids: readonly string[], webUrl: string): Promise<SnapshotBody[]> {
  if (ids.length === 0) return [];
  const userIds = ids.map(Number);
  return parseBodies(
    await db.query(sql`
      with target as (
        select u.id, u.handle from users u where u.id = any(${userIds}::bigint[])
      ), ranked as (
        select c.id,
               row_number() over (partition by c.user_id order by c.made_at desc, c.id desc) as n_all,
               row_number() over (partition by c.user_id, c.status order by c.made_at desc, c.id desc) as n_status
        from calls c
        where c.user_id = any(${userIds}::bigint[])
      ), listed as (
        select c.user_id, c.status, c.made_at, c.id, r.n_all <= ${CALL_LIST_SIZE} as in_all,
               r.n_status <= ${CALL_LIST_SIZE} as in_status, ${callObject(webUrl)} as j
        from ranked r join calls c on c.id = r.id ${CALL_JOINS}
        where r.n_all <= ${CALL_LIST_SIZE} or r.n_status <= ${CALL_LIST_SIZE}
      ), filters as (
        select f, n from unnest(${[...USER_CALL_FILTERS]}::text[]) with ordinality as x(f, n)
      )
      select 'user:' || lower(u.handle) as name, '{"user":' || (
        select row_to_json(x)::text from (select
          u.handle, u.display_name, u.avatar,
          coalesce(r.calls, 0) as calls, coalesce(r.settled, 0) as settled, coalesce(r.won, 0) as won,
          coalesce(r.right_pct, 0) as right_pct, coalesce(r.profit_on_10, 0)::float8 as profit_on_10,
          coalesce(r.profit_7d, 0)::float8 as profit_7d, coalesce(r.xp, 0) as xp, coalesce(r.streak, 0) as streak,
          coalesce(r.followers, 0) as followers, coalesce(r.following, 0) as following, coalesce(r.copies, 0) as copies,
          u.bio, u.interests, pm_iso(u.joined_at) as joined_at,
          ${webUrl}::text || '/u/' || pm_uri_component(u.handle) as url
        ) x
      ) || '}' as body
      from users u left join user_records r on r.user_id = u.id
      where u.id = any(${userIds}::bigint[])
      union all
      select 'user-calls:' || lower(t.handle) || ':' || f.f,
             '{"handle":' || to_json(t.handle)::text || ',"calls":' || ${jsonList(sql`l.j`, sql`l.made_at desc, l.id desc`)} || '}'
      from target t cross join filters f
      left join listed l on l.user_id = t.id and (case when f.f = 'all' then l.in_all else l.status = f.f and l.in_status end)
      group by t.id, t.handle, f.f, f.n
    `),
  );
}

/**
 * inputs: market ids, the public web url. outputs: `calls:market:<id>` for each id: its
 * platform_split (people per outcome in outcome order from market_splits, `[]` when the market has
 * no rows there — nobody has called it) and its CALL_LIST_SIZE newest calls, newest first.
 */
export async function marketBodies(db: Queryable, ids: readonly string[], webUrl: string): Promise<SnapshotBody[]> {
  if (ids.length === 0) return [];
  return parseBodies(
    await db.query(sql`
      with target as (
        select distinct id from unnest(${[...ids]}::text[]) as t(id)
      ), ranked as (
        select t.id as market_id, k.id
        from target t cross join lateral (
          select c.id from calls c where c.market_id = t.id order by c.made_at desc, c.id desc limit ${CALL_LIST_SIZE}
        ) k
      ), listed as (
        select c.market_id, c.made_at, c.id, ${callObject(webUrl)} as j
        from ranked r join calls c on c.id = r.id ${CALL_JOINS}
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
 * (the top LEADERBOARD_SIZE rows of each board from leaderboard_rows; `right` keeps only people with
 * RIGHT_MIN_SETTLED or more settled calls, whatever the projection holds) and `combos:<status>`
 * (the COMBO_LIST_SIZE newest combos of each status with their legs in leg order).
 */
export async function globalBodies(db: Db, webUrl: string): Promise<SnapshotBody[]> {
  return db.tx(async (tx) => {
    await tx.query(sql`set transaction isolation level repeatable read, read only`);
    return parseBodies(
      await tx.query(sql`
        with latest as (
          select c.made_at, c.id, ${callObject(webUrl)} as j
          from (select id from calls order by made_at desc, id desc limit ${CALL_LIST_SIZE}) k
          join calls c on c.id = k.id ${CALL_JOINS}
        ), sorts as (
          select sort from unnest(${[...LEADERBOARD_SORTS]}::text[]) as s(sort)
        ), boards as (
          select l.sort, l.rank, (
            select row_to_json(x)::text from (select
              l.rank, u.handle, u.display_name, u.avatar,
              coalesce(r.right_pct, 0) as right_pct, coalesce(r.settled, 0) as settled, coalesce(r.won, 0) as won,
              coalesce(r.profit_on_10, 0)::float8 as profit_on_10, coalesce(r.profit_7d, 0)::float8 as profit_7d,
              coalesce(r.xp, 0) as xp, coalesce(r.streak, 0) as streak
            ) x
          ) as j
          from leaderboard_rows l
          join users u on u.id = l.user_id
          left join user_records r on r.user_id = l.user_id
          where l.rank <= ${LEADERBOARD_SIZE} and (l.sort <> 'right' or coalesce(r.settled, 0) >= ${RIGHT_MIN_SETTLED})
        ), statuses as (
          select status from unnest(${[...CALL_STATUSES]}::text[]) as s(status)
        ), combo_list as (
          select s.status, k.made_at, k.id, (
            select row_to_json(x)::text from (select
              k.id, (select row_to_json(y) from (select u.handle) y) as "user",
              k.chance::float8 as chance, k.wins_on_10::float8 as wins_on_10, k.status, k.xp_awarded,
              (select ${jsonList(sql`row_to_json(z)::text`, sql`g.leg_index`)}::json
               from combo_legs g
               join markets m on m.id = g.market_id
               join outcomes o on o.market_id = g.market_id and o.outcome_index = g.outcome_index
               cross join lateral (
                 select g.market_id, m.question, o.name as outcome, g.outcome_index,
                        g.chance_at_call::float8 as chance_at_call, g.status
               ) z
               where g.combo_id = k.id) as legs,
              pm_iso(k.made_at) as made_at,
              ${webUrl}::text || '/combo/' || pm_uri_component(k.id) as url
            ) x
          ) as j
          from statuses s
          cross join lateral (
            select * from combos k where k.status = s.status order by k.made_at desc, k.id desc limit ${COMBO_LIST_SIZE}
          ) k
          join users u on u.id = k.user_id
        )
        select 'calls:latest' as name, '{"calls":' || (select ${jsonList(sql`j`, sql`made_at desc, id desc`)} from latest) || '}' as body
        union all
        select 'leaderboard:' || s.sort, '{"rows":' || ${jsonList(sql`b.j`, sql`b.rank`)} || '}'
        from sorts s left join boards b on b.sort = s.sort group by s.sort
        union all
        select 'combos:' || s.status, '{"combos":' || ${jsonList(sql`c.j`, sql`c.made_at desc, c.id desc`)} || '}'
        from statuses s left join combo_list c on c.status = s.status group by s.status
      `),
    );
  });
}
