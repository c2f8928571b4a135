import { oddsForChance, profitOn10, winsOn10, xpIfRight } from '@pm/shared/domain';
import type { Handler } from '../app/handler.js';

/**
 * GET /api/v1/odds: computed from the chance alone (no Redis), with the domain's formulas. The odds
 * are `oddsForChance`, the function every outcome's odds come from, so the two always agree. Chance 0
 * cannot win: it has no payout (null), where a won call's profit is otherwise 10/c − 10.
 */
export const convertOdds: Handler<'/api/v1/odds'> = async ({ chance }) => {
  return {
    data: {
      chance,
      wins_on_10: chance > 0 ? winsOn10(chance) : null,
      profit_on_10: chance > 0 ? profitOn10('won', chance) : null,
      xp_if_right: xpIfRight(chance),
      odds: oddsForChance(chance),
    },
  };
};
