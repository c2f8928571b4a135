import { oddsFor, profitOn10, winsOn10, xpIfRight } from '@pm/shared/domain';
import type { Handler } from '../app/handler.js';

/** GET /api/v1/odds: computed from the chance alone (no Redis), with the domain's formulas. */
export const convertOdds: Handler<'/api/v1/odds'> = async ({ chance }) => {
  const profit = profitOn10('won', chance);
  return {
    data: {
      chance,
      wins_on_10: winsOn10(chance),
      // A won call always has a profit; the null of profitOn10 is only for open calls.
      profit_on_10: profit ?? 0,
      xp_if_right: xpIfRight(chance),
      odds: oddsFor(chance),
    },
  };
};
