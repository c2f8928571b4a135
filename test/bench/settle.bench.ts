/**
 * npm run bench:settle [-- --calls N --users N --hot N] [--keep  (leave the scratch database for inspection)]
 * Makes the data set-based in SQL in a scratch database (dropped afterwards), then times the real
 * code paths of the worker:
 *   1. settling one market with `--hot` open calls (default 10,000) and combo legs
 *      (settleMarket: the settle-market job's transaction), then refreshing the affected users'
 *      records and re-ranking every leaderboard (projectChanges: the project-users job's transaction);
 *   2. a full rebuild of every projection (rebuildProjections: `npm run rebuild`) over `--calls`
 *      calls (default 1,000,000) of `--users` people (default 50,000).
 * A benchmark measures; it asserts nothing beyond the work having been done.
 */
import { parseArgs } from 'node:util';
import { sql } from '@pm/shared/db';
import { createTestDatabase } from '@pm/shared/testing';
import { projectChanges, rebuildProjections } from '../../services/worker/src/projections/index.js';
import { settleMarket } from '../../services/worker/src/settlement/index.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000000' },
    users: { type: 'string', default: '50000' },
    hot: { type: 'string', default: '10000' },
    keep: { type: 'boolean', default: false },
  },
});
const CALLS = Number(values.calls);
const USERS = Number(values.users);
const HOT = Math.min(Number(values.hot), CALLS);
for (const [name, n] of Object.entries({ calls: CALLS, users: USERS, hot: HOT })) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
}
/** Background calls per market: about what a busy market collects. */
const CALLS_PER_MARKET = 100;
const MARKETS = Math.max(10, Math.ceil((CALLS - HOT) / CALLS_PER_MARKET));
const COMBOS = Math.max(1, Math.round(CALLS / 50));

const say = (line: string) => process.stdout.write(`${line}\n`);
async function timed<T>(label: string, work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await work();
  const ms = Math.round(performance.now() - t0);
  say(`  ${label.padEnd(58)} ${String(ms).padStart(7)} ms`);
  return { value, ms };
}

async function main() {
  say(`bench:settle — ${CALLS.toLocaleString('en')} calls, ${USERS.toLocaleString('en')} users, one market with ${HOT.toLocaleString('en')} open calls`);
  const tdb = await createTestDatabase('bench_settle');
  const { db } = tdb;
  try {
    say('generating (set-based SQL):');
    await timed('events, markets, outcomes', async () => {
      // Input: market count. Output: none; 10 markets per event, two outcomes each, plus the hot market.
      await db.query(sql`
        insert into events (id, slug, title, category)
        select 'e' || g, 'event-' || g, 'Event ' || g, 'Sport' from generate_series(0, ${Math.ceil(MARKETS / 10)}) g`);
      await db.query(sql`
        insert into markets (id, event_id, condition_id, position, question)
        select 'm' || g, 'e' || (g / 10), 'cond' || g, g % 10, 'Question ' || g || '?' from generate_series(1, ${MARKETS}) g
        union all select 'hot', 'e0', 'cond-hot', 10, 'The hot market?'`);
      await db.query(sql`
        insert into outcomes (market_id, outcome_index, name, token_id)
        select m.id, o, case o when 0 then 'Yes' else 'No' end, 'tok-' || m.id || '-' || o
        from markets m cross join generate_series(0, 1) o`);
    });
    await timed('users and follows (5 each)', async () => {
      // Input: user count. Output: none.
      await db.query(sql`
        insert into users (handle, display_name, joined_at)
        select 'user' || g, 'User ' || g, now() - interval '90 days' from generate_series(1, ${USERS}) g`);
      await db.query(sql`
        insert into follows (follower_id, followee_id)
        select distinct u, 1 + (u * 31 + k * 7919) % ${USERS}
        from generate_series(1, ${USERS}) u cross join generate_series(1, 5) k
        where 1 + (u * 31 + k * 7919) % ${USERS} <> u`);
    });
    await timed(`${(CALLS - HOT).toLocaleString('en')} calls on ${MARKETS.toLocaleString('en')} markets (90% settled)`, async () => {
      // Input: counts. Output: none. Chances 0.05–0.94; 90 % settled as the worker would have
      // (won/lost/void with DESIGN.md's profit and XP), over the last 60 days; 5 % copy a call.
      await db.query(sql`
        insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, copied_from, status, profit_on_10, xp_awarded, made_at, settled_at)
        select id, user_id, market_id, outcome_index, chance, '', copied_from, status,
               case status when 'open' then null when 'won' then round(10 / chance - 10, 2) when 'lost' then -10 else 0 end,
               case status when 'won' then 10 + round(90 * (1 - chance))::int else 0 end,
               made_at, case when status = 'open' then null else made_at + interval '1 day' end
        from (
          select 'c' || g as id, 1 + (g * 7919) % ${USERS} as user_id, 'm' || (1 + g % ${MARKETS}) as market_id,
                 g % 2 as outcome_index, (0.05 + (g % 90) / 100.0)::numeric as chance,
                 case when g % 20 = 0 and g > 1000 then 'c' || (g - 1000) end as copied_from,
                 case when g % 10 = 0 then 'open' when g % 37 = 0 then 'void' when (g / 7) % 2 = 0 then 'won' else 'lost' end as status,
                 now() - (g % 60) * interval '1 day' - (g % 86400) * interval '1 second' as made_at
          from generate_series(1::bigint, ${CALLS - HOT}) g
        ) s`);
    });
    await timed(`${HOT.toLocaleString('en')} open calls and ${Math.min(COMBOS, HOT)} combo legs on the hot market`, async () => {
      // Input: counts. Output: none. One call per person (as far as there are people).
      await db.query(sql`
        insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
        select 'h' || g, 1 + (g - 1) % ${USERS}, 'hot', g % 2, (0.05 + (g % 90) / 100.0)::numeric, '', now() - interval '1 hour'
        from generate_series(1, ${HOT}) g`);
      await db.query(sql`
        insert into combos (id, user_id, chance, wins_on_10, made_at)
        select 'k' || g, 1 + (g * 13) % ${USERS}, 0.25, 40, now() - interval '2 hours' from generate_series(1, ${COMBOS}) g`);
      await db.query(sql`
        insert into combo_legs (combo_id, leg_index, market_id, outcome_index, chance_at_call)
        select 'k' || g, 0, case when g <= ${HOT} then 'hot' else 'm' || (1 + g % ${MARKETS}) end, 0, 0.5 from generate_series(1, ${COMBOS}) g
        union all
        select 'k' || g, 1, 'm' || (1 + (g + 1) % ${MARKETS}), 1, 0.5 from generate_series(1, ${COMBOS}) g`);
      // The other leg of each hot combo is already settled (won or void), so settling the hot market decides them.
      await db.query(sql`
        update combo_legs set status = case when combo_id ~ '[02468]$' then 'won' else 'void' end, settled_at = now() - interval '1 hour'
        where leg_index = 1 and combo_id in (select combo_id from combo_legs where market_id = 'hot')`);
    });
    await timed('analyze', () => db.query(sql`analyze`));

    say('timings (real code paths):');
    const rebuild = await timed(`full rebuild (${CALLS.toLocaleString('en')} calls, ${USERS.toLocaleString('en')} users)`, () => rebuildProjections(db, new Date()));
    say(`    per projection: ${JSON.stringify(rebuild.value.ms)}`);

    // The ingestor's part: log the resolution (Yes won).
    await db.query(sql`insert into market_resolutions (market_id, winning_outcome_index, voided, source) values ('hot', 0, false, 'ws')`);
    await db.query(sql`update markets set closed = true, resolved_outcome_index = 0, resolved_at = now() where id = 'hot'`);
    const settle = await timed(`settle the hot market (${HOT.toLocaleString('en')} open calls)`, () => settleMarket(db, 'hot', new Date()));
    const s = settle.value;
    say(`    settled calls ${s.calls.won + s.calls.lost + s.calls.void}, legs ${s.legs}, combos decided ${s.combos.length}, users affected ${s.userIds.length}`);
    const project = await timed(`refresh ${s.userIds.length.toLocaleString('en')} records + re-rank the 4 leaderboards`, () =>
      projectChanges(db, { userIds: s.userIds, marketIds: [] }, new Date()),
    );
    say(`    per projection: ${JSON.stringify(project.value.ms)}`);
    say(`  ${'settle + refresh'.padEnd(58)} ${String(settle.ms + project.ms).padStart(7)} ms`);
    const again = await timed('the same settlement delivered again (no-op)', () => settleMarket(db, 'hot', new Date()));
    if (again.value.calls.won + again.value.calls.lost !== 0) throw new Error('a repeated settlement changed calls');
    const [check]: Array<{ open: number; rows: number }> = await db.query(sql`
      select (select count(*) from calls where market_id = 'hot' and status = 'open')::int as open,
             (select count(*) from leaderboard_rows)::int as rows`);
    say(`  check: open calls left on the hot market ${check!.open}; leaderboard rows ${check!.rows}`);
  } finally {
    if (values.keep) {
      say(`kept the scratch database: ${tdb.url}`);
      await db.dispose();
    } else await tdb.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:settle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
