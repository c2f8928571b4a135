import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { CALL_STATUSES, LEADERBOARD_SORTS, LEADERBOARD_WINDOWS, USER_CALL_FILTERS } from '@pm/shared/api';
import { ApiError } from '../http/errors.js';

/**
 * `next_cursor` / `?cursor=` of the four lists (docs/design.md "Pagination"). A cursor names the list it
 * belongs to — path and filter, and for the leaderboard the ranking version its first page showed —
 * and the last item shown (a call or combo id, or a rank). It is JSON in base64url followed by an
 * HMAC-SHA256 of that text keyed by CURSOR_SECRET, so an altered cursor, or one made up, is refused
 * before anything is read, and a cursor of another list (or of the same list with another filter)
 * is refused by comparing what it names with the request. `limit` is not part of it: a client may
 * change its page size mid-walk.
 */

/** Where a page ends, per list. */
export type ListPosition =
  | { list: 'calls'; market: string | null; after: string }
  | { list: 'user-calls'; handle: string; status: (typeof USER_CALL_FILTERS)[number]; after: string }
  | { list: 'combos'; status: (typeof CALL_STATUSES)[number]; after: string }
  | { list: 'leaderboard'; sort: (typeof LEADERBOARD_SORTS)[number]; version: number; after: number }
  | { list: 'markets-open'; filter: string; version: number; after: number }
  | { list: 'markets-closed'; filter: string; after: string; id: string }
  // The trade tape: `filter` names the event and the parameters, `after` the last trade's id.
  | { list: 'trades'; filter: string; after: string }
  // A board of a window or a field: ranked as of `asOf` (Unix ms), the instant of its first page.
  | { list: 'board'; sort: (typeof LEADERBOARD_SORTS)[number]; window: (typeof LEADERBOARD_WINDOWS)[number]; field: string | null; asOf: number; after: number }
  // The archive's manifest: its filter (dataset, start, end) and the last file shown.
  | { list: 'exports'; filter: string; day: string; dataset: string; format: string };

export type ListName = ListPosition['list'];
/** A list as a request names it: everything of its position but where it ends (and the leaderboard's version). */
export type ListIdentity =
  | { list: 'calls'; market: string | null }
  | { list: 'user-calls'; handle: string; status: (typeof USER_CALL_FILTERS)[number] }
  | { list: 'combos'; status: (typeof CALL_STATUSES)[number] }
  | { list: 'leaderboard'; sort: (typeof LEADERBOARD_SORTS)[number] }
  | { list: 'markets-open'; filter: string }
  | { list: 'markets-closed'; filter: string }
  | { list: 'trades'; filter: string }
  | { list: 'board'; sort: (typeof LEADERBOARD_SORTS)[number]; window: (typeof LEADERBOARD_WINDOWS)[number]; field: string | null }
  | { list: 'exports'; filter: string };
export type PositionOf<L extends ListName> = Extract<ListPosition, { list: L }>;

const positionSchema = z.discriminatedUnion('list', [
  z.strictObject({ list: z.literal('calls'), market: z.string().nullable(), after: z.string().min(1) }),
  z.strictObject({ list: z.literal('user-calls'), handle: z.string().min(1), status: z.enum(USER_CALL_FILTERS), after: z.string().min(1) }),
  z.strictObject({ list: z.literal('combos'), status: z.enum(CALL_STATUSES), after: z.string().min(1) }),
  z.strictObject({
    list: z.literal('leaderboard'),
    sort: z.enum(LEADERBOARD_SORTS),
    version: z.number().int().min(0),
    after: z.number().int().min(1),
  }),
  z.strictObject({ list: z.literal('markets-open'), filter: z.string(), version: z.number().int().min(1), after: z.number().int().min(0) }),
  z.strictObject({ list: z.literal('markets-closed'), filter: z.string(), after: z.string().min(1), id: z.string().min(1) }),
  z.strictObject({ list: z.literal('trades'), filter: z.string(), after: z.string().min(1) }),
  z.strictObject({
    list: z.literal('board'),
    sort: z.enum(LEADERBOARD_SORTS),
    window: z.enum(LEADERBOARD_WINDOWS),
    field: z.string().nullable(),
    asOf: z.number().int().min(0),
    after: z.number().int().min(1),
  }),
  z.strictObject({ list: z.literal('exports'), filter: z.string(), day: z.string().min(1), dataset: z.string().min(1), format: z.string().min(1) }),
]);

const MAC_BYTES = 16;
const TAMPERED = 'cursor is not valid: it was altered or not made by this API; pass next_cursor exactly as a page gave it';

export interface Cursors {
  make(position: ListPosition): string;
  /** The position `cursor` names, which must be of `expected`; otherwise a 400 ApiError saying why. */
  read<I extends ListIdentity>(cursor: string, expected: I): PositionOf<I['list']>;
}

export function createCursors(secret: string): Cursors {
  const mac = (payload: string) => createHmac('sha256', secret).update(`pm-cursor-1.${payload}`).digest().subarray(0, MAC_BYTES);
  return {
    make(position) {
      const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    read<I extends ListIdentity>(cursor: string, expected: I): PositionOf<I['list']> {
      const [payload, signature, ...rest] = cursor.split('.');
      if (!payload || !signature || rest.length > 0) throw new ApiError('bad_request', TAMPERED);
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(payload))) throw new ApiError('bad_request', TAMPERED);
      let position: ListPosition;
      try {
        position = positionSchema.parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
      } catch {
        // Signed by us but not a position this version understands (a cursor of an older format).
        throw new ApiError('bad_request', TAMPERED);
      }
      if (!sameList(position, expected)) {
        throw new ApiError('bad_request', `cursor belongs to another list (${describeList(position)}); use it with the list and parameters it came from`);
      }
      return position as PositionOf<I['list']>;
    },
  };
}

function sameList(position: ListPosition, expected: ListIdentity): boolean {
  if (position.list !== expected.list) return false;
  for (const [key, value] of Object.entries(expected)) {
    if ((position as unknown as Record<string, unknown>)[key] !== value) return false;
  }
  return true;
}

/** The list a position belongs to, as a person would request it. */
function describeList(position: ListPosition): string {
  switch (position.list) {
    case 'calls':
      return position.market === null ? '/api/v1/calls' : `/api/v1/calls?market=${position.market}`;
    case 'user-calls':
      return `/api/v1/users/${position.handle}/calls${position.status === 'all' ? '' : `?status=${position.status}`}`;
    case 'combos':
      return `/api/v1/combos?status=${position.status}`;
    case 'leaderboard':
      return `/api/v1/leaderboard?sort=${position.sort}`;
    case 'markets-open':
    case 'markets-closed':
      return `/api/v1/markets?status=${position.list === 'markets-open' ? 'open' : 'closed'}${position.filter === '' ? '' : `&${position.filter}`}`;
    case 'trades':
      return `/api/v1/markets/${position.filter}`;
    case 'board': {
      const field = position.field === null ? '' : position.field.startsWith('l:') ? `&league=${position.field.slice(2)}` : `&category=${position.field.slice(2)}`;
      return `/api/v1/leaderboard?sort=${position.sort}&window=${position.window}${field}`;
    }
    case 'exports':
      return `/api/v1/exports${position.filter === '' ? '' : `?${position.filter}`}`;
  }
}
