import type { PrefixedRedis } from '../redis/keys.js';
import { sql, type Db } from '../db/connection.js';
import { caseInsensitive, tables } from '../db/tables.js';
import type { Events, Markets, Outcomes, Users } from '../db/__generated__/index.js';
import { winsOn10 } from '../domain/money.js';
import type { Logger } from '../logger.js';
import { isConnectionLoss, RecordRefused, RecordsUnavailable } from './errors.js';
import { isKeyRace, keepWrite, priorWrite } from './write-keys.js';
import { newPublicId } from './ids.js';
import { readLiveChance } from './live-chance.js';
import { writeOutbox } from '../outbox.js';
import { callMessage } from '../stream/messages.js';
import { appendStreamMessage } from '../stream/writer.js';
import type { RecordsDirtyMember } from './trigger.js';
import {
  createUserSchema,
  parseHandle,
  parseInput,
  parseInterest,
  recordCallSchema,
  recordComboSchema,
  thesisUpdateSchema,
} from './validate.js';

/**
 * The service's own write path (docs/design.md): people, follows, calls, thesis updates and combos,
 * always at the LIVE chance read from Redis. Every check runs inside the write's transaction and
 * before its first insert, so a refusal (RecordRefused) leaves nothing written. The market row is
 * read `for share`: the ingestor's resolution (an update of that row) and the settlement (which
 * locks it `for update`) wait for a call being recorded, so the call is either refused as closed
 * or settled with the rest — never left open on a settled market.
 * The follow-up work (projections, record snapshots) is announced by an outbox row written in the
 * write's own transaction (docs/design.md "Storage and the change channel"): the record and the fact that
 * work is owed on it commit together, and the worker's relay turns the row into jobs. A Postgres
 * failure mid-write (a restart, a lost connection) rolls the whole transaction back and reaches the
 * caller as a RecordsUnavailable error; it is not retried here, since a commit whose answer was
 * lost may have written, and a blind retry would record a second call. A call, combo or thesis update
 * sent with an idempotency key (`key`, write-keys.ts) can be sent again by its client with the same
 * key: if the first committed, the retry answers it (`repeated: true`) and writes nothing.
 */

export interface CreateUserInput {
  handle: string;
  displayName: string;
  avatar?: string | null;
  bio?: string;
  interests?: string[];
  joinedAt?: Date;
}

export interface RecordCallInput {
  handle: string;
  marketId: string;
  outcomeIndex: number;
  thesis: string;
  copiedFrom?: string | null;
  isFade?: boolean;
  /** Only for the demo crowd, to backdate a call; the chance is always the live one. */
  madeAt?: Date;
  /** Idempotency key (write-keys.ts): the same call sent again with it answers the first. */
  key?: string;
}

export interface RecordComboInput {
  handle: string;
  legs: Array<{ marketId: string; outcomeIndex: number }>;
  madeAt?: Date;
  /** Idempotency key (write-keys.ts): the same combo sent again with it answers the first. */
  key?: string;
}

export interface Records {
  createUser(input: CreateUserInput): Promise<{ id: number; handle: string }>;
  follow(followerHandle: string, followeeHandle: string): Promise<void>;
  unfollow(followerHandle: string, followeeHandle: string): Promise<void>;
  /** `repeated`: a retry with the key of a call already recorded, answered with that call. */
  recordCall(input: RecordCallInput): Promise<{ id: string; chanceAtCall: number; madeAt: Date; repeated: boolean }>;
  addThesisUpdate(callId: string, body: string, opts?: { key?: string }): Promise<{ at: Date; repeated: boolean }>;
  recordCombo(input: RecordComboInput): Promise<{ id: string; chance: number; winsOn10: number; repeated: boolean }>;
  /** Nothing to close any more (kept so callers need not change); closes neither db nor redis. */
  close(): Promise<void>;
}

/** `redis`: the stack's Redis, which live chances are read from. */
export interface RecordsDeps extends PrefixedRedis {
  db: Db;
  /** Unix ms; decides the age of a price and the default time of a record. */
  clock?: () => number;
  logger?: Logger;
}

/** A combo has 2 to 6 legs (docs/api.md "Limits"). */
export const MIN_COMBO_LEGS = 2;
export const MAX_COMBO_LEGS = 6;

type Tx = Parameters<Parameters<Db['tx']>[0]>[0];

/** A market (locked) with the chosen outcome, if it has one: the generated column types, the outcome's nullable (left join). */
type MarketOutcome = Pick<Markets, 'question' | 'closed'> & { market_id: Markets['id']; resolved: boolean; event_slug: Events['slug'] } & {
  [K in 'outcome_index' | 'name' | 'token_id']: Outcomes[K] | null;
};

async function findUser(tx: Tx, rawHandle: string): Promise<{ id: number; handle: string }> {
  const handle = parseHandle(rawHandle);
  // The user with that handle, compared case-insensitively (lower(handle) = lower($1): users_handle_ci).
  const user = await tables.users(tx).find({ handle: caseInsensitive(handle) }).select('id', 'handle').one();
  if (!user) throw new RecordRefused('unknown_user', `no user with handle @${handle}`);
  return user;
}

/**
 * The market and the chosen outcome, refused when unknown or closed. The market row is locked
 * `for share` until the write commits (see the module comment).
 */
async function openOutcome(tx: Tx, marketId: string, outcomeIndex: number): Promise<{ question: string; name: string; tokenId: string; eventSlug: string }> {
  // Input: market id, outcome index. Output: the market (locked for share), its event's slug, and that outcome, if any.
  const rows: MarketOutcome[] = await tx.query(sql`
    with m as (
      select id, question, closed, event_id, resolved_at is not null or voided as resolved
      from markets where id = ${marketId}
      for share
    )
    select m.id as market_id, m.question, m.closed, m.resolved, o.outcome_index, o.name, o.token_id,
           (select e.slug from events e where e.id = m.event_id) as event_slug
    from m left join outcomes o on o.market_id = m.id and o.outcome_index = ${outcomeIndex}
  `);
  const row = rows[0];
  if (!row) throw new RecordRefused('unknown_market', `no market with id ${marketId}`);
  if (row.closed || row.resolved) throw new RecordRefused('market_closed', `market ${marketId} (${row.question}) is closed`);
  if (row.name === null || row.token_id === null) {
    throw new RecordRefused('unknown_outcome', `market ${marketId} has no outcome ${outcomeIndex}`);
  }
  return { question: row.question, name: row.name, tokenId: row.token_id, eventSlug: row.event_slug };
}

/**
 * The pool, with a lost connection during a transaction turned into RecordsUnavailable (a clear
 * message instead of the driver's). Refusals and bad input pass through unchanged.
 */
function guardedDb(db: Db): Pick<Db, 'tx'> {
  return {
    tx: (async (fn: Parameters<Db['tx']>[0]) => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await db.tx(fn);
        } catch (err) {
          if (!(err instanceof RecordRefused) && isConnectionLoss(err)) throw new RecordsUnavailable(err);
          // Two first writes with one key at once: the loser rolled back whole; once more, it finds the winner's key and answers it.
          if (isKeyRace(err) && attempt === 0) continue;
          throw err;
        }
      }
    }) as Db['tx'],
  };
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

/** Up to this many fresh ids are tried if one collides (about 59 random bits each: never in practice). */
const ID_ATTEMPTS = 5;

export function createRecords(deps: RecordsDeps): Records {
  const clock = deps.clock ?? (() => Date.now());
  const { redis, prefix } = deps;
  const db = guardedDb(deps.db);

  /** Inside the write's transaction: the outbox row that owes the follow-up work. */
  async function announce(tx: Tx, change: { userIds?: number[]; marketIds?: string[]; dirty: RecordsDirtyMember[] }): Promise<void> {
    await writeOutbox(tx, 'records-changed', { userIds: change.userIds ?? [], marketIds: change.marketIds ?? [], dirty: change.dirty });
  }

  async function insertWithFreshId<T>(insert: (id: string) => Promise<T | undefined>): Promise<T> {
    for (let attempt = 0; attempt < ID_ATTEMPTS; attempt += 1) {
      const done = await insert(newPublicId());
      if (done !== undefined) return done;
    }
    throw new Error(`no free public id after ${ID_ATTEMPTS} attempts`);
  }

  return {
    async createUser(input) {
      const parsed = parseInput(createUserSchema, input, 'createUser');
      const handle = parseHandle(parsed.handle);
      const interests = [...new Set((parsed.interests ?? []).map(parseInterest))];
      const joinedAt = parsed.joinedAt ?? new Date(clock());
      let user: { id: number; handle: string };
      try {
        user = await db.tx(async (tx) => {
          const taken = await tables.users(tx).find({ handle: caseInsensitive(handle) }).select('handle').one();
          if (taken) throw new RecordRefused('handle_taken', `handle @${handle} is taken (by @${taken.handle})`);
          // Input: the new person's fields. Output: their id and handle. Hand-written, not pg-typed: users.id is
          // `generated always as identity`, which the generated insert type wrongly requires (pg-schema-print-types).
          const rows: Array<Pick<Users, 'id' | 'handle'>> = await tx.query(sql`
            insert into users (handle, display_name, avatar, bio, interests, joined_at)
            values (${handle}, ${parsed.displayName}, ${parsed.avatar ?? null}, ${parsed.bio ?? ''}, ${interests}::text[], ${joinedAt})
            returning id, handle
          `);
          const created = rows[0]!;
          await announce(tx, { userIds: [created.id], dirty: [] });
          return created;
        });
      } catch (err) {
        // Two creations of one handle at once: the unique index refuses the second insert.
        if (isUniqueViolation(err)) throw new RecordRefused('handle_taken', `handle @${handle} is taken`);
        throw err;
      }
      return user;
    },

    async follow(followerHandle, followeeHandle) {
      await db.tx(async (tx) => {
        const a = await findUser(tx, followerHandle);
        const b = await findUser(tx, followeeHandle);
        if (a.id === b.id) throw new RecordRefused('self_follow', `@${a.handle} cannot follow themselves`);
        // Following twice changes nothing (on conflict do nothing).
        await tables.follows(tx).insertOrIgnore({ follower_id: a.id, followee_id: b.id, created_at: new Date(clock()) });
        await announce(tx, { userIds: [a.id, b.id], dirty: [] });
      });
    },

    async unfollow(followerHandle, followeeHandle) {
      await db.tx(async (tx) => {
        const a = await findUser(tx, followerHandle);
        const b = await findUser(tx, followeeHandle);
        if (a.id === b.id) throw new RecordRefused('self_follow', `@${a.handle} cannot unfollow themselves`);
        // Unfollowing twice changes nothing.
        await tables.follows(tx).delete({ follower_id: a.id, followee_id: b.id });
        await announce(tx, { userIds: [a.id, b.id], dirty: [] });
      });
    },

    async recordCall(input) {
      const parsed = parseInput(recordCallSchema, input, 'recordCall');
      // What the key stands for: the call as asked (the chance is read, not asked).
      const request = {
        marketId: parsed.marketId,
        outcomeIndex: parsed.outcomeIndex,
        thesis: parsed.thesis,
        copiedFrom: parsed.copiedFrom ?? null,
        isFade: parsed.isFade ?? false,
        madeAt: parsed.madeAt?.toISOString() ?? null,
      };
      type Kept = { id: string; chanceAtCall: number; madeAt: string };
      const made = await db.tx(async (tx) => {
        const user = await findUser(tx, parsed.handle);
        // A retry of a call already recorded is answered before any check: its market may have closed since.
        const prior = parsed.key === undefined ? undefined : await priorWrite<Kept>(tx, user.id, parsed.key, 'call', request);
        if (prior) return { prior, fresh: undefined };
        const outcome = await openOutcome(tx, parsed.marketId, parsed.outcomeIndex);
        let copiedOwner: number | null = null;
        if (parsed.copiedFrom) {
          const copied = await tables.calls(tx).find({ id: parsed.copiedFrom }).select('user_id').one();
          if (!copied) throw new RecordRefused('unknown_call', `no call with id ${parsed.copiedFrom} to copy`);
          copiedOwner = copied.user_id;
        }
        // Read last, right before the insert: the chance the API shows at this instant.
        const chance = await readLiveChance(redis, prefix, { tokenId: outcome.tokenId, label: `${outcome.name} on "${outcome.question}"` }, clock());
        const madeAt = parsed.madeAt ?? new Date(clock());
        const id = await insertWithFreshId(async (candidate) => {
          // The chance is the decimal text from Redis (numeric, never a float). None inserted on an id collision.
          const [row] = await tables.calls(tx).insertOrIgnore({
            id: candidate,
            user_id: user.id,
            market_id: parsed.marketId,
            outcome_index: parsed.outcomeIndex,
            chance_at_call: chance.text,
            thesis: parsed.thesis,
            copied_from: parsed.copiedFrom ?? null,
            is_fade: parsed.isFade ?? false,
            made_at: madeAt,
          });
          return row?.id;
        });
        const userIds = copiedOwner !== null && copiedOwner !== user.id ? [user.id, copiedOwner] : [user.id];
        await announce(tx, { userIds, marketIds: [parsed.marketId], dirty: [`call:${id}`, `market:${parsed.marketId}`] });
        if (parsed.key !== undefined) await keepWrite(tx, user.id, parsed.key, 'call', request, { id, chanceAtCall: chance.value, madeAt: madeAt.toISOString() } satisfies Kept);
        return { prior: undefined, fresh: { id, chanceAtCall: chance.value, madeAt, handle: user.handle, outcome } };
      });
      if (made.prior) return { id: made.prior.id, chanceAtCall: made.prior.chanceAtCall, madeAt: new Date(made.prior.madeAt), repeated: true };
      const call = made.fresh;
      await appendStreamMessage(redis, prefix, callMessage({ ...parsed, ...call, outcome: call.outcome.name, eventSlug: call.outcome.eventSlug, chance: call.chanceAtCall }), deps.logger);
      return { id: call.id, chanceAtCall: call.chanceAtCall, madeAt: call.madeAt, repeated: false };
    },

    async addThesisUpdate(callId, body, opts = {}) {
      const parsed = parseInput(thesisUpdateSchema, { callId, body, ...opts }, 'addThesisUpdate');
      const request = { callId: parsed.callId, body: parsed.body };
      const at = new Date(clock());
      const prior = await db.tx(async (tx) => {
        const call = await tables.calls(tx).find({ id: parsed.callId }).select('user_id').one();
        if (!call) throw new RecordRefused('unknown_call', `no call with id ${parsed.callId}`);
        // The key is the call's owner's.
        const kept = parsed.key === undefined ? undefined : await priorWrite<{ at: string }>(tx, call.user_id, parsed.key, 'thesis_update', request);
        if (kept) return kept;
        // Input: call id, body, time. Output: none. Hand-written: thesis_updates.id is an identity column,
        // which the generated insert type wrongly requires.
        await tx.query(sql`insert into thesis_updates (call_id, body, at) values (${parsed.callId}, ${parsed.body}, ${at})`);
        await announce(tx, { dirty: [`call:${parsed.callId}`] });
        if (parsed.key !== undefined) await keepWrite(tx, call.user_id, parsed.key, 'thesis_update', request, { at: at.toISOString() });
        return undefined;
      });
      return prior ? { at: new Date(prior.at), repeated: true } : { at, repeated: false };
    },

    async recordCombo(input) {
      const parsed = parseInput(recordComboSchema, input, 'recordCombo');
      if (parsed.legs.length < MIN_COMBO_LEGS || parsed.legs.length > MAX_COMBO_LEGS) {
        throw new RecordRefused('bad_leg_count', `a combo has ${MIN_COMBO_LEGS} to ${MAX_COMBO_LEGS} legs, got ${parsed.legs.length}`);
      }
      const markets = new Set<string>();
      for (const leg of parsed.legs) {
        if (markets.has(leg.marketId)) throw new RecordRefused('duplicate_leg_market', `two legs on market ${leg.marketId}; each leg needs its own market`);
        markets.add(leg.marketId);
      }
      const request = { legs: parsed.legs.map((l) => ({ marketId: l.marketId, outcomeIndex: l.outcomeIndex })), madeAt: parsed.madeAt?.toISOString() ?? null };
      type Kept = { id: string; chance: number; wins: number };
      const made = await db.tx(async (tx) => {
        const user = await findUser(tx, parsed.handle);
        const prior = parsed.key === undefined ? undefined : await priorWrite<Kept>(tx, user.id, parsed.key, 'combo', request);
        if (prior) return { ...prior, repeated: true };
        const outcomes = [];
        for (const leg of parsed.legs) outcomes.push(await openOutcome(tx, leg.marketId, leg.outcomeIndex));
        const now = clock();
        const chances: Array<Awaited<ReturnType<typeof readLiveChance>>> = [];
        for (const outcome of outcomes) {
          chances.push(await readLiveChance(redis, prefix, { tokenId: outcome.tokenId, label: `${outcome.name} on "${outcome.question}"` }, now));
        }
        // Six legs of 0.05 multiply to 1.6e-8: round to significant digits, not decimal places,
        // so a long shot keeps a non-zero chance (the column requires one).
        const chance = Number(chances.reduce((p, c) => p * c.value, 1).toPrecision(6));
        const wins = winsOn10(chance);
        const madeAt = parsed.madeAt ?? new Date(now);
        const id = await insertWithFreshId(async (candidate) => {
          // None inserted on an id collision.
          const [row] = await tables.combos(tx).insertOrIgnore({ id: candidate, user_id: user.id, chance: String(chance), wins_on_10: String(wins), made_at: madeAt });
          return row?.id;
        });
        // One statement for every leg, each at its live chance text.
        await tables.combo_legs(tx).bulkInsert({
          columnsToInsert: ['combo_id', 'leg_index', 'market_id', 'outcome_index', 'chance_at_call'],
          records: parsed.legs.map((leg, i) => ({ combo_id: id, leg_index: i, market_id: leg.marketId, outcome_index: leg.outcomeIndex, chance_at_call: chances[i]!.text })),
        });
        await announce(tx, { dirty: ['combos'] });
        if (parsed.key !== undefined) await keepWrite(tx, user.id, parsed.key, 'combo', request, { id, chance, wins } satisfies Kept);
        return { id, chance, wins, repeated: false };
      });
      return { id: made.id, chance: made.chance, winsOn10: made.wins, repeated: made.repeated };
    },

    async close() {},
  };
}
