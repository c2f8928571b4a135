import { sql, type Db } from '@pm/shared/db';
import type { GammaEvent } from '@pm/shared/exchange';

/**
 * The catalog's view of a match (`score`, `period`, `elapsed`, `live`, `ended` on a sports event)
 * written to `games`, for the two cases the sports channel cannot cover (PROTOCOL.md §2):
 * - at start, before (or without) any sports frame for the game: the row is created from the catalog;
 * - a missed final frame (`ended: true` is usually sent once): when the catalog says ended and the
 *   row does not, the catalog's final score, period and clock win and the game stops being live.
 * Otherwise the sports channel is fresher than a catalog polled every 30 s, so its values are kept;
 * the catalog only fills fields the channel left empty.
 */

export interface CatalogGameRow {
  game_id: string;
  league: string;
  home_team: string;
  away_team: string;
  status: string;
  score: string;
  period: string;
  clock: string;
  live: boolean;
  ended: boolean;
}

/** Pure: one row per distinct gameId among the events (the first event wins). */
export function catalogGameRows(events: readonly GammaEvent[], leagueOf: (eventId: string) => string | null): CatalogGameRow[] {
  const rows = new Map<string, CatalogGameRow>();
  for (const e of events) {
    if (e.gameId === null || rows.has(e.gameId)) continue;
    const ended = e.ended === true;
    const live = !ended && e.live === true;
    const team = (home: boolean) => e.teams.find((t) => (t.ordering?.trim().toLowerCase() === 'home') === home)?.name ?? '';
    rows.set(e.gameId, {
      game_id: e.gameId,
      league: leagueOf(e.id) ?? '',
      home_team: team(true),
      away_team: team(false),
      status: ended ? 'Final' : live ? 'InProgress' : '',
      score: e.score ?? '',
      period: e.period ?? '',
      clock: e.elapsed ?? '',
      live,
      ended,
    });
  }
  return [...rows.values()];
}

/**
 * inputs: catalog game rows. outputs: event ids whose game row was inserted or changed.
 * The event is joined by `events.game_id` (the open event first), as the sports writer does.
 */
export async function writeCatalogGames(db: Db, rows: readonly CatalogGameRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const changed: Array<{ event_id: string | null }> = await db.query(sql`
    insert into games as g (game_id, event_id, league, home_team, away_team, status, score, period, clock, live, ended)
    select r.game_id,
           (select e.id from events e where e.game_id = r.game_id order by e.closed, e.updated_at desc limit 1),
           r.league, r.home_team, r.away_team, r.status, r.score, r.period, r.clock, r.live, r.ended
    from json_to_recordset(${JSON.stringify(rows)}::json) as r (
      game_id text, league text, home_team text, away_team text, status text, score text,
      period text, clock text, live boolean, ended boolean
    )
    on conflict (game_id) do update set
      event_id = coalesce(g.event_id, excluded.event_id),
      league = coalesce(nullif(g.league, ''), excluded.league),
      home_team = coalesce(nullif(g.home_team, ''), excluded.home_team),
      away_team = coalesce(nullif(g.away_team, ''), excluded.away_team),
      status = case when excluded.ended and not g.ended then excluded.status else coalesce(nullif(g.status, ''), excluded.status) end,
      score = case when excluded.ended and not g.ended then coalesce(nullif(excluded.score, ''), g.score) else coalesce(nullif(g.score, ''), excluded.score) end,
      period = case when excluded.ended and not g.ended then coalesce(nullif(excluded.period, ''), g.period) else coalesce(nullif(g.period, ''), excluded.period) end,
      clock = case when excluded.ended and not g.ended then coalesce(nullif(excluded.clock, ''), g.clock) else coalesce(nullif(g.clock, ''), excluded.clock) end,
      live = case when excluded.ended then false else g.live end,
      ended = g.ended or excluded.ended,
      updated_at = now()
    where (excluded.ended and not g.ended)
       or (g.event_id is null and excluded.event_id is not null)
       or (g.score = '' and excluded.score <> '')
       or (g.period = '' and excluded.period <> '')
       or (g.clock = '' and excluded.clock <> '')
       or (g.league = '' and excluded.league <> '')
       or (g.home_team = '' and excluded.home_team <> '')
       or (g.away_team = '' and excluded.away_team <> '')
    returning g.event_id
  `);
  return changed.flatMap((r) => (r.event_id ? [r.event_id] : []));
}
