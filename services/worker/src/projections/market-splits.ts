import { sql } from '@pm/shared/db';
import type { Projection } from './projection.js';

/**
 * market_splits (platform_split): per market, the people whose LATEST call on it (by made_at, then
 * id) is on each outcome — one per person, so someone who changed their mind counts once, on their
 * new side. A market with at least one call has a row for EVERY outcome (zeros included), so the
 * split reads in outcome order straight from the rows; a market nobody called has none (docs/api.md:
 * "empty when nobody has called the market"). The rule is domain platformSplit; rules.int.test.ts
 * holds this SQL equal to it.
 */
export const marketSplits: Projection = {
  name: 'market_splits',
  version: 1,
  handles: ['CallRecorded'],
  tables: ['market_splits'],
  async apply(tx, scope) {
    if (!scope.all && scope.marketIds.length === 0) return;
    const markets = scope.all ? sql`select distinct market_id from calls` : sql`select unnest(${scope.marketIds}::text[]) as market_id`;
    // Input: the target markets (all called markets, or an id list). Output: none; their rows replaced.
    await tx.query(sql`
      delete from market_splits where ${scope.all ? sql`true` : sql`market_id = any(${scope.marketIds}::text[])`}
    `);
    await tx.query(sql`
      with target as (${markets}),
      latest as (
        select distinct on (c.user_id, c.market_id) c.market_id, c.outcome_index
        from calls c join target t on t.market_id = c.market_id
        order by c.user_id, c.market_id, c.made_at desc, c.id desc
      ),
      counted as (
        select market_id, outcome_index, count(*)::integer as people from latest group by market_id, outcome_index
      )
      insert into market_splits (market_id, outcome_index, people)
      select o.market_id, o.outcome_index, coalesce(k.people, 0)
      from outcomes o
      join (select distinct market_id from latest) called on called.market_id = o.market_id
      left join counted k on k.market_id = o.market_id and k.outcome_index = o.outcome_index
    `);
  },
};
