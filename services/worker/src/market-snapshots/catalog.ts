import { z } from 'zod';
import { categorySchema, type Category, type Team } from '@pm/shared/api';
import { CATALOG_RELOAD_ALL } from '@pm/shared/redis';
import { sql, type Db, type Events, type Games, type Markets, type MarketSplits, type Outcomes } from '@pm/shared/db';
import type { CatalogEvent, CatalogMarket, GameState } from './model.js';
import { sameData } from './same-data.js';

/**
 * Loads the catalog from Postgres and keeps it in process memory between builds.
 *
 * Why a cache: builds run every ~250 ms while prices move, and a price-only rebuild needs nothing
 * from Postgres but what it already has. The events/markets/outcomes part changes when a catalog
 * change names its events (SnapshotTrigger.markCatalogChanged: a page the ingestor wrote, a market
 * resolved), and only those events' rows are re-read; a change that names none, or a `catalogVersion`
 * moved without any, re-reads all. Games by a cheap probe (a fingerprint of the games rows, including
 * updated_at); platform splits are re-read for the events being rebuilt.
 *
 * A whole reload keeps the object of every event whose rows read the same as before: only the events
 * that changed (or were marked) are rebuilt, and the list cards of the others stay as they were
 * (list-bodies.ts tells a changed event by its object). A catalog sync changes a page at a time:
 * re-reading all 5,000 open events and rebuilding every page and card for each kept the worker busy
 * for seconds per sync, beside the API on the same cores. A full build still rebuilds everything.
 */

type Queryable = Pick<Db, 'query'>;
type SQLQuery = ReturnType<typeof sql>;

// ── Rows: typed by the generated row types (a test keeps those equal to the migrations); numeric
// columns are read as float8 (numbers) for display. What the tables cannot promise is parsed: the
// category text and the teams JSON. ──────────────────────────────────────────────────────────────
const teamSchema = z.object({
  name: z.string().catch(''),
  abbreviation: z.string().catch(''),
  home: z.boolean().catch(false),
});
// A malformed teams value should cost the event its teams, not the whole build.
const teamsSchema = z.array(teamSchema).catch([]);

type AsNumber<Row, K extends keyof Row> = Omit<Row, K> & { [P in K]: null extends Row[P] ? number | null : number };
type EventRow = AsNumber<Pick<Events, 'id' | 'slug' | 'title' | 'category' | 'league' | 'closes_at' | 'volume' | 'volume_24h' | 'closed' | 'teams'>, 'volume' | 'volume_24h'>;
/** An event row with its category and teams parsed. */
type LoadedEvent = Omit<EventRow, 'category' | 'teams'> & { category: Category; teams: Team[] };
type MarketRow = AsNumber<
  Pick<Markets, 'id' | 'event_id' | 'position' | 'question' | 'label' | 'kind' | 'closes_at' | 'closed' | 'one_day_price_change' | 'resolved_outcome_index' | 'voided' | 'resolved_at'>,
  'one_day_price_change'
> & { closing_chances: Array<number | null> | null; settling: { settled: number; calls: number } | null };
type OutcomeRow = AsNumber<Pick<Outcomes, 'market_id' | 'outcome_index' | 'name' | 'token_id' | 'catalog_price'>, 'catalog_price'>;
/** updated_at as text: full precision, to notice a change. */
type GameRow = Pick<Games, 'game_id' | 'league' | 'live' | 'ended' | 'score' | 'clock' | 'period'> & { event_id: string; updated_at: string };
type SplitRow = Pick<MarketSplits, 'market_id' | 'outcome_index' | 'people'>;

/** Which events a load covers: the open ones, or these ids (closed events rebuilt on change). */
export type EventFilter = { open: true } | { ids: readonly string[] };

function where(filter: EventFilter): SQLQuery {
  return 'open' in filter ? sql`e.closed = false` : sql`e.id = any(${[...filter.ids]}::text[])`;
}

export interface CatalogRows {
  events: CatalogEvent[];
  games: Map<string, GameState>;
  splits: Map<string, Map<number, number>>;
}

/**
 * Events with their markets (position order) and outcomes (index order), their games and splits,
 * read in one read-only repeatable-read transaction so a concurrent catalog sync cannot hand us a
 * market whose event we did not see.
 */
export async function loadCatalog(db: Db, filter: EventFilter): Promise<CatalogRows> {
  return db.tx(async (tx) => {
    await tx.query(sql`set transaction isolation level repeatable read, read only`);
    const f = where(filter);
    // inputs: event filter. outputs: one row per selected event.
    const events: LoadedEvent[] = (
      await tx.query(sql`
        select e.id, e.slug, e.title, e.category, e.league, e.closes_at,
               e.volume::float8 as volume, e.volume_24h::float8 as volume_24h, e.closed, e.teams
        from events e
        where ${f}
      `)
    ).map((r: EventRow) => ({ ...r, category: categorySchema.parse(r.category), teams: teamsSchema.parse(r.teams) }));
    // inputs: event filter. outputs: every market of those events, in catalog position order.
    const markets: MarketRow[] = await tx.query(sql`
        select m.id, m.event_id, m.position, m.question, m.label, m.kind, m.closes_at, m.closed,
               m.one_day_price_change::float8 as one_day_price_change, m.resolved_outcome_index, m.voided, m.resolved_at,
               m.closing_chances::float8[] as closing_chances,
               -- A settlement in parts under way (services/worker/src/settlement): its progress.
               case when m.settled_at is null and m.settle_progress is not null
                    then jsonb_build_object('settled', (m.settle_progress ->> 'won')::int + (m.settle_progress ->> 'lost')::int + (m.settle_progress ->> 'void')::int,
                                            'calls', (m.settle_progress ->> 'calls')::int) end as settling
        from markets m
        join events e on e.id = m.event_id
        where ${f}
        order by m.event_id, m.position, m.id
      `);
    // inputs: event filter. outputs: every outcome of those markets, in outcome index order.
    const outcomes: OutcomeRow[] = await tx.query(sql`
        select o.market_id, o.outcome_index, o.name, o.token_id, o.catalog_price::float8 as catalog_price
        from outcomes o
        join markets m on m.id = o.market_id
        join events e on e.id = m.event_id
        where ${f}
        order by o.market_id, o.outcome_index
      `);
    const games = await queryGames(tx, f);
    const splits = await querySplits(tx, f);
    return { events: assemble(events, markets, outcomes), games, splits };
  });
}

/** Games of the selected events (the most recently updated one when an event has several). */
export async function loadGames(db: Queryable, filter: EventFilter): Promise<Map<string, GameState>> {
  return queryGames(db, where(filter));
}

/** market_splits of the selected events' markets. */
export async function loadSplits(db: Queryable, filter: EventFilter): Promise<Map<string, Map<number, number>>> {
  return querySplits(db, where(filter));
}

/**
 * A fingerprint of the games table that changes whenever a row is inserted, deleted or changes in
 * anything a snapshot shows. A hash sum over the rows rather than max(updated_at): an update that
 * commits after a later-stamped one would not move the maximum. One tiny aggregate instead of
 * re-reading every game on every price-only build.
 * inputs: none. outputs: one row {n, latest}.
 */
export async function probeGames(db: Queryable): Promise<string> {
  const [row] = await db.query(sql`
    select count(*)::int as n,
           coalesce(sum(hashtextextended(concat_ws('|', game_id, event_id, league, score, period, clock,
                                                   live::text, ended::text, updated_at::text), 0)), 0)::text as latest
    from games
  `);
  const { n, latest } = row as { n: number; latest: string };
  return `${n}|${latest}`;
}

async function queryGames(db: Queryable, f: SQLQuery): Promise<Map<string, GameState>> {
  // inputs: event filter. outputs: at most one game per event, the latest updated.
  const rows: GameRow[] = await db.query(sql`
    select distinct on (g.event_id)
           g.game_id, g.event_id, g.league, g.live, g.ended, g.score, g.clock, g.period, g.updated_at::text as updated_at
    from games g
    join events e on e.id = g.event_id
    where ${f}
    order by g.event_id, g.updated_at desc, g.game_id
  `);
  const games = new Map<string, GameState>();
  for (const r of rows) {
    games.set(r.event_id, {
      gameId: r.game_id,
      eventId: r.event_id,
      league: r.league,
      live: r.live,
      ended: r.ended,
      score: r.score,
      clock: r.clock,
      period: r.period,
      updatedAt: r.updated_at,
    });
  }
  return games;
}

async function querySplits(db: Queryable, f: SQLQuery): Promise<Map<string, Map<number, number>>> {
  // inputs: event filter. outputs: (market, outcome index, people) for those events' markets.
  const rows: SplitRow[] = await db.query(sql`
    select s.market_id, s.outcome_index, s.people
    from market_splits s
    join markets m on m.id = s.market_id
    join events e on e.id = m.event_id
    where ${f}
  `);
  const splits = new Map<string, Map<number, number>>();
  for (const r of rows) {
    let byOutcome = splits.get(r.market_id);
    if (byOutcome === undefined) splits.set(r.market_id, (byOutcome = new Map()));
    byOutcome.set(r.outcome_index, r.people);
  }
  return splits;
}

/**
 * A resolved market shows its result, not the order book's last quote (books linger after the
 * exchange resolves and the tokens stop trading): the winner 1 and the rest 0; a voided market its
 * catalog price, which the exchange sets to the final prices. A market that is merely closed keeps
 * its live chance: the catalog can lag the book by a sync interval.
 */
function finalChance(market: MarketRow, outcome: OutcomeRow): number | null {
  if (market.resolved_outcome_index !== null) return outcome.outcome_index === market.resolved_outcome_index ? 1 : 0;
  if (market.voided) return outcome.catalog_price;
  return null;
}

function assemble(
  events: LoadedEvent[],
  markets: MarketRow[],
  outcomes: OutcomeRow[],
): CatalogEvent[] {
  const marketById = new Map(markets.map((m) => [m.id, m]));
  const outcomesByMarket = new Map<string, CatalogMarket['outcomes']>();
  for (const o of outcomes) {
    let list = outcomesByMarket.get(o.market_id);
    if (list === undefined) outcomesByMarket.set(o.market_id, (list = []));
    const market = marketById.get(o.market_id);
    list.push({
      index: o.outcome_index,
      name: o.name,
      tokenId: o.token_id,
      catalogPrice: o.catalog_price,
      finalChance: market === undefined ? null : finalChance(market, o),
    });
  }
  const marketsByEvent = new Map<string, CatalogMarket[]>();
  for (const m of markets) {
    let list = marketsByEvent.get(m.event_id);
    if (list === undefined) marketsByEvent.set(m.event_id, (list = []));
    list.push({
      id: m.id,
      eventId: m.event_id,
      position: m.position,
      question: m.question,
      label: m.label,
      kind: m.kind,
      closesAt: m.closes_at,
      closed: m.closed,
      oneDayPriceChange: m.one_day_price_change,
      resolution: m.resolved_at === null ? null : { outcome: m.voided ? null : m.resolved_outcome_index, at: m.resolved_at },
      closingChances: m.closing_chances,
      settling: m.settling,
      outcomes: outcomesByMarket.get(m.id) ?? [],
    });
  }
  return events.map((e) => ({
    id: e.id,
    slug: e.slug,
    title: e.title,
    category: e.category,
    league: e.league,
    closesAt: e.closes_at,
    volume: e.volume,
    volume24h: e.volume_24h,
    closed: e.closed,
    teams: e.teams satisfies Team[],
    markets: marketsByEvent.get(e.id) ?? [],
  }));
}

// ── The cache ────────────────────────────────────────────────────────────────────────────────────

/** What one build works from. */
export interface CatalogView {
  /** Open events (closed = false). */
  open: readonly CatalogEvent[];
  /** Requested events that are not open (closed since, or closed all along): rebuilt, never listed. */
  extra: readonly CatalogEvent[];
  /** Games by event id (open and extra events). */
  games: ReadonlyMap<string, GameState>;
  /** Splits by market id (open and extra events). */
  splits: ReadonlyMap<string, ReadonlyMap<number, number>>;
  /** Open events whose snapshot must be rebuilt: all of them, or these ids. */
  rebuild: 'all' | ReadonlySet<string>;
}

/** What the cache holds now, without asking Postgres (undefined before the first refresh). */
export interface CachedCatalog {
  byId: ReadonlyMap<string, CatalogEvent>;
  games: ReadonlyMap<string, GameState>;
  splits: ReadonlyMap<string, ReadonlyMap<number, number>>;
}

export interface CatalogCache {
  /** The catalog as of the last refresh: for pages that must not wait for Postgres (a price change). */
  cached(): CachedCatalog | undefined;
  /**
   * Bring the cache up to date and say what to rebuild.
   * @param version the `catalogVersion` read from Redis in this build
   * @param dirty event ids popped from the dirty set
   * @param catalogDirty event ids popped from the catalog-dirty set, with the version: only these
   *   events' rows are re-read; `CATALOG_RELOAD_ALL` among them (or a new version without any) re-reads all
   * @param full reload everything from Postgres (start, periodic safety sweep)
   */
  refresh(input: { version: string; dirty: readonly string[]; catalogDirty?: readonly string[]; full: boolean }): Promise<CatalogView>;
}

interface CacheState {
  version: string;
  gamesKey: string;
  open: CatalogEvent[];
  byId: Map<string, CatalogEvent>;
  games: Map<string, GameState>;
  splits: Map<string, Map<number, number>>;
}

export function createCatalogCache(db: Db): CatalogCache {
  let state: CacheState | undefined;

  async function reload(version: string): Promise<{ next: CacheState; left: string[] }> {
    // Probe first: a games write during the load shows up as a changed key next build, never as a missed one.
    const gamesKey = await probeGames(db);
    const rows = await loadCatalog(db, { open: true });
    // The previous object of each event that reads the same: the builder and the lists see it unchanged.
    const events = rows.events.map((e) => {
      const before = state?.byId.get(e.id);
      return before !== undefined && sameData(before, e) ? before : e;
    });
    const byId = new Map(events.map((e) => [e.id, e] as const));
    // Events that were open and no longer are (closed, or deleted): rebuild their page once more.
    const left = state === undefined ? [] : [...state.byId.keys()].filter((id) => !byId.has(id));
    return { next: { version, gamesKey, open: events, byId, games: rows.games, splits: rows.splits }, left };
  }

  return {
    cached: () => state,
    async refresh({ version, dirty, catalogDirty = [], full }) {
      let rebuild: CatalogView['rebuild'];
      let extraIds: string[];
      const reloadAll = catalogDirty.includes(CATALOG_RELOAD_ALL) || (state !== undefined && state.version !== version && catalogDirty.length === 0);
      if (full || state === undefined || reloadAll) {
        const before = state;
        const { next, left } = await reload(version);
        state = next;
        rebuild = full || before === undefined ? 'all' : reloadedChanges(before, next, dirty);
        extraIds = [...new Set([...left, ...dirty])].filter((id) => !next.byId.has(id));
      } else {
        const current = state;
        // The events whose rows changed, re-read: the open ones replace theirs, the others leave.
        if (catalogDirty.length > 0) {
          const rows = await loadCatalog(db, { ids: catalogDirty });
          const loaded = new Map(rows.events.map((e) => [e.id, e] as const));
          for (const id of catalogDirty) {
            const e = loaded.get(id);
            if (e !== undefined && !e.closed) current.byId.set(id, e);
            else current.byId.delete(id);
          }
          current.open = [...current.byId.values()];
          current.version = version;
        }
        // Marked events (the catalog ones are marked as well): open ones are rebuilt, the others once more as extra.
        const marked = [...new Set([...dirty, ...catalogDirty])];
        const ids = new Set(marked.filter((id) => current.byId.has(id)));
        extraIds = marked.filter((id) => !current.byId.has(id));
        const gamesKey = await probeGames(db);
        if (gamesKey !== current.gamesKey) {
          const games = await loadGames(db, { open: true });
          for (const id of changedGames(current.games, games)) ids.add(id);
          current.games = games;
          current.gamesKey = gamesKey;
        }
        if (ids.size > 0) {
          // Splits move when people call (projection worker), which marks the event dirty.
          const fresh = await loadSplits(db, { ids: [...ids] });
          for (const id of ids) for (const m of current.byId.get(id)?.markets ?? []) current.splits.delete(m.id);
          for (const [marketId, rows] of fresh) current.splits.set(marketId, rows);
        }
        rebuild = ids;
      }

      if (extraIds.length === 0) {
        return { open: state.open, extra: [], games: state.games, splits: state.splits, rebuild };
      }
      // Closed events are not cached: they are rebuilt only when marked, which is rare.
      const extra = await loadCatalog(db, { ids: extraIds });
      return {
        open: state.open,
        extra: extra.events.filter((e) => !state?.byId.has(e.id)),
        games: new Map([...state.games, ...extra.games]),
        splits: new Map([...state.splits, ...extra.splits]),
        rebuild,
      };
    },
  };
}

/**
 * The open events to rebuild after a reload: those marked, those whose rows changed (a new object:
 * `reload` keeps the old one when they did not) or are new, and those whose game or splits changed.
 */
function reloadedChanges(before: CacheState, after: CacheState, dirty: readonly string[]): Set<string> {
  const ids = new Set(dirty.filter((id) => after.byId.has(id)));
  for (const e of after.open) {
    if (before.byId.get(e.id) !== e) ids.add(e.id);
    else if (e.markets.some((m) => !sameData(before.splits.get(m.id), after.splits.get(m.id)))) ids.add(e.id);
  }
  for (const id of changedGames(before.games, after.games)) if (after.byId.has(id)) ids.add(id);
  return ids;
}

/** Event ids whose game appeared, disappeared or changed in anything the event page shows. */
function changedGames(before: ReadonlyMap<string, GameState>, after: ReadonlyMap<string, GameState>): string[] {
  const changed: string[] = [];
  for (const [eventId, g] of after) {
    const old = before.get(eventId);
    const same =
      old !== undefined &&
      old.gameId === g.gameId &&
      old.updatedAt === g.updatedAt &&
      old.live === g.live &&
      old.ended === g.ended &&
      old.score === g.score &&
      old.clock === g.clock &&
      old.period === g.period &&
      old.league === g.league;
    if (!same) changed.push(eventId);
  }
  for (const eventId of before.keys()) if (!after.has(eventId)) changed.push(eventId);
  return changed;
}
