import { writeOutbox } from '@pm/shared/outbox';
import { anyOf, sql, tables, type Db } from '@pm/shared/db';
import type { CatalogRows, EventRow, MarketRow, OutcomeRow } from './catalog-map.js';
import { recordClosingChances, type LiveChances } from '../resolution/closing-chances.js';

/**
 * Catalog writes: set-based upserts of events, markets and outcomes, one transaction per page.
 * Rows travel as one JSON parameter read with json_to_recordset, so a page is three statements
 * however many rows it has. `updated_at` is bumped only where a column actually changed (the
 * `where … is distinct from` guard), which is also how a sync knows which events changed.
 * The upserts stay sql templates, not pg-typed's insertOrUpdate: they skip a row whose slug another
 * event holds and update only the rows that changed (returning those), which pg-typed cannot say.
 * Single-table reads and updates go through pg-typed.
 */

export interface PageWriteResult {
  /** Events with any inserted or changed row (event, market or outcome). */
  changedEventIds: Set<string>;
  /** Events left out because another event id already holds their slug. */
  slugConflicts: number;
}

/** `live`: the displayed chances a market the page closes records as its closing chances (closing-chances.ts). */
export async function writeCatalogPage(db: Db, rows: CatalogRows, live?: LiveChances): Promise<PageWriteResult> {
  if (rows.events.length === 0) return { changedEventIds: new Set(), slugConflicts: 0 };
  return db.tx(async (tx) => {
    const changed = new Set<string>();
    for (const r of await upsertEvents(tx, rows.events)) changed.add(r.id);
    // The page's events now present (the rest lost a slug conflict).
    const present = await tables.events(tx).find({ id: anyOf(rows.events.map((e) => e.id)) }).select('id').all();
    const presentIds = new Set<string>(present.map((r) => r.id));
    const markets = rows.markets.filter((m) => presentIds.has(m.event_id));
    for (const r of await upsertMarkets(tx, markets)) changed.add(r.event_id);
    const marketEvent = new Map(markets.map((m) => [m.id, m.event_id]));
    const outcomes = rows.outcomes.filter((o) => marketEvent.has(o.market_id));
    for (const r of await upsertOutcomes(tx, outcomes)) {
      const eventId = marketEvent.get(r.market_id);
      if (eventId) changed.add(eventId);
    }
    // Markets this page shows closed that have no closing chances yet get them, with the close.
    await recordClosingChances(tx, markets.filter((m) => m.closed).map((m) => m.id), live);
    // The durable record that these events' snapshots are stale, committed with the rows themselves.
    if (changed.size > 0) await writeOutbox(tx, 'events-changed', { eventIds: [...changed] });
    return { changedEventIds: changed, slugConflicts: rows.events.length - presentIds.size };
  });
}

type Tx = Parameters<Parameters<Db['tx']>[0]>[0];

async function upsertEvents(tx: Tx, rows: EventRow[]): Promise<Array<{ id: string }>> {
  // Input: $1 json array of EventRow. Output: ids of events inserted or changed.
  // An event whose slug is already held by another id is skipped (slug is unique) rather than
  // failing the page; the count of those is reported by the caller.
  return tx.query(sql`
    insert into events as e (
      id, slug, title, description, category, league, starts_at, closes_at,
      volume, volume_24h, liquidity, active, closed, game_id, teams, tags, neg_risk
    )
    select r.id, r.slug, r.title, r.description, r.category, r.league, r.starts_at, r.closes_at,
           r.volume, r.volume_24h, r.liquidity, r.active, r.closed, r.game_id,
           coalesce(r.teams, '[]'::jsonb), coalesce(r.tags, '[]'::jsonb), coalesce(r.neg_risk, false)
    from json_to_recordset(${JSON.stringify(rows)}::json) as r (
      id text, slug text, title text, description text, category text, league text,
      starts_at timestamptz, closes_at timestamptz, volume numeric, volume_24h numeric,
      liquidity numeric, active boolean, closed boolean, game_id text, teams jsonb, tags jsonb,
      neg_risk boolean
    )
    where not exists (select 1 from events o where o.slug = r.slug and o.id <> r.id)
    on conflict (id) do update set
      slug = excluded.slug, title = excluded.title, description = excluded.description,
      category = excluded.category, league = excluded.league, starts_at = excluded.starts_at,
      closes_at = excluded.closes_at, volume = excluded.volume, volume_24h = excluded.volume_24h,
      liquidity = excluded.liquidity, active = excluded.active, closed = excluded.closed,
      game_id = excluded.game_id, teams = excluded.teams, tags = excluded.tags,
      neg_risk = excluded.neg_risk, updated_at = now()
    where (e.slug, e.title, e.description, e.category, e.league, e.starts_at, e.closes_at,
           e.volume, e.volume_24h, e.liquidity, e.active, e.closed, e.game_id, e.teams, e.tags,
           e.neg_risk)
      is distinct from
          (excluded.slug, excluded.title, excluded.description, excluded.category, excluded.league,
           excluded.starts_at, excluded.closes_at, excluded.volume, excluded.volume_24h,
           excluded.liquidity, excluded.active, excluded.closed, excluded.game_id, excluded.teams,
           excluded.tags, excluded.neg_risk)
    returning e.id
  `);
}

async function upsertMarkets(tx: Tx, rows: MarketRow[]): Promise<Array<{ id: string; event_id: string }>> {
  if (rows.length === 0) return [];
  // Input: $1 json array of MarketRow. Output: (id, event_id) of markets inserted or changed.
  // A market already resolved (resolved_at set by a settlement source) stays closed even if the
  // catalog lags behind; resolution columns are never written here.
  return tx.query(sql`
    insert into markets as m (
      id, event_id, condition_id, position, question, slug, label, kind, line, closes_at,
      active, closed, accepting_orders, volume, one_day_price_change, neg_risk
    )
    select r.id, r.event_id, r.condition_id, r.position, r.question, r.slug, r.label, r.kind,
           r.line, r.closes_at, r.active, r.closed, r.accepting_orders, r.volume, r.one_day_price_change,
           coalesce(r.neg_risk, false)
    from json_to_recordset(${JSON.stringify(rows)}::json) as r (
      id text, event_id text, condition_id text, position integer, question text, slug text,
      label text, kind text, line numeric, closes_at timestamptz, active boolean, closed boolean,
      accepting_orders boolean, volume numeric, one_day_price_change numeric, neg_risk boolean
    )
    on conflict (id) do update set
      event_id = excluded.event_id, condition_id = excluded.condition_id,
      position = excluded.position, question = excluded.question, slug = excluded.slug,
      label = excluded.label, kind = excluded.kind, line = excluded.line,
      closes_at = excluded.closes_at, active = excluded.active,
      closed = excluded.closed or m.resolved_at is not null,
      accepting_orders = excluded.accepting_orders, volume = excluded.volume,
      one_day_price_change = excluded.one_day_price_change, neg_risk = excluded.neg_risk,
      updated_at = now()
    where (m.event_id, m.condition_id, m.position, m.question, m.slug, m.label, m.kind, m.line,
           m.closes_at, m.active, m.closed, m.accepting_orders, m.volume, m.one_day_price_change,
           m.neg_risk)
      is distinct from
          (excluded.event_id, excluded.condition_id, excluded.position, excluded.question,
           excluded.slug, excluded.label, excluded.kind, excluded.line, excluded.closes_at,
           excluded.active, excluded.closed or m.resolved_at is not null,
           excluded.accepting_orders, excluded.volume, excluded.one_day_price_change,
           excluded.neg_risk)
    returning m.id, m.event_id
  `);
}

async function upsertOutcomes(tx: Tx, rows: OutcomeRow[]): Promise<Array<{ market_id: string }>> {
  if (rows.length === 0) return [];
  // Input: $1 json array of OutcomeRow. Output: market ids of outcomes inserted or changed.
  return tx.query(sql`
    insert into outcomes as o (market_id, outcome_index, name, token_id, catalog_price)
    select r.market_id, r.outcome_index, r.name, r.token_id, r.catalog_price
    from json_to_recordset(${JSON.stringify(rows)}::json) as r (
      market_id text, outcome_index integer, name text, token_id text, catalog_price numeric
    )
    on conflict (market_id, outcome_index) do update set
      name = excluded.name, token_id = excluded.token_id, catalog_price = excluded.catalog_price
    where (o.name, o.token_id, o.catalog_price)
      is distinct from (excluded.name, excluded.token_id, excluded.catalog_price)
    returning o.market_id
  `);
}

/**
 * Close an event the catalog no longer knows (404 by id over the grace period: catalog-sync.ts), and
 * its markets. No resolution is recorded: the exchange said nothing about a winner. Returns whether
 * it was open.
 */
export async function closeVanishedEvent(db: Db, eventId: string, live?: LiveChances): Promise<boolean> {
  return db.tx(async (tx) => {
    const at = new Date();
    // The event, when it was open (and is now closed); then its open markets.
    const closed = await tables.events(tx).update({ id: eventId, closed: false }, { closed: true, updated_at: at });
    await tx.query(sql`delete from catalog_absences where event_id = ${eventId}`);
    if (closed.length === 0) return false;
    const markets = await tables.markets(tx).update({ event_id: eventId, closed: false }, { closed: true, updated_at: at });
    await recordClosingChances(tx, markets.map((m) => m.id), live);
    return true;
  });
}

/**
 * One more sync found the event unknown to the catalog (404 by id): counts the miss and says how many
 * syncs in a row have found it missing and since when (migration 0009). Nothing is closed here.
 */
export async function recordCatalogMiss(db: Db, eventId: string, at: Date): Promise<{ misses: number; firstMissedAt: Date }> {
  // inputs: event id, the time of this miss. outputs: the absence row after counting it.
  const [row] = (await db.query(sql`
    insert into catalog_absences as a (event_id, first_missed_at, last_missed_at, misses)
    values (${eventId}, ${at}, ${at}, 1)
    on conflict (event_id) do update set last_missed_at = excluded.last_missed_at, misses = a.misses + 1
    returning a.misses, a.first_missed_at
  `)) as Array<{ misses: number; first_missed_at: Date }>;
  if (row === undefined) throw new Error(`catalog miss of ${eventId} was not recorded`);
  return { misses: row.misses, firstMissedAt: row.first_missed_at };
}

/** The catalog answered for these events again: their absence, if any, is forgotten. */
export async function forgetCatalogMisses(db: Db, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  // inputs: event ids the catalog answered for. outputs: none (their absence rows deleted).
  await db.query(sql`delete from catalog_absences where event_id = any(${[...eventIds]}::text[])`);
}

/** Ids of events the database holds as open (to find those that left the catalog's open list). */
export async function openEventIds(db: Db): Promise<string[]> {
  const rows = await tables.events(db).find({ closed: false }).select('id').all();
  return rows.map((r) => r.id);
}

/** One outcome as the live feed needs it in memory. */
export interface OutcomeRef {
  tokenId: string;
  marketId: string;
  eventId: string;
  /** The event's slug (what the event stream's messages name the event by). */
  eventSlug: string;
  outcomeIndex: number;
  name: string;
  catalogPrice: number | null;
  /** Market or event closed: no longer subscribed on the market channel. */
  closed: boolean;
}

/**
 * Every outcome with its market's event and whether it is still open, but those of events closed
 * before `closedAfter` (every outcome ever seen, otherwise: the directory would hold them all).
 */
export async function loadOutcomes(db: Db, closedAfter: Date): Promise<OutcomeRef[]> {
  // Input: the oldest close to load. Output: one row per outcome token with its market, event (id and
  // slug), catalog price and open state.
  const rows: Array<{
    token_id: string;
    market_id: string;
    event_id: string;
    event_slug: string;
    outcome_index: number;
    name: string;
    catalog_price: string | null;
    closed: boolean;
  }> = await db.query(sql`
    select o.token_id, o.market_id, m.event_id, e.slug as event_slug, o.outcome_index, o.name, o.catalog_price,
           (m.closed or e.closed) as closed
    from outcomes o
    join markets m on m.id = o.market_id
    join events e on e.id = m.event_id
    where e.closed_at is null or e.closed_at >= ${closedAfter}
  `);
  return rows.map((r) => ({
    tokenId: r.token_id,
    marketId: r.market_id,
    eventId: r.event_id,
    eventSlug: r.event_slug,
    outcomeIndex: r.outcome_index,
    name: r.name,
    catalogPrice: r.catalog_price === null ? null : Number(r.catalog_price),
    closed: r.closed,
  }));
}
