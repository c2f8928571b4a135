import { z } from 'zod';
import { calibrationBucketSchema, type LeaderboardSort, type LeaderboardWindow, type UserSkill } from '@pm/shared/api';
import { WEEK_MS, WINDOW_MS, type FieldKey } from '@pm/shared/domain';
import { boardOrder, FIELD_RECORDS_THROUGH, rankOnBoard, recordJson, sql, type Db } from '@pm/shared/db';
import type { Page } from './pages.js';

/**
 * The skill reads (docs/skill.md), part of the API's one read-only way into Postgres (pages.ts):
 * - a person's skill figures: brier and clv from their record (user_records, or user_field_records
 *   with a category), calibration from their decided calls (by index, calls_user_status_newest),
 *   and their rank on each board, counted in one pass over the records: 1 + the people ranked
 *   before them (higher score; then more settled; then handle), exactly the boards' order;
 * - the boards of a window or a field, ranked on request instead of kept as rankings (4 windows ×
 *   6 sorts × every category and league would be hundreds of rankings to rewrite on every
 *   settlement, nearly all never read), each from kept per-person rows (at most one per person):
 *   an all-time field board from that field's rows of user_field_records, a window board from its
 *   span's and field's rows of user_window_records, each corrected by the few calls between the
 *   rows' edges and the board's (services/worker/src/projections/field-records.ts, window-records.ts). A board is ranked as of an instant — the first
 *   page's, which its next_cursor carries — from the calls settled at or before it, so a walk sees
 *   one ranking, each person once.
 * The rules are shared/src/domain's (skill.ts, records.ts: windowRecords, onBoard, rankBoard);
 * skill-pages.int.test.ts holds this SQL equal to them.
 */

type Fragment = recordJson.Fragment;
type Tx = Pick<Db, 'query'>;

/** A board of one window and field (never the all-time board of every field: its rows are kept). */
export interface BoardQuery {
  sort: Exclude<LeaderboardSort, 'week'>;
  window: LeaderboardWindow;
  field: FieldKey | null;
  /** The ranking's instant. */
  asOf: Date;
}

/**
 * A person's right % on a computed board: the domain's rightPct (100 × won / decided, halves up) in
 * integers, floor((200 × won + decided) / (2 × decided)), exact for counts. The numeric division it
 * replaces, once per person on every ranking, was a sixth of a right board's ranking.
 */
const RIGHT_PCT = sql`case when won + lost > 0 then ((200 * won::bigint + won + lost) / (2 * (won + lost)::bigint))::integer else 0 end`;

/** The sums every board counts per person: kept rows' columns, and WEIGHTED_SUMS' names. */
const SUM_COLUMNS = ['settled', 'won', 'lost', 'profit_on_10', 'xp', 'brier_sum', 'clv_sum', 'clv_calls'] as const;

/** Per settled call `c` with its market `m`: the board figures, summed, each call counted `k.w` times (1, or −1 to take it out). */
const WEIGHTED_SUMS = sql`
  coalesce(sum(k.w), 0)::integer as settled,
  coalesce(sum(k.w) filter (where c.status = 'won'), 0)::integer as won,
  coalesce(sum(k.w) filter (where c.status = 'lost'), 0)::integer as lost,
  coalesce(sum(k.w * c.profit_on_10), 0) as profit_on_10,
  coalesce(sum(k.w * c.xp_awarded), 0)::integer as xp,
  coalesce(sum(k.w * (c.chance_at_call - (c.status = 'won')::integer) * (c.chance_at_call - (c.status = 'won')::integer))
             filter (where c.status in ('won', 'lost')), 0) as brier_sum,
  coalesce(sum(k.w * (m.closing_chances[c.outcome_index + 1] - c.chance_at_call)) filter (where c.status in ('won', 'lost')), 0) as clv_sum,
  coalesce(sum(k.w) filter (where c.status in ('won', 'lost') and m.closing_chances[c.outcome_index + 1] is not null), 0)::integer as clv_calls`;

/** The markets of a field (`e` the event of `m`). */
function inField(field: FieldKey): Fragment {
  const key = field.slice(2);
  return field.startsWith('c:') ? sql`e.category = ${key}` : sql`e.league = ${key}`;
}

/**
 * inputs: the board, and the people to count (null: everyone). outputs: per person on it, before
 * eligibility: user_id, settled, won, lost, profit_on_10, xp, brier_sum, clv_sum, clv_calls, right_pct.
 */
function aggregate(q: BoardQuery, people: readonly number[] | null = null): Fragment {
  const events = q.field === null ? sql`` : sql`join events e on e.id = m.event_id`;
  const field = q.field === null ? sql`true` : inField(q.field);
  // Some people only (a page's): their kept rows by key, their corrections from the same ranges.
  const kept = people === null ? sql`` : sql` and user_id = any(${people}::bigint[])`;
  const mine = people === null ? sql`` : sql` and c.user_id = any(${people}::bigint[])`;
  if (q.window !== 'all') {
    // The kept rows count the calls settled in the span's (since, through] (no edge row: none); the
    // board counts those in (from, asOf] = (asOf − window, asOf]. Each call where the two differ —
    // between since and from (not yet aged out, or aged out after asOf), or between through and
    // asOf (settled since the last upkeep, or after the board's instant) — counts with weight
    // `w` = (in the board) − (in the rows): two ranges of calls_settled_window of about the
    // upkeep's period (a minute) plus the time since the board's first page.
    const from = new Date(q.asOf.getTime() - WINDOW_MS[q.window]);
    return corrected(
      sql`user_window_records where span = ${q.window} and field = ${q.field ?? ''}${kept}`,
      sql`
          select c.user_id, ${WEIGHTED_SUMS}
          from (
            select coalesce(e.since, 'infinity') as since, coalesce(e.through, 'infinity') as through
            from (select 1) one left join user_window_edges e on e.span = ${q.window}
          ) s
          join calls c on (c.settled_at > least(s.since, ${from}) and c.settled_at <= greatest(s.since, ${from}))
                       or (c.settled_at > least(s.through, ${q.asOf}) and c.settled_at <= greatest(s.through, ${q.asOf}))
          join markets m on m.id = c.market_id ${events}
          cross join lateral (
            select (c.settled_at > ${from} and c.settled_at <= ${q.asOf})::integer - (c.settled_at > s.since and c.settled_at <= s.through)::integer as w
          ) k
          where k.w <> 0 and ${field}${mine}
          group by c.user_id`,
    );
  }
  if (q.field === null) throw new Error('the all-time board of every field is kept as rows');
  // The field's records count the calls settled up to their edge (FIELD_RECORDS_THROUGH: the
  // upkeep's last run, or later with a late settling clock); the board counts those up to asOf. Each
  // call between the two counts with weight `w` = (in the board) − (in the rows): one range of
  // calls_settled_window, about the upkeep's period (a minute).
  return corrected(
    sql`user_field_records where field = ${q.field}${kept}`,
    sql`
        select c.user_id, ${WEIGHTED_SUMS}
        from (select ${FIELD_RECORDS_THROUGH} as through) s
        join calls c on c.settled_at > least(s.through, ${q.asOf}) and c.settled_at <= greatest(s.through, ${q.asOf})
        join markets m on m.id = c.market_id ${events}
        cross join lateral (
          select (c.settled_at <= ${q.asOf})::integer - (c.settled_at <= s.through)::integer as w
        ) k
        where k.w <> 0 and ${field}${mine}
        group by c.user_id`,
  );
}

/**
 * inputs: kept per-person rows (a table with the sums' columns, and its filter: at most one row a
 * person) and the corrections (per person: user_id and WEIGHTED_SUMS' columns). outputs: per person
 * with a settled call, the two summed, with right_pct. A full join on the person, not a union
 * grouped again: regrouping every kept row to add a few corrections summed four numerics a row
 * through an aggregate's state, most of a board's time.
 */
function corrected(kept: Fragment, corrections: Fragment): Fragment {
  const columns = sql.join(SUM_COLUMNS.map((c) => sql.ident(c)), sql`, `);
  const sums = sql.join(
    SUM_COLUMNS.map((c) => sql`coalesce(${sql.ident('k', c)}, 0) + coalesce(${sql.ident('c', c)}, 0) as ${sql.ident(c)}`),
    sql`, `,
  );
  return sql`
    select user_id, ${columns}, ${RIGHT_PCT} as right_pct
    from (
      select coalesce(k.user_id, c.user_id) as user_id, ${sums}
      from (select user_id, ${columns} from ${kept}) k
      full join (${corrections}) c on c.user_id = k.user_id
    ) a
    where settled > 0`;
}

/**
 * A computed board's score (higher first) and who is on it, over an aggregate `a` with
 * user_records' columns: the same order as the kept boards' (board-order.ts). A computed board
 * has no week sort: its windows are the week.
 */
const scoring = (sort: Exclude<LeaderboardSort, 'week'>, a: string) => boardOrder(sort, a);

/**
 * inputs: the board. outputs: who is on it (`rows`: a from-clause of the aggregate `a` and each
 * person's user `u`, eligible only) and the board's order over them (`order`).
 */
function onBoard(q: BoardQuery): { rows: Fragment; order: Fragment } {
  const { score, eligible } = scoring(q.sort, 'a');
  return {
    rows: sql`(${aggregate(q)}) a join users u on u.id = a.user_id where ${eligible}`,
    order: sql`${score} desc, a.settled desc, lower(u.handle) collate "C"`,
  };
}

/** inputs: the board. outputs: its ranking: every column of the aggregate, and rank. */
function ranking(q: BoardQuery): Fragment {
  const { rows, order } = onBoard(q);
  return sql`select a.*, (row_number() over (order by ${order}))::integer as rank from ${rows}`;
}

const keyedBody = z.object({ key: z.number(), body: z.string() });
const rankedIds = z.object({ ids: z.string() });

/** Where a page of a board starts: after a rank, or around a person (their rank in the middle where possible). */
export type BoardStart = { after: number } | { around: string };

/**
 * inputs: a board. outputs: the people on it in rank order (user ids; rank = position + 1). Every
 * page of the board is cut from this (boardPageOf): the API holds it (board-cache.ts), so a walk
 * with cursors or many people's `around` rank the board once, not once a page.
 */
export async function boardRanking(tx: Tx, q: BoardQuery): Promise<number[]> {
  await tx.query(sql`set local work_mem = '64MB'`);
  // A board's plan costs enough to be JIT-compiled, which takes longer than running it (as for a person's figures).
  await tx.query(sql`set local jit = off`);
  // One text of ids in the board's order (ranking()'s, without numbering it), not a row each:
  // 50,000 rows cost the driver more than the ranking's sort.
  const { rows, order } = onBoard(q);
  const [row] = (await tx.query(sql`select coalesce(string_agg(a.user_id::text, ',' order by ${order}), '') as ids from ${rows}`)) as unknown[];
  const { ids } = rankedIds.parse(row);
  return ids === '' ? [] : ids.split(',').map(Number);
}

/**
 * inputs: a board, its ranking (boardRanking, in the same snapshot or one in which nothing the
 * board counts has moved), where the page starts (`around`: a lower-cased handle), the page size.
 * outputs: the page (null: no one has the `around` handle; an empty page: they are not on the
 * board). The rows' figures are the page's people's own sums, counted as the ranking counted them.
 */
export async function boardPageOf(tx: Tx, q: BoardQuery, ranked: readonly number[], start: BoardStart, limit: number): Promise<Page | null> {
  let after: number;
  if ('around' in start) {
    const [person] = (await tx.query(sql`select id from users where lower(handle) = ${start.around}`)) as Array<{ id: number | string }>;
    if (person === undefined) return null;
    const at = ranked.indexOf(Number(person.id));
    if (at < 0) return { bodies: [], nextAfter: null };
    // Their rank (at + 1) in the middle of the page where possible.
    after = Math.max(0, at - Math.floor((limit - 1) / 2));
  } else {
    after = Math.max(0, start.after);
  }
  const people = ranked.slice(after, after + limit);
  if (people.length === 0) return { bodies: [], nextAfter: null };
  const rows = (await tx.query(sql`
    with p as (select * from unnest(${people}::bigint[], ${people.map((_, i) => after + i + 1)}::integer[]) as p(user_id, rank)),
    a as (${aggregate(q, people)})
    select l.rank as key, ${recordJson.leaderboardRowObject('l', 'w')} as body
    from (select a.*, p.rank from p join a on a.user_id = p.user_id) l
    join users u on u.id = l.user_id left join user_records w on w.user_id = l.user_id
    order by l.rank`)).map((r) => keyedBody.parse(r));
  // Counted in a snapshot where the ranking still holds, each ranked person has their row.
  if (rows.length !== people.length) throw new Error(`a board page found ${rows.length} of its ${people.length} ranked people`);
  return { bodies: rows.map((r) => r.body), nextAfter: after + limit < ranked.length ? after + limit : null };
}

/** A board's page, ranked in this transaction: boardRanking, then boardPageOf. */
export async function boardPage(tx: Tx, q: BoardQuery, start: BoardStart, limit: number): Promise<Page | null> {
  return boardPageOf(tx, q, await boardRanking(tx, q), start, limit);
}

/**
 * inputs: a board kept as rows (leaderboard_rows), a lower-cased handle. outputs: the current
 * ranking version and the person's rank on it (null: not on it); null when no one has the handle.
 */
export async function keptRank(tx: Tx, sort: LeaderboardSort, handle: string): Promise<{ version: number; rank: number | null } | null> {
  const rows = (await tx.query(sql`
    select (select max(version) from leaderboard_versions)::integer as version,
           (select l.rank from leaderboard_rows l where l.sort = ${sort} and l.user_id = u.id) as rank
    from users u where lower(u.handle) = ${handle}`)) as Array<{ version: number; rank: number | null }>;
  return rows[0] ?? null;
}

const skillRow = z.object({
  brier: z.number().nullable(),
  clv: z.number().nullable(),
  calibration: z.array(z.object({ b: z.number(), calls: z.number(), predicted: z.number(), won_pct: z.number() })),
  profit: z.number().nullable(),
  right: z.number().nullable(),
  xp: z.number().nullable(),
  week: z.number().nullable(),
  clv_rank: z.number().nullable(),
  brier_rank: z.number().nullable(),
});

/** The rank of `me` among field records `o` (both with handle_key) on a board: null when not eligible. */
function rankOf(sort: Exclude<LeaderboardSort, 'week'>): Fragment {
  const s = scoring(sort, 'o');
  const m = scoring(sort, 'me');
  // The means of clv and brier compared as fractions by cross-multiplication (both denominators are
  // positive where eligible; the domain's byScore does the same): the same order as the boards'
  // 30-place quotients, without two numeric divisions per record per request (most of this pass's
  // time over every record).
  const [ahead, tie] =
    sort === 'clv'
      ? [sql`o.clv_sum * me.clv_calls > me.clv_sum * o.clv_calls`, sql`o.clv_sum * me.clv_calls = me.clv_sum * o.clv_calls`]
      : sort === 'brier'
        ? [sql`o.brier_sum * (me.won + me.lost) < me.brier_sum * (o.won + o.lost)`, sql`o.brier_sum * (me.won + me.lost) = me.brier_sum * (o.won + o.lost)`]
        : [sql`${s.score} > ${m.score}`, sql`${s.score} = ${m.score}`];
  // Before me: eligible, and (score, settled, handle) ahead of mine in the board's order.
  return sql`case when bool_or(${m.eligible}) then 1 + count(*) filter (where ${s.eligible} and (${ahead}
    or (${tie} and (o.settled > me.settled or (o.settled = me.settled and o.handle_key < me.handle_key)))))::integer end`;
}

/**
 * inputs: a lower-cased handle, a category (null: all calls), the instant. outputs: the person's
 * skill figures and ranks; null when no one has the handle. One statement: the person's record (or
 * their category record), their calibration, and a pass over every record (or the category's
 * all-time board, as of now) counting who ranks before them.
 */
export async function userSkill(tx: Tx, handle: string, category: string | null, now: Date): Promise<UserSkill | null> {
  const weekStart = new Date(now.getTime() - WEEK_MS);
  const field: FieldKey | null = category === null ? null : `c:${category}`;
  const sorts = ['profit', 'right', 'xp', 'clv', 'brier'] as const;
  const columns = sql.join(sorts.map((s) => sql.ident(s === 'clv' || s === 'brier' ? `${s}_rank` : s)), sql`, `);
  let with_: Fragment;
  let ranks: Fragment;
  let weekRank: Fragment;
  if (field === null) {
    // Every all-time board is indexed in its own order (migration 0012): a rank is a count of one
    // index range, and no other record is read.
    with_ = sql`me as materialized (select r.*, p.handle_key from user_records r join person p on p.id = r.user_id)`;
    ranks = sql`select ${sql.join(sorts.map((s) => rankOnBoard(s, weekStart)), sql`, `)}`;
    weekRank = rankOnBoard('week', weekStart);
  } else {
    // A category's boards are ranked from its field records: one pass over them counting who ranks
    // before the person. The pass is a cross join with one row, which the planner costs as 250 rows
    // (millions in all): past jit_above_cost it compiled the statement, ~450 ms of a 540 ms answer
    // on 50,000 records whose work is ~90 ms.
    await tx.query(sql`set local jit = off`);
    with_ = sql`
      others as materialized (
        select a.*, lower(u.handle) collate "C" as handle_key
        from (${aggregate({ sort: 'profit', window: 'all', field, asOf: now })}) a join users u on u.id = a.user_id),
      me as (select o.* from others o join person p on p.id = o.user_id)`;
    ranks = sql`select ${sql.join(sorts.map((s) => rankOf(s)), sql`, `)} from me cross join others o`;
    // The category's week board is its window board; its rank there comes from that board's ranking.
    weekRank = sql`(select w.rank from (${ranking({ sort: 'profit', window: 'week', field, asOf: now })}) w where w.user_id = (select id from person))`;
  }
  const rows = (await tx.query(sql`
    with person as (select u.id, lower(u.handle) collate "C" as handle_key from users u where lower(u.handle) = ${handle}),
    ${with_},
    cal as (
      select least(floor(c.chance_at_call * 10), 9)::integer as b, count(*)::integer as calls,
             round(avg(c.chance_at_call), 4)::float8 as predicted,
             round(100 * count(*) filter (where c.status = 'won')::numeric / count(*), 1)::float8 as won_pct
      from person p
      join calls c on c.user_id = p.id and c.status in ('won', 'lost')
      ${field === null ? sql`` : sql`join markets m on m.id = c.market_id join events e on e.id = m.event_id and ${inField(field)}`}
      group by 1
    ),
    ranks (${columns}) as (${ranks})
    select (${recordJson.skillBrier('me')})::float8 as brier, (${recordJson.skillClv('me')})::float8 as clv,
           coalesce((select json_agg(json_build_object('b', b, 'calls', calls, 'predicted', predicted, 'won_pct', won_pct)) from cal), '[]'::json) as calibration,
           ranks.*, ${weekRank} as week
    from person left join me on true left join ranks on true`)) as unknown[];
  const first = rows[0];
  if (first === undefined) return null;
  const r = skillRow.parse(first);
  const buckets = new Map(r.calibration.map((b) => [b.b, b]));
  return {
    brier: r.brier,
    calibration: Array.from({ length: 10 }, (_, i) => {
      const b = buckets.get(i);
      return calibrationBucketSchema.parse({ from: i / 10, to: (i + 1) / 10, calls: b?.calls ?? 0, predicted: b?.predicted ?? null, won_pct: b?.won_pct ?? null });
    }),
    clv: r.clv,
    ranks: { profit: r.profit, right: r.right, xp: r.xp, week: r.week, clv: r.clv_rank, brier: r.brier_rank },
  };
}
