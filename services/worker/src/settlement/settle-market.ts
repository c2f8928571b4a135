import { comboStatus, comboXp, type SettlementStatus } from '@pm/shared/domain';
import { not, sql, tables, type Db } from '@pm/shared/db';
import { writeOutbox } from '@pm/shared/outbox';
import { finishSettlement, lockForSettlement, settleCallsWithRecords, settleFieldRecords, settleWindowRecords } from '../projections/run.js';

/**
 * SettleMarket: in ONE transaction, settle a resolved market's open calls, its open combo legs,
 * and every combo whose status now follows from its legs (docs/design.md "Money", "XP", "Combo status").
 *
 * The truth is the database, not the job: the market's row in `market_resolutions` (else the
 * resolution columns of `markets`). Exactly-once comes from the guards, not from the queue:
 * - the market row is locked `for update`, so two settlements of one market run one after the other
 *   (and a call being recorded on it, which holds `for share`, finishes first or sees it closed);
 * - every transition is `where status = 'open'`, so the second run finds nothing to do;
 * - touched combos are locked `for update` in id order before their legs are read, so two markets
 *   settling legs of one combo at once cannot both miss the other's leg (nor deadlock).
 * The same transaction moves the touched people's user_records by the settlement's delta and
 * re-ranks the boards (projections/run.ts projectSettlement, under the projections lock), sets
 * `markets.settled_at` (the reconciler's "no longer pending") and, when it changed anything or
 * settles the market for the first time, writes the `market-settled` outbox row that owes the
 * record snapshots: nothing is enqueued after the commit, and nothing about the records is owed by
 * a job that could die after it.
 */

export interface Resolution {
  winningOutcomeIndex: number | null;
  voided: boolean;
}

export interface SettledMarket {
  marketId: string;
  /** Slug of the market's event (for the event stream's settlement message). */
  eventSlug: string;
  resolution: Resolution;
  /** The market's closing chances by outcome index, as recorded when it closed (null: none recorded). */
  closingChances: Array<number | null> | null;
  /** Calls settled by this run, by status. */
  calls: { won: number; lost: number; void: number };
  legs: number;
  /** Combos whose status this run decided. */
  combos: Array<{ id: string; status: SettlementStatus; xp: number }>;
  /** True when this run was the market's first settlement (`settled_at` was unset). */
  first: boolean;
  /** Users whose records this run moved (owners of the calls it settled and of the combos it decided). */
  userIds: number[];
  callIds: string[];
  /** Milliseconds per step of the transaction (the job logs them). */
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

async function lockResolution(tx: Tx, marketId: string): Promise<Resolution & { settled: boolean; eventSlug: string; closingChances: Array<number | null> | null }> {
  // Input: market id. Output: the market's resolution (the log row first, else the market's own
  // columns), whether it was settled before and its event's slug, with the market row locked for update until commit.
  const rows: Array<{ logged: boolean; log_winner: number | null; log_voided: boolean | null; resolved: boolean; winner: number | null; voided: boolean; settled: boolean; event_slug: string; closing_chances: Array<number | null> | null }> =
    await tx.query(sql`
      select r.market_id is not null as logged, r.winning_outcome_index as log_winner, r.voided as log_voided,
             m.resolved_at is not null as resolved, m.resolved_outcome_index as winner, m.voided,
             m.settled_at is not null as settled, (select e.slug from events e where e.id = m.event_id) as event_slug,
             m.closing_chances::float8[] as closing_chances
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
  return { ...resolution, settled: row.settled, eventSlug: row.event_slug, closingChances: row.closing_chances };
}

/**
 * Settle one market. Safe to run any number of times, concurrently: only the first changes anything.
 */
export async function settleMarket(db: Db, marketId: string, now: Date): Promise<SettledMarket> {
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
    const { settled: settledBefore, eventSlug, closingChances, ...resolution } = await lockResolution(tx, marketId);
    const winner = resolution.voided ? null : resolution.winningOutcomeIndex;

    // Input: market id, winner, settle time. Output: the combos whose legs on this market settled now.
    const legs: Array<{ combo_id: string }> = await tx.query(sql`
      update combo_legs
      set status = case when ${winner}::integer is null then 'void'
                        when outcome_index = ${winner}::integer then 'won' else 'lost' end,
          settled_at = ${now}
      where market_id = ${marketId} and status = 'open'
      returning combo_id
    `);
    lap('legs');

    const comboIds = [...new Set(legs.map((l) => l.combo_id))].sort();
    const decided: Array<SettledMarket['combos'][number] & { userId: number }> = [];
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

    // Input: market id, winner (null = void), settle time. Output: one row per call settled now;
    // their people's user_records (and the won combos' owners') moved by the settlement's delta in
    // the same statement (projections/user-records.ts), and the people it could not serve exactly.
    // Profit and XP per docs/design.md, in numeric: won 10/c − 10 (2 places), lost −10, void 0;
    // XP of a won call 10 + round(90 × (1 − c)). Postgres rounds numeric halves away from zero,
    // as the domain's roundTo does.
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
          where c.market_id = ${marketId} and c.status = 'open'
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
    if (calls.length > 0) await settleFieldRecords(tx, marketId, now);
    lap('field_records');
    if (calls.length > 0) await settleWindowRecords(tx, marketId, now);
    lap('window_records');

    const callIds = calls.map((c) => c.id);
    // A run that moved no record (a repeated delivery: the run that settled committed its records
    // and boards with it) does not re-rank: the boards rank user_records, which it left as they were
    // (the clock's part of the week board is the week roll-over batch's, projections/schedule.ts).
    // Under load a duplicate's re-rank cost ~1.5 s of database time beside the snapshot build.
    const moved = calls.length > 0 || decided.length > 0 || recompute.length > 0;
    const finished = moved ? await finishSettlement(tx, { recompute, asOf }, now) : { ms: {}, recomputed: 0 };
    Object.assign(ms, finished.ms);
    t0 = performance.now();

    // Everyone whose record this run moved: owners of the calls it settled and of the combos it decided.
    // (A repeated run moves no one: the run that did committed their snapshots' outbox row with it.)
    const userIds = [...new Set([...calls.map((c) => c.user_id), ...decided.map((d) => d.userId)])].sort((x, y) => x - y);
    if (!settledBefore || calls.length > 0 || legs.length > 0) {
      // Input: market id, settle time. Output: none; the market is no longer pending settlement.
      await tables.markets(tx).update({ id: marketId }, { settled_at: now });
      await writeOutbox(tx, 'market-settled', {
        marketId,
        userIds,
        combos: decided.length > 0 || legs.length > 0,
        projectedInTx: true,
      });
    }
    lap('outbox');

    const count = (s: 'won' | 'lost' | 'void') => calls.filter((c) => c.status === s).length;
    return {
      marketId,
      eventSlug,
      resolution,
      closingChances,
      first: !settledBefore,
      calls: { won: count('won'), lost: count('lost'), void: count('void') },
      legs: legs.length,
      combos: decided.map(({ id, status, xp }) => ({ id, status, xp })),
      userIds,
      callIds,
      ms,
      recomputed: finished.recomputed,
    };
  });
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
