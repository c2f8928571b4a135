import type { MarketResolvedMessage } from '../protocol.js';
import type { SimEvent, SimMarket } from './model.js';
import type { Rng } from './prng.js';
import type { World } from './world.js';

/**
 * How synthetic markets resolve. The final prices go to the catalog (closed, ["1","0"] or
 * ["0.5","0.5"] for a void, umaResolutionStatus "resolved"); the `market_resolved` message is only
 * produced when the resolution is announced, because the real feed sometimes omits it.
 */

/** Winning outcome index of a market whose event has reached its end. */
export function naturalWinner(event: SimEvent, market: SimMarket, world: World, rng: Rng): 0 | 1 {
  const g = event.game;
  const role = market.role;
  const yes = (cond: boolean): 0 | 1 => (cond ? 0 : 1);
  if (g) {
    const diff = g.homeScore - g.awayScore;
    switch (role.kind) {
      case 'home': return yes(diff > 0);
      case 'draw': return yes(diff === 0);
      case 'away': return yes(diff < 0);
      case 'over': return yes(g.homeScore + g.awayScore > g.totalLine);
      case 'btts': return yes(g.homeScore > 0 && g.awayScore > 0);
      case 'spread': return yes((g.favouriteIsHome ? diff : -diff) > g.spreadLine);
      default: break;
    }
  }
  if (role.kind === 'updown' && event.upDown) return yes(world.spot[event.upDown.coin] >= event.upDown.openPrice);
  if (role.kind === 'above' && event.coin) return yes(world.spot[event.coin] > role.strike);
  return yes(rng.chance(market.fair));
}

/** For a mutually exclusive event: the one market that resolves Yes, drawn by fair chance. */
export function exclusiveWinner(event: SimEvent, rng: Rng): SimMarket | undefined {
  const open = event.markets.filter((m) => !m.closed);
  const total = open.reduce((s, m) => s + m.fair, 0);
  let draw = rng.next() * total;
  for (const m of open) {
    draw -= m.fair;
    if (draw <= 0) return m;
  }
  return open[open.length - 1];
}

/**
 * Flip a market to resolved. `winner` null = void (0.5/0.5). Returns the announcement when asked for;
 * a void announcement carries empty winning fields (the exchange's void shape is unknown).
 */
export function resolveMarket(
  market: SimMarket,
  winner: 0 | 1 | null,
  announce: boolean,
  nowMs: number,
  timestamp: string,
): MarketResolvedMessage | null {
  market.closed = true;
  market.resolvedAt = nowMs;
  market.finalPrices = winner === null ? ['0.5', '0.5'] : winner === 0 ? ['1', '0'] : ['0', '1'];
  if (!announce) return null;
  return {
    event_type: 'market_resolved',
    id: market.id,
    market: market.conditionId,
    assets_ids: [...market.tokens],
    winning_asset_id: winner === null ? '' : market.tokens[winner],
    winning_outcome: winner === null ? '' : market.outcomes[winner],
    timestamp,
  };
}
