import { round2, roundTo } from './rounding.js';

/** Status of a call, a combo or a combo leg (docs/api.md "States and transitions"). */
export type SettlementStatus = 'open' | 'won' | 'lost' | 'void';

/** The notional stake every money figure is scored on (docs/api.md: fields named `*_on_10`). */
export const STAKE = 10;

function assertChance(chance: number, allowZero: boolean): void {
  const low = allowZero ? chance < 0 : chance <= 0;
  if (typeof chance !== 'number' || !Number.isFinite(chance) || low || chance > 1) {
    const range = allowZero ? '[0, 1]' : '(0, 1]';
    throw new RangeError(`chance must be a finite number in ${range}, got ${String(chance)}`);
  }
}

/**
 * What the 10 stake returns if the pick happens: `10 / c`, rounded to 2 places (0.25 → 40).
 * @throws RangeError when c is not in (0, 1].
 */
export function winsOn10(chance: number): number {
  assertChance(chance, false);
  return round2(STAKE / chance);
}

/**
 * Profit of a call scored on 10 (docs/design.md "Money"): open `null`; won `10/c − 10` (2 places);
 * lost `−10`; void `0`. The chance is only read for a won call, so a lost or void call with a
 * stored chance of any value still scores.
 * @throws RangeError for a won call whose chance is not in (0, 1].
 */
export function profitOn10(status: SettlementStatus, chanceAtCall: number): number | null {
  switch (status) {
    case 'open':
      return null;
    case 'won':
      assertChance(chanceAtCall, false);
      return round2(STAKE / chanceAtCall - STAKE);
    case 'lost':
      return -STAKE;
    case 'void':
      return 0;
  }
}

/**
 * XP a right call earns: `10 + round(90 × (1 − c))` — 10 for a sure thing, up to 100 for a
 * long shot. 0 is accepted (a combo's multiplied chance can underflow towards it).
 * @throws RangeError when c is not in [0, 1].
 */
export function xpIfRight(chance: number): number {
  assertChance(chance, true);
  return 10 + roundTo(90 * (1 - chance), 0);
}

/**
 * Status of a combo from its legs (docs/design.md): `lost` as soon as any leg is lost; `void` when
 * every leg is void; `won` when every leg is settled, none lost and at least one won; otherwise
 * `open`. A combo with no legs (never written: combos have 2–6) is `void`, as "every leg is void"
 * holds vacuously and there is nothing that could win.
 */
export function comboStatus(legStatuses: Array<SettlementStatus>): SettlementStatus {
  let open = false;
  let won = false;
  for (const status of legStatuses) {
    if (status === 'lost') return 'lost';
    if (status === 'open') open = true;
    else if (status === 'won') won = true;
  }
  if (open) return 'open';
  return won ? 'won' : 'void';
}

/**
 * XP a combo earns: for a won combo, `xpIfRight` of the product of its non-void legs' chances,
 * times the number of non-void legs; 0 for any other status. Void legs drop out of both factors,
 * as they drop out of the bet.
 */
export function comboXp(legs: Array<{ status: SettlementStatus; chance: number }>): number {
  if (comboStatus(legs.map((leg) => leg.status)) !== 'won') return 0;
  let product = 1;
  let counted = 0;
  for (const leg of legs) {
    if (leg.status === 'void') continue;
    product *= leg.chance;
    counted += 1;
  }
  return xpIfRight(product) * counted;
}

/**
 * `round(100 × won ÷ (won + lost))`; 0 when there are no won or lost calls. Voids never count.
 * The definition: user_records computes it in SQL at scale, held equal to this by rules.int.test.ts.
 */
export function rightPct(won: number, lost: number): number {
  const decided = won + lost;
  if (!(decided > 0)) return 0;
  return roundTo((100 * won) / decided, 0);
}

/**
 * Consecutive won calls counting back from the most recently settled non-void call; void calls
 * are skipped wherever they fall (they neither extend nor break a streak). The definition:
 * user_records computes it in SQL at scale, held equal to this by rules.int.test.ts.
 * @param settledNewestFirst statuses of settled calls, most recently settled first.
 */
export function streak(settledNewestFirst: Array<'won' | 'lost' | 'void'>): number {
  let count = 0;
  for (const status of settledNewestFirst) {
    if (status === 'void') continue;
    if (status === 'lost') break;
    count += 1;
  }
  return count;
}
