import { z } from 'zod';
import type { CallStatus, LeaderboardSort, UserCallFilter } from '@pm/shared/api';
import { createDb, IsolationLevel, recordJson, sql, type Db } from '@pm/shared/db';
import type { Logger } from '@pm/shared/logger';
import { ApiError } from '../errors.js';

/**
 * The API's one read-only way into Postgres (contracts: "the API may read Postgres for pages past the
 * first, through ONE read-only module"). The first page of every list is the worker's snapshot; a
 * page after it is a keyset query here (DESIGN.md "The read path": never OFFSET), on the indexes of
 * migrations 0003 and 0005, each in a read-only transaction with a statement timeout. Items come as
 * the JSON text of shared/src/db/record-json.ts, the definition the snapshots are built from, so a
 * page past the first shows an item exactly as the first page would.
 *
 * Calls, combos: newest first by (made_at, id); a page starts after the item the cursor names, so
 * an item made after the walk began (it sorts before everything the walk has shown) never appears
 * in it and nothing is repeated or skipped. A call's object is the record_call_json row the worker
 * keeps (a projection of the call), or made on the spot when that row is missing.
 * Leaderboard: the ranking of the version the cursor pins (migration 0005), by rank.
 */

export interface Page {
  /** The items' JSON text, in list order. */
  bodies: string[];
  /** The key of the last item shown (call or combo id; rank), when there is a next page. */
  nextAfter: string | number | null;
}

export interface PageReader {
  calls(q: { market: string | null; after: string; limit: number }): Promise<Page>;
  userCalls(q: { handle: string; status: UserCallFilter; after: string; limit: number }): Promise<Page>;
  combos(q: { status: CallStatus; after: string; limit: number }): Promise<Page>;
  /** null when the ranking version is no longer kept. */
  leaderboard(q: { sort: LeaderboardSort; version: number; after: number; limit: number }): Promise<Page | null>;
  close(): Promise<void>;
}

type Fragment = recordJson.Fragment;

/** SPEC.md "Limits": the `right` board lists people with 5 or more settled calls (as the snapshot does). */
const RIGHT_MIN_SETTLED = 5;
const STATEMENT_TIMEOUT_MS = 2_000;
const UNAVAILABLE = 'pages past the first are unavailable right now; please try again shortly';

const keyedBody = z.object({ key: z.union([z.string(), z.number()]), body: z.string() });

/**
 * @param deps.databaseUrl the pool this module opens (4 connections, made on the first page past
 *   the first); or `db`, a pool of the caller's (tests), which close() then disposes too.
 */
export function createPageReader(deps: ({ databaseUrl: string } | { db: Db }) & { webUrl: string; logger: Logger }): PageReader {
  const { webUrl, logger } = deps;
  const db = 'db' in deps ? deps.db : createDb(deps.databaseUrl, { poolSize: 4 });

  /** One read-only, time-boxed transaction; Postgres trouble is the caller's 503, never a 500. */
  async function read<T>(what: string, run: (tx: Pick<Db, 'query'>) => Promise<T>): Promise<T> {
    try {
      return await db.tx(run, {
        readOnly: true,
        isolationLevel: IsolationLevel.REPEATABLE_READ,
        statementTimeoutMilliseconds: STATEMENT_TIMEOUT_MS,
      });
    } catch (err) {
      logger.warn({ err, what }, 'page query failed');
      throw new ApiError('unavailable', UNAVAILABLE, { cause: err });
    }
  }

  const page = (rows: unknown[], limit: number): Page => {
    const parsed = rows.map((r) => keyedBody.parse(r));
    const shown = parsed.slice(0, limit);
    const last = shown.at(-1);
    return { bodies: shown.map((r) => r.body), nextAfter: parsed.length > limit && last ? last.key : null };
  };

  /**
   * inputs: the calls `c` to list (a condition), the id of the last call shown, the page size.
   * outputs: up to limit + 1 rows (key = call id, body = its Call object), newest first after that call.
   */
  const callPage = (which: Fragment, after: string, limit: number) => sql`
    with pos as (select made_at, id from calls where id = ${after})
    select r.id as key,
           coalesce(cj.body, (select ${recordJson.callObject(webUrl)} from calls c ${recordJson.CALL_JOINS} where c.id = r.id)) as body
    from (
      select c.id, c.made_at from calls c, pos
      where ${which} and (c.made_at, c.id) < (pos.made_at, pos.id)
      order by c.made_at desc, c.id desc
      limit ${limit + 1}
    ) r
    left join record_call_json cj on cj.call_id = r.id
    order by r.made_at desc, r.id desc
  `;

  return {
    async calls({ market, after, limit }) {
      const which = market === null ? sql`true` : sql`c.market_id = ${market}`;
      return page(await read('calls page', (tx) => tx.query(callPage(which, after, limit))), limit);
    },
    async userCalls({ handle, status, after, limit }) {
      const who = sql`c.user_id = (select id from users where lower(handle) = ${handle})`;
      const which = status === 'all' ? who : sql`${who} and c.status = ${status}`;
      return page(await read('user calls page', (tx) => tx.query(callPage(which, after, limit))), limit);
    },
    async combos({ status, after, limit }) {
      // inputs: status, the id of the last combo shown, the page size. outputs: up to limit + 1 combos after it.
      const rows = await read('combos page', (tx) =>
        tx.query(sql`
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
        `),
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
    close: () => db.dispose(),
  };
}
