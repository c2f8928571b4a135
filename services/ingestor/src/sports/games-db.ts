import { sql, type Db, type Events, type Games } from '@pm/shared/db';

type SQLQuery = ReturnType<typeof sql>;

/**
 * A game's state as both sources write it to `games` (empty text: the source did not say): the
 * generated row type without the columns the upsert sets itself (`event_id` joined from `events`,
 * `updated_at`).
 *
 * The upsert below stays hand-written SQL: pg-typed's insertOrUpdate overwrites every named column
 * with the new value, while here each column has its own merge rule per source (PRECEDENCE), the
 * event id is looked up in `events`, and an unchanged row is not rewritten.
 */
export type GameRow = Omit<Games, 'event_id' | 'updated_at'>;

type Merged = 'event_id' | Exclude<keyof GameRow, 'game_id'>;

const TEXT = ['league', 'home_team', 'away_team', 'status', 'score', 'period', 'clock'] as const;
/** The new value of a text column: the source's unless empty (empty text never blanks a known value). */
const theirs = (c: string) => sql`coalesce(nullif(excluded.${sql.ident(c)}, ''), g.${sql.ident(c)})`;
/** The stored value unless empty: the source only fills gaps. */
const ours = (c: string) => sql`coalesce(nullif(g.${sql.ident(c)}, ''), excluded.${sql.ident(c)})`;
/** The catalog says ended and the row does not: a final frame was missed (docs/protocol.md §2). */
const MISSED_FINAL = sql`(excluded.ended and not g.ended)`;

/**
 * Who wins a column when a game row already exists:
 * - `sports`: the channel is the fresher source; each frame's values win (empty text excepted).
 * - `catalog`: polled every 30 s, it only fills what the channel left empty, except for a missed
 *   final frame: then its final status, score, period and clock win and the game stops being live.
 */
const PRECEDENCE: Record<'sports' | 'catalog', Record<Merged, SQLQuery>> = {
  sports: {
    event_id: sql`coalesce(excluded.event_id, g.event_id)`,
    ...(Object.fromEntries(TEXT.map((c) => [c, theirs(c)])) as Record<(typeof TEXT)[number], SQLQuery>),
    live: sql`excluded.live`,
    ended: sql`excluded.ended`,
  },
  catalog: {
    event_id: sql`coalesce(g.event_id, excluded.event_id)`,
    league: ours('league'),
    home_team: ours('home_team'),
    away_team: ours('away_team'),
    status: sql`case when ${MISSED_FINAL} then excluded.status else ${ours('status')} end`,
    score: sql`case when ${MISSED_FINAL} then ${theirs('score')} else ${ours('score')} end`,
    period: sql`case when ${MISSED_FINAL} then ${theirs('period')} else ${ours('period')} end`,
    clock: sql`case when ${MISSED_FINAL} then ${theirs('clock')} else ${ours('clock')} end`,
    live: sql`case when excluded.ended then false else g.live end`,
    ended: sql`g.ended or excluded.ended`,
  },
};

/**
 * The one games upsert, for the sports channel and the catalog alike.
 * inputs: game rows, the source that sent them. outputs: the games inserted or changed, with their
 * event id and slug (an unchanged row is not rewritten). A game joins its catalog event by
 * `events.game_id`, the open event first.
 */
export async function upsertGames(db: Db, rows: readonly GameRow[], source: 'sports' | 'catalog'): Promise<ChangedGame[]> {
  if (rows.length === 0) return [];
  const merge = Object.entries(PRECEDENCE[source]) as Array<[Merged, SQLQuery]>;
  const columns = sql.join(merge.map(([c]) => sql`g.${sql.ident(c)}`), sql`, `);
  const values = sql.join(merge.map(([, v]) => v), sql`, `);
  return db.query(sql`
    insert into games as g (game_id, event_id, league, home_team, away_team, status, score, period, clock, live, ended)
    select r.game_id,
           (select e.id from events e where e.game_id = r.game_id order by e.closed, e.updated_at desc limit 1),
           r.league, r.home_team, r.away_team, r.status, r.score, r.period, r.clock, r.live, r.ended
    from json_to_recordset(${JSON.stringify(rows)}::json) as r (
      game_id text, league text, home_team text, away_team text, status text, score text,
      period text, clock text, live boolean, ended boolean
    )
    on conflict (game_id) do update set
      ${sql.join(merge.map(([c, v]) => sql`${sql.ident(c)} = ${v}`), sql`, `)},
      updated_at = now()
    where (${columns}) is distinct from (${values})
    returning g.game_id, g.event_id, (select e.slug from events e where e.id = g.event_id) as event_slug
  `) as Promise<ChangedGame[]>;
}

/** A game row that an upsert inserted or changed, with its catalog event (null until the catalog names it). */
export type ChangedGame = Pick<Games, 'game_id' | 'event_id'> & { event_slug: Events['slug'] | null };

/** The events whose games changed: what must be rebuilt. */
export function changedEvents(changed: readonly ChangedGame[]): string[] {
  return changed.flatMap((r) => (r.event_id ? [r.event_id] : []));
}
