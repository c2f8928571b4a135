import { z } from 'zod';
import type { CallStatus, LeaderboardSort, UserCallFilter, UserSkill } from '@pm/shared/api';
import { createDb, IsolationLevel, recordJson, sql, type Db, type ReadQueryable } from '@pm/shared/db';
import type { Logger } from '@pm/shared/logger';
import { ApiError } from '../http/errors.js';
import { boardPageOf, boardRanking, keptRank, userSkill } from './skill-pages.js';
import { createBoardCache, type BoardPage, type BoardPageQuery } from './board-cache.js';
import type { SharedRankings } from './shared-rankings.js';

/**
 * The API's one read-only way into Postgres (contracts: "the API may read Postgres through ONE
 * read-only module"). The first page of the shared lists (calls, combos, leaderboard) is the
 * worker's snapshot; a page after it is a keyset query here (docs/design.md "The read path": never
 * OFFSET), on the indexes of migrations 0003, 0005 and 0006: each a single SELECT under the pool's
 * statement timeout, but for the leaderboard's two statements, which share a read-only transaction.
 * Items come as the JSON text of shared/src/db/record-json.ts, the definition the
 * snapshots are built from, so a page past the first shows an item exactly as the first page would.
 *
 * A person's record, every page of their calls (the first too) and a call's own page are read here
 * and nowhere else: one indexed statement each, answered as committed, so a settlement shows on the
 * people and calls it moved the moment its transaction commits, and settling 10,000 calls costs the
 * worker no rewrite of ~60,000 person and call pages. Their Call objects are made on the
 * spot from the calls' rows (a page is at most 101 of them, one key probe per join).
 *
 * Calls, combos: newest first by (made_at, id); a page starts after the item the cursor names, so
 * an item made after the walk began (it sorts before everything the walk has shown) never appears
 * in it and nothing is repeated or skipped. Every Call object here is made on the spot from the
 * call's row (at most 101 a page, one key probe per join), never the worker's record_call_json
 * cache, which is fresh for the calls its lists show first and for the rest a moment later.
 * Leaderboard: the ranking of the version the cursor pins (migration 0005), by rank.
 */

export interface Page {
  /** The items' JSON text, in list order. */
  bodies: string[];
  /** The key of the last item shown (call or combo id; rank), when there is a next page. */
  nextAfter: string | number | null;
}

/** A person's page of calls: how they spell their handle, and the page. */
export interface UserCallsPage extends Page {
  handle: string;
}

export interface PageReader {
  calls(q: { market: string | null; after: string; limit: number }): Promise<Page>;
  /**
   * A person's calls of one filter, newest first: the first page (no `after`) or the one after the
   * call `after` names. null when no one has that handle (`handle` lower-cased).
   */
  userCalls(q: { handle: string; status: UserCallFilter; after?: string; limit: number }): Promise<UserCallsPage | null>;
  /** `{"user":…}`, a person's record (user_records; zeros before the projection reaches them); null: no such handle (lower-cased). */
  user(handle: string): Promise<string | null>;
  /** `{"call":…}`, one call with its thesis updates; null: no such call. */
  call(id: string): Promise<string | null>;
  combos(q: { status: CallStatus; after: string; limit: number }): Promise<Page>;
  /** null when the ranking version is no longer kept. */
  leaderboard(q: { sort: LeaderboardSort; version: number; after: number; limit: number }): Promise<Page | null>;
  /**
   * Closed events (all markets closed, or the event), most recently closed first by (closed_at, id),
   * after the one `after` names (none: the first page), with the filters; up to limit + 1 rows
   * (migration 0009's events_closed_newest). Each row: the slug, its keyset and the card fields the
   * API needs when the event has no snapshot.
   */
  closedEvents(q: {
    category: string | null;
    league: string | null;
    q: string | null;
    after: { at: string; id: string } | null;
    limit: number;
  }): Promise<{ rows: ClosedEventRow[]; more: boolean }>;
  /** A board kept as rows, where a person stands: the current version and their rank (null: not on it); null: no such handle. */
  keptRank(q: { sort: LeaderboardSort; handle: string }): Promise<{ version: number; rank: number | null } | null>;
  /**
   * A page of a board of a window or a field, cut from its ranking: ranked (skill-pages.ts), or held
   * while nothing it counts moved (board-cache.ts); with the instant it was ranked at. null: no one
   * has the `around` handle.
   */
  board(q: BoardPageQuery): Promise<BoardPage | null>;
  /** A person's skill figures and ranks (all calls, or a category's); null: no such handle. */
  userSkill(q: { handle: string; category: string | null; now: Date }): Promise<UserSkill | null>;
  close(): Promise<void>;
}

export interface ClosedEventRow {
  id: string;
  slug: string;
  title: string;
  category: string;
  /** closed_at as ISO text (the keyset, at full precision). */
  at: string;
  market_count: number;
}

type Fragment = recordJson.Fragment;

/** docs/api.md "Limits": the `right` board lists people with 5 or more settled calls (as the snapshot does). */
const RIGHT_MIN_SETTLED = 5;
const STATEMENT_TIMEOUT_MS = 2_000;
const UNAVAILABLE = 'records are unavailable right now; please try again shortly';

const keyedBody = z.object({ key: z.union([z.string(), z.number()]), body: z.string() });

/** Connections of the pool this module opens, per API process. */
const POOL_SIZE = 8;

/**
 * @param deps.databaseUrl the pool this module opens (POOL_SIZE connections, each with a statement
 *   timeout, made on first use); or `db`, a pool of the caller's (the API's read pool, read-pool.ts,
 *   which sends these statements to a replica when there is one; a test's pool), which close() then disposes too.
 */
export function createPageReader(
  deps: ({ databaseUrl: string } | { db: ReadQueryable & Pick<Db, 'dispose'> }) & { webUrl: string; logger: Logger; sharedRankings?: SharedRankings },
): PageReader {
  const { webUrl, logger } = deps;
  const db = 'db' in deps ? deps.db : createDb(deps.databaseUrl, { poolSize: POOL_SIZE, statementTimeoutMs: STATEMENT_TIMEOUT_MS });

  const unavailable = (err: unknown, what: string): ApiError => {
    logger.warn({ err, what }, 'page query failed');
    return new ApiError('unavailable', UNAVAILABLE, { cause: err });
  };

  /** Statements that must agree (a ranking version and its rows): one read-only, time-boxed transaction; Postgres trouble is the caller's 503, never a 500. */
  async function read<T>(what: string, run: (tx: Pick<Db, 'query'>) => Promise<T>): Promise<T> {
    try {
      return await db.tx(run, {
        readOnly: true,
        isolationLevel: IsolationLevel.REPEATABLE_READ,
        statementTimeoutMilliseconds: STATEMENT_TIMEOUT_MS,
      });
    } catch (err) {
      throw unavailable(err, what);
    }
  }

  const boards = createBoardCache({ read, rank: boardRanking, page: boardPageOf, ...(deps.sharedRankings ? { shared: deps.sharedRankings } : {}) });

  /**
   * One SELECT on its own (one snapshot of the database by itself): one round trip where a
   * transaction costs four, under the pool's statement timeout. The hot person and call pages use it.
   */
  async function one<T>(what: string, statement: Fragment): Promise<T[]> {
    try {
      return (await db.query(statement)) as T[];
    } catch (err) {
      throw unavailable(err, what);
    }
  }

  const page = (rows: unknown[], limit: number): Page => {
    const parsed = rows.map((r) => keyedBody.parse(r));
    const shown = parsed.slice(0, limit);
    const last = shown.at(-1);
    return { bodies: shown.map((r) => r.body), nextAfter: parsed.length > limit && last ? last.key : null };
  };

  /**
   * inputs: the calls `x` to list (a condition), the id of the last call shown (none: the first
   * page), the page size. outputs: up to limit + 1 rows (key = call id, body = its Call object made
   * here from the record, so no page shows a call older than it is, made_at), newest first after
   * that call.
   */
  const callRows = (which: Fragment, after: string | undefined, limit: number) => sql`
    select c.id as key, ${recordJson.callObject(webUrl)} as body, r.made_at
    from (
      select x.id, x.made_at
      from calls x ${after === undefined ? sql`` : sql`, (select made_at, id from calls where id = ${after}) pos`}
      where ${which} ${after === undefined ? sql`` : sql`and (x.made_at, x.id) < (pos.made_at, pos.id)`}
      order by x.made_at desc, x.id desc
      limit ${limit + 1}
    ) r
    join calls c on c.id = r.id ${recordJson.CALL_JOINS}
    order by r.made_at desc, r.id desc
  `;

  return {
    async calls({ market, after, limit }) {
      const which = market === null ? sql`true` : sql`x.market_id = ${market}`;
      return page(await one('calls page', callRows(which, after, limit)), limit);
    },
    async userCalls({ handle, status, after, limit }) {
      // inputs: the person's handle (lower-cased), the filter, the last call shown (none: the first
      // page), the page size. outputs: no row when no one has that handle; else their handle as they
      // spell it, with their page of calls (callRows; a row with a null key when there are none). The
      // index range is calls_user_newest_cover or calls_user_status_newest.
      const mine = status === 'all' ? sql`x.user_id = o.id` : sql`x.user_id = o.id and x.status = ${status}`;
      const rows = await one<{ handle: string; key: string | null; body: string | null }>(
        'user calls page',
        sql`
          with owner as (select id, handle from users where lower(handle) = ${handle})
          select o.handle, p.key, p.body
          from owner o left join lateral (${callRows(mine, after, limit)}) p on true
          order by p.made_at desc, p.key desc
        `,
      );
      const first = rows[0];
      if (!first) return null;
      return { handle: first.handle, ...page(first.key === null ? [] : rows, limit) };
    },
    async user(handle) {
      // inputs: a handle, lower-cased. outputs: the person's record body (users_handle_ci, then user_records by key).
      const rows = await one<{ body: string }>(
        'user',
        sql`
          select '{"user":' || ${recordJson.userRecordObject(webUrl)} || '}' as body
          from users u left join user_records r on r.user_id = u.id
          where lower(u.handle) = ${handle}
        `,
      );
      return rows[0]?.body ?? null;
    },
    async call(id) {
      // inputs: a call id. outputs: its page body (calls by key, its thesis updates by thesis_updates_call).
      const rows = await one<{ body: string }>(
        'call',
        sql`
          select ${recordJson.callPageBody(webUrl)} as body
          from calls c ${recordJson.CALL_JOINS}
          left join (${recordJson.thesisUpdateLists(sql`t.call_id = ${id}`)}) tu on tu.call_id = c.id
          where c.id = ${id}
        `,
      );
      return rows[0]?.body ?? null;
    },
    async combos({ status, after, limit }) {
      // inputs: status, the id of the last combo shown, the page size. outputs: up to limit + 1 combos after it.
      const rows = await one(
        'combos page',
        sql`
          with pos as (select made_at, id from combos where id = ${after})
          select k.id as key, ${recordJson.comboObject(webUrl)} as body
          from (
            select x.* from combos x, pos
            where x.status = ${status} and (x.made_at, x.id) < (pos.made_at, pos.id)
            order by x.made_at desc, x.id desc
            limit ${limit + 1}
          ) k
          join users u on u.id = k.user_id
          order by k.made_at desc, k.id desc
        `,
      );
      return page(rows, limit);
    },
    async leaderboard({ sort, version, after, limit }) {
      return read('leaderboard page', async (tx) => {
        // inputs: version. outputs: whether that ranking is still kept.
        const kept = await tx.query(sql`select 1 from leaderboard_versions where version = ${version}`);
        if (kept.length === 0) return null;
        // inputs: board, version, the last rank shown, the page size. outputs: the rows of that
        // ranking after it (current rows made at or before the version, and rows replaced after it).
        const rows = await tx.query(sql`
          select l.rank as key, ${recordJson.leaderboardRowObject()} as body
          from (
            select rank, user_id from leaderboard_rows
            where sort = ${sort} and rank > ${after} and from_version <= ${version}
            union all
            select rank, user_id from leaderboard_retired
            where sort = ${sort} and rank > ${after} and from_version <= ${version} and to_version > ${version}
          ) l
          join users u on u.id = l.user_id
          left join user_records r on r.user_id = l.user_id
          where ${sort} <> 'right' or coalesce(r.settled, 0) >= ${RIGHT_MIN_SETTLED}
          order by l.rank
          limit ${limit + 1}
        `);
        return page(rows, limit);
      });
    },
    async closedEvents({ category, league, q, after, limit }) {
      // inputs: filters (league overrides category; q over the title and every market question), the
      // keyset of the last event shown, the page size. outputs: up to limit + 1 closed events, newest
      // closed first.
      const filters = [
        league !== null ? sql`lower(e.league) = ${league}` : category !== null ? sql`e.category = ${category}` : sql`true`,
        q === null
          ? sql`true`
          : sql`(strpos(lower(e.title), ${q}) > 0 or exists (select 1 from markets m where m.event_id = e.id and strpos(lower(m.question), ${q}) > 0))`,
        after === null ? sql`true` : sql`(e.closed_at, e.id) < (${after.at}::timestamptz, ${after.id})`,
      ];
      const rows = await one<ClosedEventRow>(
        'closed events page',
        sql`
          select e.id, e.slug, e.title, e.category,
                 to_char(e.closed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at,
                 (select count(*)::int from markets m where m.event_id = e.id) as market_count
          from events e
          where e.closed_at is not null and ${sql.join(filters, sql` and `)}
          order by e.closed_at desc, e.id desc
          limit ${limit + 1}
        `,
      );
      return { rows: rows.slice(0, limit), more: rows.length > limit };
    },
    keptRank: ({ sort, handle }) => read('leaderboard rank', (tx) => keptRank(tx, sort, handle)),
    board: (q) => boards.page(q),
    userSkill: ({ handle, category, now }) => read('user skill', (tx) => userSkill(tx, handle, category, now)),
    close: () => db.dispose(),
  };
}
