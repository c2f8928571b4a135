import { sql, type Db, type Queryable } from '@pm/shared/db';

/**
 * A big records database made set-based in SQL (a million calls in well under a minute), for the
 * settlement bench and the EXPLAIN test of the record queries:
 * - markets of 10 per event, two outcomes each, about CALLS_PER_MARKET calls each, plus the market
 *   `hot` with `hot` open calls (one per person as far as there are people) and combo legs;
 * - `users` people (handles `user<n>`), 5 follows each;
 * - the other calls 90 % settled as the worker would have (won/lost/void with docs/design.md's profit and
 *   XP) over the last 60 days, 5 % copying an older call;
 * - a combo per 50 calls, two legs, those with a leg on `hot` already decided on the other leg.
 * Statistics are gathered (VACUUM ANALYZE) at the end, so plans are the ones a database this size gets.
 *
 * Loaded as a restore loads (`bulkLoad`): the data is consistent by construction, so the foreign-key
 * checks (four index probes per call) are off for the load, and each table's secondary indexes are
 * dropped before and made again after it (one sorted build each instead of a million inserts into
 * eight b-trees). The indexes made are the migrations' own definitions, read back from pg_indexes.
 */

/**
 * Runs `load` with the foreign-key triggers off (when the role may: a superuser, as the test
 * databases' is) and the secondary indexes of `tables` dropped, then makes those indexes again,
 * all in one transaction. Input: tables, the load. Output: none.
 */
async function bulkLoad(db: Db, tables: readonly string[], load: (tx: Queryable) => Promise<void>): Promise<void> {
  await db.tx(async (tx) => {
    const [role]: Array<{ rolsuper: boolean }> = await tx.query(sql`select rolsuper from pg_roles where rolname = current_user`);
    if (role?.rolsuper === true) await tx.query(sql`set local session_replication_role = replica`);
    // Indexes that back no constraint (primary keys and unique constraints stay, and are checked).
    const indexes: Array<{ name: string; def: string }> = await tx.query(sql`
      select i.indexname as name, i.indexdef as def from pg_indexes i
      where i.schemaname = current_schema() and i.tablename = any(${[...tables]}::text[])
        and not exists (select 1 from pg_constraint c where c.conname = i.indexname and c.connamespace = to_regnamespace(current_schema()))`);
    for (const i of indexes) await tx.query(sql`drop index ${sql.ident(i.name)}`);
    await load(tx);
    await tx.query(sql`set local maintenance_work_mem = '256MB'`);
    // The definitions as Postgres printed them (fixed migration text, not input).
    for (const i of indexes) await tx.query(sql.__dangerous__rawValue(i.def));
  });
}

export interface DatasetSize {
  calls: number;
  users: number;
  /** Open calls on the market `hot` (part of `calls`). */
  hot: number;
  /** Further markets `hot2`, `hot3`, … with `hot` open calls each (part of `calls`; default none). */
  moreHot?: number;
}

/** The ids of the hot markets of a size: `hot`, then `hot2`, `hot3`, … */
export const hotMarketIds = (size: DatasetSize): string[] =>
  ['hot', ...Array.from({ length: size.moreHot ?? 0 }, (_, i) => `hot${i + 2}`)];

/** Background calls per market: about what a busy market collects. */
export const CALLS_PER_MARKET = 100;

export interface DatasetStep {
  label: string;
  run(db: Db): Promise<void>;
}

/** The generation as labelled steps (the bench times each); `generateDataset` runs them all. */
export function datasetSteps(size: DatasetSize): DatasetStep[] {
  const { calls: CALLS, users: USERS } = size;
  const HOT = Math.min(size.hot, CALLS);
  const hots = hotMarketIds(size);
  const ALL_HOT = Math.min(HOT * hots.length, CALLS);
  const MARKETS = Math.max(10, Math.ceil((CALLS - ALL_HOT) / CALLS_PER_MARKET));
  const COMBOS = Math.max(1, Math.round(CALLS / 50));
  return [
    {
      label: 'events, markets, outcomes',
      async run(db) {
        // Input: market count. Output: none; 10 markets per event, two outcomes each, plus the hot market.
        await db.query(sql`
          insert into events (id, slug, title, category, league)
          select 'e' || g, 'event-' || g, 'Event ' || g, 'Sport', case when g % 2 = 0 then 'nba' end from generate_series(0, ${Math.ceil(MARKETS / 10)}) g`);
        await db.query(sql`
          insert into markets (id, event_id, condition_id, position, question, closing_chances)
          select 'm' || g, 'e' || (g / 10), 'cond' || g, g % 10, 'Question ' || g || '?',
                 -- Where the market closed (its calls settled), the chances it closed at.
                 array[(0.05 + (g % 91) / 100.0)::numeric, (0.95 - (g % 91) / 100.0)::numeric]
          from generate_series(1, ${MARKETS}) g
          union all select h, 'e0', 'cond-' || h, 10 + n::int, 'The ' || h || ' market?', null from unnest(${hots}::text[]) with ordinality as x(h, n)`);
        await db.query(sql`
          insert into outcomes (market_id, outcome_index, name, token_id)
          select m.id, o, case o when 0 then 'Yes' else 'No' end, 'tok-' || m.id || '-' || o
          from markets m cross join generate_series(0, 1) o`);
      },
    },
    {
      label: 'users and follows (5 each)',
      run: (db) => bulkLoad(db, ['users', 'follows'], async (tx) => {
        // Input: user count. Output: none.
        await tx.query(sql`
          insert into users (handle, display_name, joined_at)
          select 'user' || g, 'User ' || g, now() - interval '90 days' from generate_series(1, ${USERS}) g`);
        await tx.query(sql`
          insert into follows (follower_id, followee_id)
          select distinct u, 1 + (u * 31 + k * 7919) % ${USERS}
          from generate_series(1, ${USERS}) u cross join generate_series(1, 5) k
          where 1 + (u * 31 + k * 7919) % ${USERS} <> u`);
      }),
    },
    {
      label: `${(CALLS - ALL_HOT).toLocaleString('en')} calls on ${MARKETS.toLocaleString('en')} markets (90% settled)`,
      run: (db) => bulkLoad(db, ['calls'], async (tx) => {
        // Input: counts. Output: none. Chances 0.05–0.94; 90 % settled as the worker would have
        // (won/lost/void with docs/design.md's profit and XP), over the last 60 days; 5 % copy a call.
        await tx.query(sql`
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
            from generate_series(1::bigint, ${CALLS - ALL_HOT}) g
          ) s`);
      }),
    },
    {
      label: `${HOT.toLocaleString('en')} open calls on each of ${hots.join(', ')}, ${Math.min(COMBOS, HOT)} combo legs on hot`,
      async run(db) {
        // Input: counts. Output: none. One call per person on each hot market (as far as there are people).
        await db.query(sql`
          insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
          select case h when 'hot' then 'h' else h || '-' end || g, 1 + (g - 1) % ${USERS}, h, g % 2,
                 (0.05 + (g % 90) / 100.0)::numeric, '', now() - interval '1 hour'
          from unnest(${hots}::text[]) h cross join generate_series(1, ${HOT}) g`);
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
      },
    },
    // What autovacuum would have done by now: statistics, and the visibility map index-only scans rely on.
    { label: 'vacuum analyze', run: (db) => db.query(sql`vacuum (analyze)`).then(() => undefined) },
  ];
}

export async function generateDataset(db: Db, size: DatasetSize): Promise<void> {
  for (const step of datasetSteps(size)) await step.run(db);
}

/**
 * The ingestor's part of a resolution: log it and mark the market resolved (`winner` null = void),
 * with the chances it closed at.
 * Input: market id, winning outcome. Output: none.
 */
export async function resolveMarket(db: Db, marketId: string, winner: number | null): Promise<void> {
  await db.query(sql`
    insert into market_resolutions (market_id, winning_outcome_index, voided, source) values (${marketId}, ${winner}, ${winner === null}, 'ws')`);
  await db.query(sql`
    update markets set closed = true, resolved_outcome_index = ${winner}, voided = ${winner === null}, resolved_at = now(),
                       closing_chances = coalesce(closing_chances, array[0.62, 0.38]::numeric[]) where id = ${marketId}`);
}
