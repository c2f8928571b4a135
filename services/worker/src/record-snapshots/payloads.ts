import type { Call, CallSubset, Combo, LeaderboardRow, UserRecord } from '@pm/shared/api';
import type { CallRow, ComboRow, LeaderboardDbRow, LegRow, ThesisUpdateRow, UserRow } from './queries.js';

/**
 * Pure mapping from parsed rows to the SPEC.md resources (no I/O), so each field rule is visible in
 * one place: the links of DESIGN.md, ISO timestamps, `copied_from` as `{id, handle}` or null.
 */

export const callUrl = (webUrl: string, id: string) => `${webUrl}/c/${encodeURIComponent(id)}`;
export const userUrl = (webUrl: string, handle: string) => `${webUrl}/u/${encodeURIComponent(handle)}`;
export const comboUrl = (webUrl: string, id: string) => `${webUrl}/combo/${encodeURIComponent(id)}`;

/** The lower-cased handle that names a person's snapshots (handles match case-insensitively). */
export const handleKey = (handle: string) => handle.toLowerCase();

export function toCall(row: CallRow, webUrl: string): Call {
  return {
    id: row.id,
    user: { handle: row.handle, avatar: row.avatar },
    market_id: row.market_id,
    event: row.event_slug,
    question: row.question,
    outcome: row.outcome,
    outcome_index: row.outcome_index,
    chance_at_call: row.chance_at_call,
    thesis: row.thesis,
    // The copied call's author is always known (a foreign key); a missing join would mean a deleted
    // user, and a half object is worse than none.
    copied_from: row.copied_from !== null && row.copied_handle !== null ? { id: row.copied_from, handle: row.copied_handle } : null,
    is_fade: row.is_fade,
    status: row.status,
    profit_on_10: row.status === 'open' ? null : row.profit_on_10,
    made_at: row.made_at.toISOString(),
    settled_at: row.settled_at === null ? null : row.settled_at.toISOString(),
    url: callUrl(webUrl, row.id),
  };
}

export function toCallSubset(row: CallRow, updates: readonly ThesisUpdateRow[], webUrl: string): CallSubset {
  return {
    id: row.id,
    user: { handle: row.handle },
    question: row.question,
    outcome: row.outcome,
    chance_at_call: row.chance_at_call,
    status: row.status,
    profit_on_10: row.status === 'open' ? null : row.profit_on_10,
    thesis: row.thesis,
    thesis_updates: updates.map((u) => ({ body: u.body, at: u.at.toISOString() })),
    url: callUrl(webUrl, row.id),
  };
}

export function toUserRecord(row: UserRow, webUrl: string): UserRecord {
  return {
    handle: row.handle,
    display_name: row.display_name,
    avatar: row.avatar,
    calls: row.calls,
    settled: row.settled,
    won: row.won,
    right_pct: row.right_pct,
    profit_on_10: row.profit_on_10,
    profit_7d: row.profit_7d,
    xp: row.xp,
    streak: row.streak,
    followers: row.followers,
    following: row.following,
    copies: row.copies,
    bio: row.bio,
    interests: row.interests,
    joined_at: row.joined_at.toISOString(),
    url: userUrl(webUrl, row.handle),
  };
}

export function toLeaderboardRow(row: LeaderboardDbRow): LeaderboardRow {
  return {
    rank: row.rank,
    handle: row.handle,
    display_name: row.display_name,
    avatar: row.avatar,
    right_pct: row.right_pct,
    settled: row.settled,
    won: row.won,
    profit_on_10: row.profit_on_10,
    profit_7d: row.profit_7d,
    xp: row.xp,
    streak: row.streak,
  };
}

export function toCombo(row: ComboRow, legs: readonly LegRow[], webUrl: string): Combo {
  return {
    id: row.id,
    user: { handle: row.handle },
    chance: row.chance,
    wins_on_10: row.wins_on_10,
    status: row.status,
    xp_awarded: row.xp_awarded,
    legs: legs.map((l) => ({
      market_id: l.market_id,
      question: l.question,
      outcome: l.outcome,
      outcome_index: l.outcome_index,
      chance_at_call: l.chance_at_call,
      status: l.status,
    })),
    made_at: row.made_at.toISOString(),
    url: comboUrl(webUrl, row.id),
  };
}

/** Group rows by a key, keeping their order. */
export function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = out.get(k);
    if (list) list.push(row);
    else out.set(k, [row]);
  }
  return out;
}
