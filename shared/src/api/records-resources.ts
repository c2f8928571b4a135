import { z } from 'zod';
import { count, ok } from './fields.js';
import { callStatusSchema } from './resources.js';

/**
 * The people-side resources of docs/api.md (Call, Call subset, User record, Leaderboard row, Combo, Leg),
 * the response bodies of endpoints 5–10, and the record snapshots the worker writes for them.
 * One definition each: the API validates snapshots and responses with these, the worker's builder
 * is typed by them and OpenAPI is generated from them.
 */

const timestamp = z.string().meta({ description: 'ISO 8601 UTC timestamp', format: 'date-time' });
const chanceAtCall = z.number().gt(0).lt(1).meta({ description: 'Chance when the pick was made; never changes' });
const money = z.number().meta({ description: 'US dollars on a notional stake of 10 per call, 2 decimals' });
const avatar = z.string().nullable().meta({ description: 'Avatar image URL, or null when the person has none' });
/** Who a person is, as every resource naming one shows them. */
const person = { handle: z.string(), display_name: z.string(), avatar };

export const LEADERBOARD_SORTS = ['profit', 'right', 'xp', 'week', 'clv', 'brier'] as const;
export const leaderboardSortSchema = z.enum(LEADERBOARD_SORTS);
export type LeaderboardSort = z.infer<typeof leaderboardSortSchema>;

/** Board windows: calls settled in the last day, 7 days, 30 days, or ever (docs/skill.md). */
export const LEADERBOARD_WINDOWS = ['day', 'week', 'month', 'all'] as const;
export const leaderboardWindowSchema = z.enum(LEADERBOARD_WINDOWS);
export type LeaderboardWindow = z.infer<typeof leaderboardWindowSchema>;

/** Filters of a person's calls: every status, or `all`. */
export const USER_CALL_FILTERS = ['all', 'open', 'won', 'lost', 'void'] as const;
export type UserCallFilter = (typeof USER_CALL_FILTERS)[number];

/** Most calls a call list snapshot holds: the maximum `limit` of /calls and /users/{handle}/calls. */
export const CALL_LIST_SIZE = 100;
/** Most rows a leaderboard snapshot holds: the maximum `limit` of /leaderboard. */
export const LEADERBOARD_SIZE = 100;
/** Most combos a combo list snapshot holds: the maximum `limit` of /combos. */
export const COMBO_LIST_SIZE = 50;

export const copiedFromSchema = z
  .object({
    id: z.string().meta({ description: 'Id of the copied call' }),
    handle: z.string().meta({ description: 'Handle of the person whose call was copied' }),
  })
  .meta({ id: 'CopiedFrom', description: 'The call this one copies' });

export const callSchema = z
  .object({
    id: z.string(),
    user: z.object({ handle: z.string(), avatar }).meta({ id: 'CallUser' }),
    market_id: z.string(),
    event: z.string().meta({ description: 'Event slug' }),
    question: z.string(),
    outcome: z.string().meta({ description: 'Outcome name' }),
    outcome_index: count.meta({ description: 'Zero-based index of the outcome' }),
    chance_at_call: chanceAtCall,
    thesis: z.string().meta({ description: "The caller's written reasoning" }),
    copied_from: copiedFromSchema.nullable(),
    is_fade: z.boolean().meta({ description: 'True when the call fades (bets against) another' }),
    status: callStatusSchema,
    profit_on_10: money.nullable().meta({ description: 'Null while open; won 10 ÷ chance − 10, lost −10, void 0' }),
    made_at: timestamp,
    settled_at: timestamp.nullable(),
    url: z.string(),
  })
  .meta({ id: 'Call', description: 'A public pick by a person on one outcome of a market' });
export type Call = z.infer<typeof callSchema>;

export const thesisUpdateSchema = z.object({ body: z.string(), at: timestamp }).meta({ id: 'ThesisUpdate' });

export const callSubsetSchema = z
  .object({
    id: z.string(),
    user: z.object({ handle: z.string() }).meta({ id: 'CallSubsetUser' }),
    question: z.string(),
    outcome: z.string(),
    chance_at_call: chanceAtCall,
    status: callStatusSchema,
    profit_on_10: money.nullable().meta({ description: 'Null while open; won 10 ÷ chance − 10, lost −10, void 0' }),
    thesis: z.string(),
    thesis_updates: z.array(thesisUpdateSchema).meta({ description: 'Oldest first' }),
    url: z.string(),
  })
  .meta({ id: 'CallDetail', description: 'The single-call response: a subset of Call with its thesis updates' });
export type CallSubset = z.infer<typeof callSubsetSchema>;

/** Skill figures (docs/skill.md). */
const brier = z
  .number()
  .min(0)
  .max(1)
  .nullable()
  .meta({ description: 'Brier score: mean of (chance_at_call − outcome)² over settled won and lost calls, 4 decimals; lower is better (always calling 50 % scores 0.25); null with none' });
const clv = z
  .number()
  .min(-1)
  .max(1)
  .nullable()
  .meta({ description: "Closing-line value: mean of the market's closing chance of the called outcome minus chance_at_call, over settled won and lost calls whose market has a closing chance, in chance units (0.05 = 5 points), 4 decimals; positive means the market moved toward the picks; null with none" });

export const calibrationBucketSchema = z
  .object({
    from: z.number().min(0).max(1).meta({ description: 'Lower bound of chance_at_call (included)' }),
    to: z.number().min(0).max(1).meta({ description: 'Upper bound (excluded; the last bucket includes 1)' }),
    calls: count.meta({ description: 'Settled won and lost calls in the bucket' }),
    predicted: z.number().min(0).max(1).nullable().meta({ description: 'Mean chance_at_call of those calls, 4 decimals; null when empty' }),
    won_pct: z.number().min(0).max(100).nullable().meta({ description: 'Share of those calls that won, percent with 1 decimal; null when empty' }),
  })
  .meta({ id: 'CalibrationBucket' });

const rank = z.number().int().min(1).nullable();
export const userRanksSchema = z
  .object({
    profit: rank,
    right: rank,
    xp: rank,
    week: rank,
    clv: rank,
    brier: rank,
  })
  .meta({
    id: 'UserRanks',
    description: "The person's rank on each all-time board (the category's boards with `category`); null where they are not on it (too few settled calls, or none this week)",
  });

/** The skill part of a record. */
export const userSkillSchema = z.object({
  brier,
  calibration: z.array(calibrationBucketSchema).length(10).meta({ description: 'Ten buckets of chance_at_call: [0, 0.1), [0.1, 0.2) … [0.9, 1]' }),
  clv,
  ranks: userRanksSchema,
});
export type UserSkill = z.infer<typeof userSkillSchema>;

/** A record as Postgres writes it (the person page's first part). */
export const userRecordBaseSchema = z
  .object({
    ...person,
    calls: count.meta({ description: 'Total calls' }),
    settled: count.meta({ description: 'Settled calls: won + lost + void' }),
    won: count,
    right_pct: count.max(100).meta({ description: 'round(100 × won ÷ (won + lost)); 0 with no such calls. Void calls do not count.' }),
    profit_on_10: money.meta({ description: 'Total profit across settled calls, each scored on 10' }),
    profit_7d: money.meta({ description: 'Profit of calls settled in the last 7 days' }),
    xp: count,
    streak: count.meta({ description: 'Consecutive won calls counting back from the most recently settled non-void call' }),
    followers: count,
    following: count,
    copies: count.meta({ description: 'How many times others copied their calls' }),
    bio: z.string(),
    interests: z.array(z.string()).meta({ description: 'Each a category, or a category and league joined with ": " (e.g. "Football: EPL")' }),
    joined_at: timestamp,
    url: z.string(),
  });

export const userRecordSchema = userRecordBaseSchema.extend(userSkillSchema.shape).meta({ id: 'UserRecord' });
export type UserRecord = z.infer<typeof userRecordSchema>;

export const leaderboardRowSchema = z
  .object({
    rank: z.number().int().min(1),
    ...person,
    right_pct: count.max(100),
    settled: count,
    won: count,
    profit_on_10: money,
    profit_7d: money,
    xp: count,
    streak: count,
    clv,
    brier,
  })
  .meta({
    id: 'LeaderboardRow',
    description:
      'A person on a board. On a board of one window or field, settled, won, right_pct, profit_on_10, xp, clv and brier count only the calls settled in that window and field (and XP no combos); profit_7d and streak are always the whole record.',
  });
export type LeaderboardRow = z.infer<typeof leaderboardRowSchema>;

export const legSchema = z
  .object({
    market_id: z.string(),
    event: z.string().meta({ description: "Slug of the leg's event (GET /api/v1/markets/{event}; or /api/v1/markets/by-id/{market_id})" }),
    question: z.string(),
    outcome: z.string(),
    outcome_index: count,
    chance_at_call: chanceAtCall,
    status: callStatusSchema,
  })
  .meta({ id: 'Leg', description: 'One pick of a combo' });
export type Leg = z.infer<typeof legSchema>;

export const comboSchema = z
  .object({
    id: z.string(),
    user: z.object({ handle: z.string() }).meta({ id: 'ComboUser' }),
    chance: z.number().gt(0).lt(1).meta({ description: "The legs' chances multiplied, when the combo was made; never changes" }),
    wins_on_10: money.meta({ description: '10 ÷ chance: what 10 wins if every leg happens' }),
    status: callStatusSchema,
    xp_awarded: count,
    legs: z.array(legSchema).min(2).max(6),
    made_at: timestamp,
    url: z.string(),
  })
  .meta({ id: 'Combo', description: '2 to 6 picks that must all happen' });
export type Combo = z.infer<typeof comboSchema>;

// ---------------------------------------------------------------------------------------------
// Response bodies of endpoints 5–10.

/** docs/design.md "Pagination": the next page's `cursor`, null on the last page. */
const nextCursor = z
  .string()
  .nullable()
  .meta({
    description:
      'Pass as `cursor` (same path and parameters; `limit` may change) for the next page; null on the last page. Opaque and signed: an altered cursor, or one from another list, is a 400.',
  });

export const callListResponseSchema = z
  .object({
    ok,
    count: count.meta({ description: 'Number of calls returned' }),
    platform_split: z
      .array(count)
      .optional()
      .meta({ description: 'Present when `market` is given: people whose latest call on the market is on each outcome, in outcome order; empty when nobody has called it' }),
    calls: z.array(callSchema).meta({ description: 'Newest first' }),
    next_cursor: nextCursor,
  })
  .meta({ id: 'CallListResponse' });

export const callResponseSchema = z.object({ ok, call: callSubsetSchema }).meta({ id: 'CallResponse' });

export const userResponseSchema = z
  .object({
    ok,
    user: userRecordSchema,
    category: z.string().nullable().meta({ description: 'With `category`: the category whose calls brier, calibration, clv and ranks describe; null: all calls' }),
  })
  .meta({ id: 'UserResponse' });

/**
 * A page of a list: `ok`, the filter or key the page was asked for, how many items it holds, the
 * items under `key`, and the cursor of the next page.
 */
function listPage<const A extends z.ZodRawShape, K extends string, T extends z.ZodType>(id: string, asked: A, key: K, item: T, order: string) {
  const items = { [key]: z.array(item).meta({ description: order }) } as { [P in K]: z.ZodArray<T> };
  return z.object({ ok, ...asked, count, ...items, next_cursor: nextCursor }).meta({ id });
}

export const userCallsResponseSchema = listPage('UserCallsResponse', { handle: z.string().meta({ description: 'The handle as the person spells it' }) }, 'calls', callSchema, 'Newest first');

export const leaderboardResponseSchema = listPage(
  'LeaderboardResponse',
  {
    sort: leaderboardSortSchema,
    window: leaderboardWindowSchema.meta({ description: 'The window applied (`week` for sort=week)' }),
    category: z.string().nullable().meta({ description: 'The category applied; null: every category' }),
    league: z.string().nullable().meta({ description: 'The league applied; null: every league' }),
  },
  'rows',
  leaderboardRowSchema,
  'Ordered by rank',
);

export const comboListResponseSchema = listPage('ComboListResponse', { status: callStatusSchema.meta({ description: 'The applied filter' }) }, 'combos', comboSchema, 'Newest first');

// ---------------------------------------------------------------------------------------------
// Record snapshots (written by the worker's record snapshot builder, read by the API). Each is a
// Redis hash like every snapshot (shared/src/snapshots.ts); the API slices to `limit` and adds `ok`
// and `count`.

/** `calls:latest`: the newest calls (at most CALL_LIST_SIZE), newest first. */
export const callListSnapshotSchema = z.object({ calls: z.array(callSchema) });
export type CallListSnapshot = z.infer<typeof callListSnapshotSchema>;

/** `calls:market:<marketId>`: that market's newest calls and its platform split. */
export const marketCallsSnapshotSchema = z.object({ platform_split: z.array(count), calls: z.array(callSchema) });
export type MarketCallsSnapshot = z.infer<typeof marketCallsSnapshotSchema>;

/** The body of GET /calls/{id} as the API reads it from Postgres (record-json.ts callPageBody): one call, the subset the single-call endpoint shows. */
export const callSnapshotSchema = z.object({ call: callSubsetSchema });
export type CallSnapshot = z.infer<typeof callSnapshotSchema>;

/** The body of GET /users/{handle} as the API reads it from Postgres (record-json.ts userRecordObject): one person's record. */
export const userSnapshotSchema = z.object({ user: userRecordBaseSchema });
export type UserSnapshot = z.infer<typeof userSnapshotSchema>;


/**
 * `leaderboard:<profit|right|xp|week>`: the top rows (at most LEADERBOARD_SIZE), by rank, and the
 * ranking version they are (migration 0005), which the API's next_cursor pins. `version` is absent
 * only from a snapshot written before ranking versions existed, until the worker's start-up build.
 */
export const leaderboardSnapshotSchema = z.object({ version: count.optional(), rows: z.array(leaderboardRowSchema) });
export type LeaderboardSnapshot = z.infer<typeof leaderboardSnapshotSchema>;

/** `combos:<open|won|lost|void>`: the newest combos of that status (at most COMBO_LIST_SIZE). */
export const comboListSnapshotSchema = z.object({ combos: z.array(comboSchema) });
export type ComboListSnapshot = z.infer<typeof comboListSnapshotSchema>;
