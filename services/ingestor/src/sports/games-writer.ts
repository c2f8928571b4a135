import type { Logger } from '@pm/shared/logger';
import type { Db } from '@pm/shared/db';
import { changedEvents, upsertGames, type GameRow } from './games-db.js';
import { createCoalescedWrite } from '../common/coalesced-write.js';
import { statusIsEnded, statusIsLive, type SportsUpdate } from '@pm/shared/exchange';

/**
 * Game states from the sports channel into `games`. The channel re-sends unchanged states and
 * many games at once, so updates are merged per game in memory and written `flushMs` (default
 * 500 ms) after the first change of a batch as one set-based statement (coalesced-write.ts), never
 * a transaction per frame. Each game joins its
 * catalog event by `events.game_id`; a game whose row changed marks that event dirty.
 */

/** Merge a (possibly partial) frame over the last known state of its game. */
export function mergeGame(prev: GameRow | undefined, u: SportsUpdate): GameRow {
  const status = u.status ?? prev?.status ?? '';
  const ended = u.ended ?? statusIsEnded(u.status) ?? prev?.ended ?? false;
  const live = u.live ?? (ended ? false : (statusIsLive(u.status) ?? prev?.live ?? false));
  return {
    game_id: u.gameId,
    league: u.league ?? prev?.league ?? '',
    home_team: u.homeTeam ?? prev?.home_team ?? '',
    away_team: u.awayTeam ?? prev?.away_team ?? '',
    status,
    score: u.score ?? prev?.score ?? '',
    period: u.period ?? prev?.period ?? '',
    clock: u.elapsed ?? prev?.clock ?? '',
    live,
    ended,
  };
}

export interface GamesWriter {
  offer(update: SportsUpdate): void;
  flush(): Promise<void>;
  close(): Promise<void>;
  stats(): { games: number; writes: number };
}

export function createGamesWriter(opts: {
  db: Db;
  logger: Logger;
  markDirty: (eventId: string) => void;
  /** Games whose score, period or state (not only the clock) changed, as written, with their event's slug. */
  onStateChanged?: (games: Array<GameRow & { event_slug: string | null }>) => void;
  flushMs?: number;
}): GamesWriter {
  const state = new Map<string, GameRow>();
  let pending = new Set<string>();
  let stateChanged = new Set<string>();
  let writes = 0;

  async function write(): Promise<void> {
    if (pending.size === 0) return;
    const ids = pending;
    const states = stateChanged;
    pending = new Set();
    stateChanged = new Set();
    const rows = [...ids].map((id) => state.get(id)).filter((r): r is GameRow => r !== undefined);
    try {
      const changed = await upsertGames(opts.db, rows, 'sports');
      writes++;
      for (const eventId of changedEvents(changed)) opts.markDirty(eventId);
      const announced = changed.flatMap((r) => {
        const row = states.has(r.game_id) ? state.get(r.game_id) : undefined;
        return row ? [{ ...row, event_slug: r.event_slug }] : [];
      });
      if (announced.length > 0) opts.onStateChanged?.(announced);
    } catch (err) {
      for (const id of ids) pending.add(id);
      for (const id of states) stateChanged.add(id);
      throw err;
    }
  }

  const writer = createCoalescedWrite({
    write,
    delayMs: opts.flushMs ?? 500,
    onError: (err) => opts.logger.warn({ err, games: pending.size }, 'writing games failed; will retry'),
  });

  return {
    offer(u) {
      const prev = state.get(u.gameId);
      const next = mergeGame(prev, u);
      state.set(u.gameId, next);
      if (prev && JSON.stringify(prev) === JSON.stringify(next)) return;
      pending.add(u.gameId);
      if (!prev || prev.score !== next.score || prev.period !== next.period || prev.status !== next.status || prev.live !== next.live || prev.ended !== next.ended) stateChanged.add(u.gameId);
      writer.request();
    },
    async flush() {
      await writer.flush();
    },
    async close() {
      await writer.flush();
      writer.close();
    },
    stats: () => ({ games: state.size, writes }),
  };
}
