import type { Logger } from '@pm/shared/logger';
import { sql, type Db } from '@pm/shared/db';
import { statusIsEnded, statusIsLive, type SportsUpdate } from '@pm/shared/exchange';

/**
 * Game states from the sports channel into `games`. The channel re-sends unchanged states and
 * many games at once, so updates are merged per game in memory and written every `flushMs`
 * (default 500 ms) as one set-based statement, never a transaction per frame. Each game joins its
 * catalog event by `events.game_id`; a game whose row changed marks that event dirty.
 */

export interface GameRow {
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
  const flushMs = opts.flushMs ?? 500;
  const state = new Map<string, GameRow>();
  let pending = new Set<string>();
  let stateChanged = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let writes = 0;

  function schedule() {
    if (!timer) timer = setTimeout(() => void flush(), flushMs);
  }

  async function write(rows: GameRow[], states: ReadonlySet<string>): Promise<void> {
    // Input: $1 json array of GameRow. Output: game id, event id and event slug of games inserted or changed.
    // Empty text from a frame never blanks a known value (after a restart the in-memory merge
    // starts empty, and a partial frame must not erase what the table holds).
    const changed: Array<{ game_id: string; event_id: string | null; event_slug: string | null }> = await opts.db.query(sql`
      insert into games as g (game_id, event_id, league, home_team, away_team, status, score, period, clock, live, ended)
      select r.game_id,
             (select e.id from events e where e.game_id = r.game_id order by e.closed, e.updated_at desc limit 1),
             r.league, r.home_team, r.away_team, r.status, r.score, r.period, r.clock, r.live, r.ended
      from json_to_recordset(${JSON.stringify(rows)}::json) as r (
        game_id text, league text, home_team text, away_team text, status text, score text,
        period text, clock text, live boolean, ended boolean
      )
      on conflict (game_id) do update set
        event_id = coalesce(excluded.event_id, g.event_id),
        league = coalesce(nullif(excluded.league, ''), g.league),
        home_team = coalesce(nullif(excluded.home_team, ''), g.home_team),
        away_team = coalesce(nullif(excluded.away_team, ''), g.away_team),
        status = coalesce(nullif(excluded.status, ''), g.status),
        score = coalesce(nullif(excluded.score, ''), g.score),
        period = coalesce(nullif(excluded.period, ''), g.period),
        clock = coalesce(nullif(excluded.clock, ''), g.clock),
        live = excluded.live, ended = excluded.ended, updated_at = now()
      where (g.event_id, g.league, g.home_team, g.away_team, g.status, g.score, g.period, g.clock, g.live, g.ended)
        is distinct from
            (coalesce(excluded.event_id, g.event_id), coalesce(nullif(excluded.league, ''), g.league),
             coalesce(nullif(excluded.home_team, ''), g.home_team), coalesce(nullif(excluded.away_team, ''), g.away_team),
             coalesce(nullif(excluded.status, ''), g.status), coalesce(nullif(excluded.score, ''), g.score),
             coalesce(nullif(excluded.period, ''), g.period), coalesce(nullif(excluded.clock, ''), g.clock),
             excluded.live, excluded.ended)
      returning g.game_id, g.event_id, (select e.slug from events e where e.id = g.event_id) as event_slug
    `);
    writes++;
    for (const r of changed) if (r.event_id) opts.markDirty(r.event_id);
    const announced = changed.flatMap((r) => {
      const row = states.has(r.game_id) ? state.get(r.game_id) : undefined;
      return row ? [{ ...row, event_slug: r.event_slug }] : [];
    });
    if (announced.length > 0) opts.onStateChanged?.(announced);
  }

  function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.size === 0) return inFlight;
    const ids = pending;
    const states = stateChanged;
    pending = new Set();
    stateChanged = new Set();
    const rows = [...ids].map((id) => state.get(id)).filter((r): r is GameRow => r !== undefined);
    inFlight = inFlight.then(() =>
      write(rows, states).catch((err: unknown) => {
        opts.logger.warn({ err, games: rows.length }, 'writing games failed; will retry');
        for (const id of ids) pending.add(id);
        for (const id of states) stateChanged.add(id);
        schedule();
      }),
    );
    return inFlight;
  }

  return {
    offer(u) {
      const prev = state.get(u.gameId);
      const next = mergeGame(prev, u);
      state.set(u.gameId, next);
      if (prev && JSON.stringify(prev) === JSON.stringify(next)) return;
      pending.add(u.gameId);
      if (!prev || prev.score !== next.score || prev.period !== next.period || prev.status !== next.status || prev.live !== next.live || prev.ended !== next.ended) stateChanged.add(u.gameId);
      schedule();
    },
    flush,
    async close() {
      await flush();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
    stats: () => ({ games: state.size, writes }),
  };
}
