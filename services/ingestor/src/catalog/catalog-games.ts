import type { Db } from '@pm/shared/db';
import { changedEvents, upsertGames, type GameRow } from '../sports/games-db.js';
import type { GammaEvent } from '@pm/shared/exchange';

/**
 * The catalog's view of a match (`score`, `period`, `elapsed`, `live`, `ended` on a sports event)
 * written to `games`, for the two cases the sports channel cannot cover (docs/protocol.md §2):
 * - at start, before (or without) any sports frame for the game: the row is created from the catalog;
 * - a missed final frame (`ended: true` is usually sent once): when the catalog says ended and the
 *   row does not, the catalog's final score, period and clock win and the game stops being live.
 * Otherwise the sports channel is fresher than a catalog polled every 30 s, so its values are kept;
 * the catalog only fills fields the channel left empty.
 */

/** Pure: one row per distinct gameId among the events (the first event wins). */
export function catalogGameRows(events: readonly GammaEvent[], leagueOf: (eventId: string) => string | null): GameRow[] {
  const rows = new Map<string, GameRow>();
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

/** The catalog's rows fill gaps and repair a missed final (games-db.ts, precedence `catalog`). */
export async function writeCatalogGames(db: Db, rows: readonly GameRow[]): Promise<string[]> {
  return changedEvents(await upsertGames(db, rows, 'catalog'));
}
