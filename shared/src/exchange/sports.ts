import { z } from 'zod';
import { looseBoolean, looseText, parseEach, splitFrame } from './lenient.js';

/**
 * Sports channel frames (docs/protocol.md §2). There is no `event_type`: a frame is a game state.
 * `gameId` is a number, cricket sends `metadataGameId` as a string instead; status casing varies
 * and is passed through as sent. A field that is absent is null here, so a partial frame can be
 * merged over the last known state instead of blanking it.
 */
export interface SportsUpdate {
  gameId: string;
  league: string | null;
  homeTeam: string | null;
  awayTeam: string | null;
  status: string | null;
  score: string | null;
  period: string | null;
  /** `elapsed` as sent ("5:18", "74"). */
  elapsed: string | null;
  live: boolean | null;
  ended: boolean | null;
}

/** Team names come as strings; some feeds send `{name}` objects instead. */
const teamName = z.unknown().optional().transform((v): string | null => {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string') {
    return (v as { name: string }).name;
  }
  return null;
});

export const sportsUpdateSchema = z
  .object({
    gameId: looseText,
    metadataGameId: looseText,
    leagueAbbreviation: looseText,
    homeTeam: teamName,
    awayTeam: teamName,
    status: looseText,
    score: looseText,
    period: looseText,
    elapsed: looseText,
    live: looseBoolean,
    ended: looseBoolean,
  })
  .transform((f, ctx): SportsUpdate => {
    const id = [f.gameId, f.metadataGameId].map((v) => v?.trim() ?? '').find((v) => v !== '');
    if (!id) {
      ctx.addIssue({ code: 'custom', message: 'no gameId or metadataGameId' });
      return z.NEVER;
    }
    return {
      gameId: id,
      league: f.leagueAbbreviation === null ? null : f.leagueAbbreviation.trim().toLowerCase(),
      homeTeam: f.homeTeam,
      awayTeam: f.awayTeam,
      status: f.status,
      score: f.score,
      period: f.period,
      elapsed: f.elapsed,
      live: f.live,
      ended: f.ended,
    };
  });

export type SportsFrame =
  | { kind: 'text'; text: string }
  | { kind: 'updates'; updates: SportsUpdate[]; malformed: number };

/** Parse one sports frame: non-JSON text (`ping`) is `text`; an object or an array of objects gives updates. */
export function parseSportsFrame(raw: string): SportsFrame {
  const frame = splitFrame(raw);
  if (frame.kind === 'text') return frame;
  const { items, skipped } = parseEach(sportsUpdateSchema, frame.elements);
  return { kind: 'updates', updates: items, malformed: skipped };
}

/** Whether a status string means the game is in play / over, compared case-insensitively. */
export function statusIsLive(status: string | null): boolean | null {
  if (status === null) return null;
  const s = status.trim().toLowerCase().replace(/[\s_-]/g, '');
  if (['inprogress', 'running', 'live', 'inplay', 'halftime', 'break'].includes(s)) return true;
  if (statusIsEnded(status)) return false;
  return null;
}

export function statusIsEnded(status: string | null): boolean | null {
  if (status === null) return null;
  const s = status.trim().toLowerCase().replace(/[\s_-]/g, '');
  if (['final', 'finished', 'ended', 'ft', 'complete', 'completed', 'closed', 'aet', 'finalot'].includes(s)) return true;
  return null;
}
