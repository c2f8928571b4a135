import { comboStatus, comboXp, type SettlementStatus } from '@pm/shared/domain';
import { not, sql, tables, type Db } from '@pm/shared/db';
import { writeOutbox } from '@pm/shared/outbox';
import { finishSettlement, lockForSettlement, settleCallsWithRecords, settleFieldRecords, settleWindowRecords } from '../projections/run.js';

/**
 * SettleMarket: settle a resolved market's open calls, its open combo legs, and every combo whose
 * status now follows from its legs (docs/design.md "Money", "XP", "Combo status"), in PARTS: each
 * part is one transaction that settles the open calls of a range of people (ordered by person id,
 * about `partCalls` calls) and the open legs of the combos those people own, and moves those people's
 * records with them. A part holds the projections lock for a fraction of a second, so another
 * market's settlement or a projection batch runs between two parts of a market of a million calls.
 * A market whose open calls fit in one part settles in one transaction, as before.
 *
 * The truth is the database, not the job: the market's row in `market_resolutions` (else the
 * resolution columns of `markets`). Exactly-once comes from the guards, not from the queue:
 * - each part locks the market row `for update`, so two runs of one market (a retry, the
 *   reconciler's re-enqueue) settle their parts one after the other, and each part reads which calls
 *   are still open after that lock: a part a killed run committed is never applied again, one it had
 *   not committed is redone whole;
 * - every transition is `where status = 'open'`, so a second run finds nothing to do;
 * - a person's calls on the market, and the legs of their combos, are settled by one part, so the
 *   settlement's delta on their record (projections/user-records.ts) sees them together, and a
 *   combo is decided by the part that settles its last leg;
 * - touched combos are locked `for update` in id order before their legs are read, so two markets
 *   settling legs of one combo at once cannot both miss the other's leg (nor deadlock).
 * What the parts did so far is kept on the market row (`settle_progress`, committed with each part):
 * the market object shows it as `settling`, and the last part reads the settlement's totals from it.
 * The last part (no open call or leg left) re-ranks the boards, sets `markets.settled_at` (the
 * reconciler's "no longer pending") and clears the progress. Every part that changed anything writes
 * the `market-settled` outbox row that owes the record snapshots: nothing is enqueued after a commit,
 * and nothing about the records is owed by a job that could die after it.
 */

export interface Resolution {
  winningOutcomeIndex: number | null;
  voided: boolean;
}

type CallCounts = { won: number; lost: number; void: number };

export interface SettledMarket {
  marketId: string;
  /** Slug of the market's event (for the event stream's settlement message). */
  eventSlug: string;
  resolution: Resolution;
  /** The market's closing chances by outcome index, as recorded when it closed (null: none recorded). */
  closingChances: Array<number | null> | null;
  /** Calls settled by this run, by status. */
  calls: CallCounts;
  legs: number;
  /** Combos whose status this run decided. */
  combos: Array<{ id: string; status: SettlementStatus; xp: number }>;
  /** True when this run's last part was the market's first settlement (`settled_at` was unset). */
  first: boolean;
  /**
   * The whole settlement's figures, every part's (also those of a run that died before this one),
   * when this run's last part finished the market and changed something or finished it first: the
   * one run that tells the event stream. Null otherwise.
   */
  totals: { calls: CallCounts; legs: number; combos: number } | null;
  /** Users whose records this run moved (owners of the calls it settled and of the combos it decided). */
  userIds: number[];
  /** The parts this run committed. */
  parts: number;
  /** Milliseconds per step, summed over the parts (the job logs them). */
  ms: Record<string, number>;
  /** People whose record the settlement's delta could not serve, recomputed whole from their calls. */
  recomputed: number;
}

export class UnknownMarket extends Error {
  override name = 'UnknownMarket';
}
export class UnresolvedMarket extends Error {
  override name = 'UnresolvedMarket';
}

type Tx = Parameters<Parameters<Db['tx']>[0]>[0];

/** What a settlement in parts has done so far (markets.settle_progress). */
interface Progress {
  /** Open calls when the settlement began. */
  calls: number;
  won: number;
  lost: number;
  void: number;
  legs: number;
  combos: number;
}

type Locked = Resolution & { settled: boolean; eventId: string; eventSlug: string; closingChances: Array<number | null> | null; progress: Progress | null };

async function lockResolution(tx: Tx, marketId: string): Promise<Locked> {
  // Input: market id. Output: the market's resolution (the log row first, else the market's own
  // columns), whether it was settled before, its event, its settlement's progress so far, with the
  // market row locked for update until commit.
  const rows: Array<{
    logged: boolean;
    log_winner: number | null;
    log_voided: boolean | null;
    resolved: boolean;
    winner: number | null;
    voided: boolean;
    settled: boolean;
    event_id: string;
    event_slug: string;
    closing_chances: Array<number | null> | null;
    settle_progress: Progress | null;
  }> = await tx.query(sql`
      select r.market_id is not null as logged, r.winning_outcome_index as log_winner, r.voided as log_voided,
             m.resolved_at is not null as resolved, m.resolved_outcome_index as winner, m.voided,
             m.settled_at is not null as settled, m.event_id, (select e.slug from events e where e.id = m.event_id) as event_slug,
             m.closing_chances::float8[] as closing_chances, m.settle_progress
      from markets m left join market_resolutions r on r.market_id = m.id
      where m.id = ${marketId}
      for update of m
    `);
  const row = rows[0];
  if (!row) throw new UnknownMarket(`no market with id ${marketId}`);
  const resolution: Resolution | null = row.logged
    ? { winningOutcomeIndex: row.log_winner, voided: row.log_voided === true }
    : row.resolved
      ? { winningOutcomeIndex: row.winner, voided: row.voided }
      : null;
  if (resolution === null) throw new UnresolvedMarket(`market ${marketId} has no recorded resolution`);
  if (!resolution.voided && resolution.winningOutcomeIndex === null) {
    throw new UnresolvedMarket(`market ${marketId} is resolved without a winner and not voided`);
  }
  return {
    ...resolution,
    settled: row.settled,
    eventId: row.event_id,
    eventSlug: row.event_slug,
    closingChances: row.closing_chances,
    progress: row.settle_progress,
  };
}

interface Part {
  locked: Locked;
  calls: CallCounts;
  legs: number;
  combos: Array<SettledMarket['combos'][number] & { userId: number }>;
  userIds: number[];
  /** The last person this part covered; null when it covered everyone after `after` (the last range). */
  through: number | null;
  /** True when no open call or leg of the market is left after this part. */
  finished: boolean;
  /** The settlement's totals, when this part finished the market. */
  totals: Progress | null;
  ms: Record<string, number>;
  recomputed: number;
}

interface PartOptions {
  /** Settle the people after this id (null: from the first). */
  after: number | null;
  /** About this many open calls per part (a part ends at the last call of a person). */
  partCalls: number;
  /** Re-rank the boards in this part even when it does not finish the market. */
  rank: boolean;
  /** Have the market object's `settling` rebuilt after this part (an events-changed outbox row). */
  announce: boolean;
  /** People recomputed whole are computed as of at least this time (see `recordsAsOf`). */
  asOf: Date;
}

async function settlePart(db: Db, marketId: string, now: Date, o: PartOptions): Promise<Part> {
  return db.tx(async (tx) => {
    const ms: Record<string, number> = {};
    let t0 = performance.now();
    const lap = (step: string) => {
      const t = performance.now();
      ms[step] = Math.round(t - t0);
      t0 = t;
    };
    // Records are moved in this transaction (below): wait here for a projection batch or rebuild
    // running now, so neither computes a record from calls as they were before this commit. First,
    // before any row lock: a projection holding this lock writes rows whose foreign keys take a key
    // share of this market's row, which the row lock below (FOR UPDATE) blocks; taken the other way
    // round, the two transactions waited on each other (a deadlock Postgres broke by failing one).
    await lockForSettlement(tx);
    lap('lock');
    const locked = await lockResolution(tx, marketId);
    const winner = locked.voided ? null : locked.winningOutcomeIndex;

    // Input: market id, the first person of the part, its size. Output: the person of the part's
    // last call (none: the part takes everyone left). Read after the market lock, so it sees every
    // part committed before, by any run (index calls_market_open_user).
    const [bound]: Array<{ user_id: number }> = await tx.query(sql`
      select user_id from calls
      where market_id = ${marketId} and status = 'open' and (${o.after}::bigint is null or user_id > ${o.after}::bigint)
      order by user_id offset ${o.partCalls - 1} limit 1
    `);
    let through = bound === undefined ? null : Number(bound.user_id);
    if (through !== null) {
      // Input: market id, the part's last person. Output: whether anyone after them has an open
      // call; if not, this part is the last range (it takes the remaining legs too).
      const [more]: Array<{ more: boolean }> = await tx.query(sql`
        select exists (select 1 from calls where market_id = ${marketId} and status = 'open' and user_id > ${through}::bigint) as more`);
      if (more?.more !== true) through = null;
    }
    const people = (column: ReturnType<typeof sql>) =>
      sql`(${o.after}::bigint is null or ${column} > ${o.after}::bigint) and (${through}::bigint is null or ${column} <= ${through}::bigint)`;
    lap('bound');

    // Input: market id, winner, settle time, the part's people. Output: the combos of those people
    // whose legs on this market settled now.
    const legs: Array<{ combo_id: string }> = await tx.query(sql`
      update combo_legs l
      set status = case when ${winner}::integer is null then 'void'
                        when l.outcome_index = ${winner}::integer then 'won' else 'lost' end,
          settled_at = ${now}
      from combos k
      where l.market_id = ${marketId} and l.status = 'open' and k.id = l.combo_id and ${people(sql`k.user_id`)}
      returning l.combo_id
    `);
    lap('legs');

    const comboIds = [...new Set(legs.map((l) => l.combo_id))].sort();
    const decided: Part['combos'] = [];
    if (comboIds.length > 0) {
      // Input: combo ids. Output: none; locks the open ones, in id order (no deadlock between markets).
      await tx.query(sql`select id from combos where id = any(${comboIds}::text[]) and status = 'open' order by id for update`);
      lap('combos_lock');
      // Input: combo ids. Output: every leg of those still-open combos, with the combo's owner.
      const allLegs: Array<{ combo_id: string; user_id: number; status: SettlementStatus; chance_at_call: string }> = await tx.query(sql`
        select l.combo_id, c.user_id, l.status, l.chance_at_call
        from combo_legs l join combos c on c.id = l.combo_id
        where c.id = any(${comboIds}::text[]) and c.status = 'open'
        order by l.combo_id, l.leg_index
      `);
      lap('combos_read');
      const byCombo = new Map<string, { userId: number; legs: Array<{ status: SettlementStatus; chance: number }> }>();
      for (const leg of allLegs) {
        const entry = byCombo.get(leg.combo_id) ?? { userId: leg.user_id, legs: [] };
        entry.legs.push({ status: leg.status, chance: Number(leg.chance_at_call) });
        byCombo.set(leg.combo_id, entry);
      }
      for (const [id, combo] of byCombo) {
        const status = comboStatus(combo.legs.map((l) => l.status));
        if (status === 'open') continue;
        decided.push({ id, status, xp: comboXp(combo.legs), userId: combo.userId });
      }
      if (decided.length > 0) {
        // Input: per decided combo its id, status and XP; settle time. Output: none. Guarded: a combo
        // already decided keeps its first result.
        await tx.query(sql`
          update combos c
          set status = d.status, xp_awarded = d.xp, settled_at = ${now}
          from unnest(${decided.map((d) => d.id)}::text[], ${decided.map((d) => d.status)}::text[], ${decided.map((d) => d.xp)}::int[])
               as d(id, status, xp)
          where c.id = d.id and c.status = 'open'
        `);
      }
    }

    lap('combos');

    // Input: market id, winner (null = void), settle time, the part's people. Output: one row per
    // call settled now; their people's user_records (and the won combos' owners') moved by the
    // settlement's delta in the same statement (projections/user-records.ts), and the people it
    // could not serve exactly. Profit and XP per docs/design.md, in numeric: won 10/c − 10 (2
    // places), lost −10, void 0; XP of a won call 10 + round(90 × (1 − c)). Postgres rounds numeric
    // halves away from zero, as the domain's roundTo does.
    const { calls, recompute, asOf } = await settleCallsWithRecords(
      tx,
      sql`
        update calls c
        set status = o.status,
            profit_on_10 = case o.status when 'won' then round(10 / c.chance_at_call - 10, 2) when 'lost' then -10 else 0 end,
            xp_awarded = case o.status when 'won' then 10 + round(90 * (1 - c.chance_at_call))::integer else 0 end,
            settled_at = ${now}
        from (
          select c.id,
                 case when ${winner}::integer is null then 'void'
                      when c.outcome_index = ${winner}::integer then 'won' else 'lost' end as status
          from calls c
          where c.market_id = ${marketId} and c.status = 'open' and ${people(sql`c.user_id`)}
        ) o
        where c.id = o.id and c.status = 'open'
        returning c.id, c.user_id, o.status, c.profit_on_10, c.xp_awarded, c.made_at, c.chance_at_call, c.outcome_index, c.market_id
      `,
      decided.filter((d) => d.status === 'won'),
      now,
    );
    lap('calls_and_records');
    // The same calls in their people's records of the market's category and league and in the
    // window records, only with a clock behind the upkeep's (projections/field-records.ts,
    // window-records.ts): otherwise the upkeep adds them, and the boards count them meanwhile.
    if (calls.length > 0) await settleFieldRecords(tx, marketId, now, people(sql`c.user_id`));
    lap('field_records');
    if (calls.length > 0) await settleWindowRecords(tx, marketId, now, people(sql`c.user_id`));
    lap('window_records');

    // Input: market id. Output: whether any call or leg of the market is still open (after this part).
    // Only after a part that took everyone left (a part that ends at a person leaves calls after
    // them): the look walks the open-calls index past every call the parts
    // before settled (dead entries until a vacuum), which made each part's cost grow with the market.
    const [left]: Array<{ open: boolean }> =
      through !== null
        ? [{ open: true }]
        : await tx.query(sql`
            select exists (select 1 from calls where market_id = ${marketId} and status = 'open')
                or exists (select 1 from combo_legs where market_id = ${marketId} and status = 'open') as open
          `);
    const finished = left?.open !== true;
    lap('left');

    const count = (s: 'won' | 'lost' | 'void') => calls.filter((c) => c.status === s).length;
    const partCounts = { won: count('won'), lost: count('lost'), void: count('void') };
    const changed = calls.length > 0 || legs.length > 0;
    // The boards rank user_records: the last part re-ranks them (when the settlement moved a record:
    // a repeated run that moved none leaves them as the run that did committed them), a part between
    // only when the run asks (at most every few seconds).
    const moved = calls.length > 0 || decided.length > 0 || recompute.length > 0;
    const rank = (finished && (moved || locked.progress !== null)) || (o.rank && moved);
    const done = await finishSettlement(tx, { recompute, asOf: asOf > o.asOf ? asOf : o.asOf }, now, rank);
    Object.assign(ms, done.ms);
    t0 = performance.now();

    // Everyone whose record this part moved: owners of the calls it settled and of the combos it decided.
    const userIds = [...new Set([...calls.map((c) => c.user_id), ...decided.map((d) => d.userId)])].sort((x, y) => x - y);
    const before = locked.progress;
    const sofar: Progress = {
      calls: before?.calls ?? 0,
      won: (before?.won ?? 0) + partCounts.won,
      lost: (before?.lost ?? 0) + partCounts.lost,
      void: (before?.void ?? 0) + partCounts.void,
      legs: (before?.legs ?? 0) + legs.length,
      combos: (before?.combos ?? 0) + decided.length,
    };
    let totals: Progress | null = null;
    if (finished) {
      if (!locked.settled || changed || before !== null) {
        // Input: market id, settle time. Output: none; the market is no longer pending settlement,
        // and no longer settling.
        await tx.query(sql`update markets set settled_at = ${now}, settle_progress = null where id = ${marketId}`);
        totals = { ...sofar, calls: sofar.won + sofar.lost + sofar.void };
      }
      // The market object showed `settling`: rebuild it without.
      if (before !== null) await writeOutbox(tx, 'events-changed', { eventIds: [locked.eventId] });
    } else if (changed) {
      if (before === null) {
        // The first part that leaves calls open: count what the settlement began with (index-only,
        // calls_market_open_user), once.
        const [open]: Array<{ n: number }> = await tx.query(sql`select count(*)::integer as n from calls where market_id = ${marketId} and status = 'open'`);
        sofar.calls = (open?.n ?? 0) + calls.length;
      }
      // Input: market id, the progress so far. Output: none.
      await tx.query(sql`update markets set settle_progress = ${JSON.stringify(sofar)}::jsonb where id = ${marketId}`);
      if (before === null || o.announce) await writeOutbox(tx, 'events-changed', { eventIds: [locked.eventId] });
    }
    // The record snapshots this part owes (their lists show its calls; the boards, when it re-ranked):
    // the last part's always, a part between only with the boards or the announcement (the next
    // one that writes the row covers those before it).
    const owes = changed ? finished || rank || o.announce : finished && (!locked.settled || before !== null);
    if (owes) await writeOutbox(tx, 'market-settled', { marketId, userIds, combos: sofar.legs > 0, projectedInTx: true });
    lap('outbox');
    return { locked, calls: partCounts, legs: legs.length, combos: decided, userIds, through, finished, totals, ms, recomputed: done.recomputed };
  });
}

/**
 * The time the people a settlement recomputes whole are computed as of: its own, or the latest time
 * of a record it touches when that is later (a settlement with a clock behind the records', as a
 * rebuild's or a test's), so that no record moves back in time and every part's recomputed people
 * share one time, as they did in one transaction. Input: market id, settle time. Output: that time.
 * Reads each open call's and open leg's person's record by key, once per run.
 */
async function recordsAsOf(db: Db, marketId: string, now: Date): Promise<Date> {
  const [row]: Array<{ at: Date | null }> = await db.query(sql`
    select max(r.updated_at) as at from user_records r
    where r.updated_at > ${now} and r.user_id in (
      select user_id from calls where market_id = ${marketId} and status = 'open'
      union select k.user_id from combo_legs l join combos k on k.id = l.combo_id where l.market_id = ${marketId} and l.status = 'open')
  `);
  return row?.at ?? now;
}

/** Open calls a part settles, about (it ends at the last call of a person). */
export const SETTLE_PART_CALLS = 5_000;
/** Between the parts of one market, the boards re-rank at most this often (and always after the last). */
export const SETTLE_RANK_EVERY_MS = 10_000;
/** Between the parts of one market, its market object's `settling` is rebuilt at most this often. */
export const SETTLE_ANNOUNCE_EVERY_MS = 2_000;

export interface SettleOptions {
  partCalls?: number;
  rankEveryMs?: number;
  announceEveryMs?: number;
  /** Called after each committed part (the fault test's and the bench's window onto the run). */
  onPart?: (part: { calls: number; finished: boolean }) => Promise<void> | void;
}

/**
 * Settle one market, part after part, until no open call or leg of it is left. Safe to run any number
 * of times, concurrently: each call and leg is settled by exactly one part of one run.
 */
export async function settleMarket(db: Db, marketId: string, now: Date, opts: SettleOptions = {}): Promise<SettledMarket> {
  const partCalls = Math.max(1, opts.partCalls ?? SETTLE_PART_CALLS);
  const rankEveryMs = opts.rankEveryMs ?? SETTLE_RANK_EVERY_MS;
  const announceEveryMs = opts.announceEveryMs ?? SETTLE_ANNOUNCE_EVERY_MS;
  const calls: CallCounts = { won: 0, lost: 0, void: 0 };
  const combos: SettledMarket['combos'] = [];
  const userIds: number[] = [];
  const ms: Record<string, number> = {};
  let legs = 0;
  let recomputed = 0;
  let parts = 0;
  let after: number | null = null;
  const asOf = await recordsAsOf(db, marketId, now);
  let rankedAt = performance.now();
  let announcedAt = performance.now();
  for (;;) {
    const started = performance.now();
    const rank = started - rankedAt >= rankEveryMs;
    const announce = started - announcedAt >= announceEveryMs;
    const part = await settlePart(db, marketId, now, { after, partCalls, rank, announce, asOf });
    parts += 1;
    if (rank) rankedAt = performance.now();
    if (announce) announcedAt = performance.now();
    calls.won += part.calls.won;
    calls.lost += part.calls.lost;
    calls.void += part.calls.void;
    legs += part.legs;
    recomputed += part.recomputed;
    for (const { id, status, xp } of part.combos) combos.push({ id, status, xp });
    for (const id of part.userIds) userIds.push(id);
    for (const [step, n] of Object.entries(part.ms)) ms[step] = (ms[step] ?? 0) + n;
    await opts.onPart?.({ calls: part.calls.won + part.calls.lost + part.calls.void, finished: part.finished });
    if (part.finished) {
      const { locked, totals } = part;
      return {
        marketId,
        eventSlug: locked.eventSlug,
        resolution: { winningOutcomeIndex: locked.winningOutcomeIndex, voided: locked.voided },
        closingChances: locked.closingChances,
        first: !locked.settled,
        totals: totals === null ? null : { calls: { won: totals.won, lost: totals.lost, void: totals.void }, legs: totals.legs, combos: totals.combos },
        calls,
        legs,
        combos,
        userIds: [...new Set(userIds)].sort((x, y) => x - y),
        parts,
        ms,
        recomputed,
      };
    }
    // Not finished with the last range: a call or leg before `after` is open again only if another
    // run's part rolled back meanwhile; start over from the first person.
    after = part.through;
  }
}

/**
 * Resolved markets whose settlement has not committed, oldest resolution first: the reconciler's and
 * `npm run rebuild`'s work list (the partial index markets_settlement_pending holds exactly these).
 * Input: a page size. Output: market ids.
 */
export async function marketsPendingSettlement(db: Db, limit: number): Promise<string[]> {
  const rows = await tables.markets(db).find({ resolved_at: not(null), settled_at: null }).orderByAsc('resolved_at').select('id').limit(limit);
  return rows.map((r) => r.id);
}
