import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgFormat } from '@databases/pg';
import { sql, type Db } from '@pm/shared/db';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { projectChanges, usersLeavingWeek } from '../../services/worker/src/projections/index.js';
import { globalBodies, marketBodies, refreshTouchedCallJson } from '../../services/worker/src/record-snapshots/bodies.js';
import { calledMarketIdsAfter, touchedMarkets } from '../../services/worker/src/record-snapshots/queries.js';
import { settleMarket } from '../../services/worker/src/settlement/index.js';
import { generateDataset, resolveMarket } from '../support/records-dataset.js';
import { pino } from 'pino';
import { createPageReader } from '../../services/api/src/pages/pages.js';

/**
 * Every query the worker runs on calls, combos and legs for one settlement — the settle-market
 * transaction, the project-users transaction (records, splits, the four boards, the 7-day edge), an
 * incremental record snapshot build — and the pages of a full snapshot build, run for real over a
 * generated database of a million calls (RECORD_QUERIES_CALLS to change it) with each statement
 * EXPLAINed first: none may read calls by a sequential scan (scans of the far smaller combos and
 * combo_legs are printed, not failed: for a thousand of twenty thousand combos a scan is the right plan).
 *
 * The data is made once per run of this file, set-based and loaded as a restore loads (records-dataset.ts),
 * then VACUUM ANALYZE. Left out on purpose: the full projection rebuild (`{all: true}`) and the full
 * record build's two whole-table statements (full-build.ts), which read every call and should.
 */

const CALLS = Number(process.env.RECORD_QUERIES_CALLS ?? 1_000_000);
const USERS = Math.max(100, Math.round(CALLS / 20));
/** Fails the test. Combos and legs (50 times fewer rows) are reported: scanning them can be the right plan. */
const SCANNED = new Set(['calls']);
const REPORTED = new Set(['combos', 'combo_legs']);
const EXPLAINABLE = /^\s*(select|with|insert|update|delete|create\s+temp)/i;

interface Explained {
  statement: string;
  seqScans: string[];
  reported: string[];
}

let tdb: TestDatabase;
let tr: TestRedis;
const explained: Explained[] = [];

/** Tables of `among` that a JSON plan scans sequentially. */
function seqScansIn(node: Record<string, unknown>, among: ReadonlySet<string>): string[] {
  const here = String(node['Node Type']).endsWith('Seq Scan') && among.has(String(node['Relation Name'])) ? [String(node['Relation Name'])] : [];
  const children = (node.Plans as Array<Record<string, unknown>> | undefined) ?? [];
  return [...here, ...children.flatMap((child) => seqScansIn(child, among))];
}

/**
 * The database as the worker's code sees it, except that each explainable statement is EXPLAINed
 * (its plan kept in `explained`) just before it runs, in the same transaction.
 */
function explaining(db: Db): Db {
  type Q = { query: (q: ReturnType<typeof sql>) => Promise<unknown[]> };
  const wrap = <T extends Q>(target: T): T =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        if (prop === 'query') {
          return async (q: ReturnType<typeof sql>) => {
            const text = q.format(pgFormat).text;
            if (EXPLAINABLE.test(text)) {
              const [row] = (await obj.query(sql`explain (format json) ${q}`)) as Array<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>;
              const plan = row?.['QUERY PLAN'][0]?.Plan;
              explained.push({
                statement: text.replace(/\s+/g, ' ').slice(0, 160),
                seqScans: plan ? seqScansIn(plan, SCANNED) : [],
                reported: plan ? seqScansIn(plan, REPORTED) : [],
              });
            }
            return obj.query(q);
          };
        }
        if (prop === 'tx') {
          const tx = Reflect.get(obj, prop, receiver) as (fn: (t: Q) => Promise<unknown>, opts?: unknown) => Promise<unknown>;
          return (fn: (t: Q) => Promise<unknown>, opts?: unknown) => tx.call(obj, (t: Q) => fn(wrap(t)), opts);
        }
        const value = Reflect.get(obj, prop, receiver) as unknown;
        // `sql` is a tag with helpers of its own (ident, join…) that pg-typed reads: never rebound.
        if (prop === 'sql') return value;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(obj) : value;
      },
    });
  return wrap(db as unknown as Q) as unknown as Db;
}

beforeAll(async () => {
  [tdb, tr] = await Promise.all([createTestDatabase('record_queries'), createTestRedis('record_queries')]);
  const t0 = performance.now();
  await generateDataset(tdb.db, { calls: CALLS, users: USERS, hot: 1000 });
  process.stdout.write(`record-queries: generated ${CALLS.toLocaleString('en')} calls, ${USERS.toLocaleString('en')} users in ${Math.round(performance.now() - t0)} ms\n`);
}, 900_000);

afterAll(async () => {
  await tr?.cleanup();
  await tdb?.drop();
});

describe(`the worker's record queries over ${CALLS.toLocaleString('en')} calls`, () => {
  it('never scan calls, combos or legs sequentially', async () => {
    const db = explaining(tdb.db);
    const webUrl = 'https://predict.example';

    // A settlement and everything it sets off.
    await resolveMarket(tdb.db, 'hot', 0);
    const settled = await settleMarket(db, 'hot', new Date());
    expect(settled.userIds.length).toBeGreaterThan(0);
    const someMarket = 'm5';
    await projectChanges(db, { userIds: settled.userIds, marketIds: [someMarket] }, new Date());
    const now = Date.now();
    await usersLeavingWeek(db, new Date(now - 8 * 86_400_000), new Date(now - 7 * 86_400_000));
    // What an incremental record snapshot build reads for such a settlement (builder.ts buildDirty).
    const dirty = { calls: ['c12345'], markets: ['hot', someMarket] };
    const markets = await touchedMarkets(db, dirty);
    // Only the touched calls a list shows: not the settled market's 10,000.
    const listed = await refreshTouchedCallJson(db, dirty, webUrl, markets);
    expect(listed.calls).toBeGreaterThan(0);
    expect(listed.calls).toBeLessThanOrEqual(300);
    await marketBodies(db, markets, webUrl);
    await globalBodies(db, webUrl);

    // One page of the paged family of a full build (full-build.ts; its whole-table statement, every
    // call's Call object, reads every call on purpose and is left out).
    const marketIds = await calledMarketIdsAfter(db, 'm5', 50);
    await marketBodies(db, marketIds, webUrl);

    const bad = explained.filter((e) => e.seqScans.length > 0).map((e) => `${e.seqScans.join(', ')} ← ${e.statement}`);
    const reported = explained.filter((e) => e.reported.length > 0).map((e) => `${e.reported.join(', ')} ← ${e.statement}`);
    process.stdout.write(`record-queries: ${explained.length} statements explained, ${bad.length} with a sequential scan of calls\n`);
    if (reported.length > 0) process.stdout.write(`record-queries: sequential scans of combos or legs (not failing):\n  ${reported.join('\n  ')}\n`);
    expect(explained.length).toBeGreaterThan(15);
    expect(bad).toEqual([]);
  }, 900_000);
});

describe(`the API's reads of Postgres over ${CALLS.toLocaleString('en')} calls`, () => {
  it('never scan calls sequentially', async () => {
    explained.length = 0;
    // The API's page reader (services/api/src/pages), every list and filter it pages, on this database.
    const pages = createPageReader({ db: explaining(tdb.db), webUrl: 'https://predict.example', logger: pino({ level: 'silent' }) });
    const [latest]: Array<{ version: number }> = await tdb.db.query(sql`select max(version)::int as version from leaderboard_versions`);
    const version = latest?.version ?? 0;
    const pageSizes = [
      await pages.calls({ market: null, after: `c${Math.floor(CALLS / 2)}`, limit: 100 }),
      await pages.calls({ market: 'm5', after: 'c5', limit: 100 }),
      await pages.userCalls({ handle: 'user7', status: 'all', after: 'c12345', limit: 100 }),
      await pages.userCalls({ handle: 'user7', status: 'won', after: 'c12345', limit: 100 }),
      // A person's first pages, record and a call's page: what /users/{handle}, its calls and /calls/{id} read.
      await pages.userCalls({ handle: 'user7', status: 'all', limit: 100 }),
      await pages.userCalls({ handle: 'user7', status: 'lost', limit: 25 }),
      await pages.combos({ status: 'open', after: 'k500', limit: 50 }),
    ].map((p) => p?.bodies.length ?? -1);
    await pages.leaderboard({ sort: 'profit', version, after: 10, limit: 100 });
    expect(await pages.user('user7')).toContain('"handle":"user7"');
    expect(await pages.call('c12345')).toContain('"id":"c12345"');
    expect(pageSizes[0]).toBe(100);
    expect(pageSizes[4]).toBeGreaterThan(0);
    const bad = explained.filter((e) => e.seqScans.length > 0).map((e) => `${e.seqScans.join(', ')} ← ${e.statement}`);
    process.stdout.write(`record-queries: ${explained.length} page statements explained, ${bad.length} with a sequential scan of calls\n`);
    expect(explained.length).toBeGreaterThanOrEqual(11);
    expect(bad).toEqual([]);
  }, 120_000);
});
