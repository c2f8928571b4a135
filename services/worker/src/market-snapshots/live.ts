import type { LiveMatch, Result, Team } from '@pm/shared/api';
import type { LiveSnapshot } from '@pm/shared/snapshots';
import type { CatalogEvent, CatalogMarket, Chances, GameState } from './model.js';
import { busiestFirst, eventUrl, outcomeChance } from './payloads.js';

/**
 * The live list (pure): every open event whose game is in play, with the match's `result` read from
 * its moneyline markets. Two shapes exist on the exchange (docs/protocol.md §3):
 * - soccer: three Yes/No markets (home win, `Draw (Home vs. Away)`, away win): each side's chance is
 *   its market's Yes chance;
 * - two-way games (NBA, NFL …): one market whose outcomes are the two team names: each side's
 *   chance is its outcome's chance, both on the same market id.
 * Sides are matched to the catalog's home/away teams by name (or abbreviation); where a name does not
 * match, the catalog's order is used (home first), which is how the exchange lists them.
 */

const DRAW = /\b(draw|tie)\b/i;

const norm = (s: string) => s.trim().toLowerCase();

function mentions(text: string, team: Team | undefined): boolean {
  if (team === undefined) return false;
  const t = norm(text);
  return (team.name !== '' && t.includes(norm(team.name))) || (team.abbreviation !== '' && t === norm(team.abbreviation));
}

function yesChance(market: CatalogMarket, chances: Chances): number {
  const yes = market.outcomes.find((o) => norm(o.name) === 'yes') ?? market.outcomes[0];
  return yes === undefined ? 0 : outcomeChance(yes, chances);
}

/** home, draw (where there is one) and away, in that order; [] without a moneyline market. */
export function matchResult(event: CatalogEvent, chances: Chances): Result[] {
  const home = event.teams.find((t) => t.home);
  const away = event.teams.find((t) => !t.home);
  const moneyline = event.markets.filter((m) => m.kind === 'moneyline');
  const round = (c: number) => Math.round(c * 10_000) / 10_000;

  if (moneyline.length === 1) {
    const market = moneyline[0] as CatalogMarket;
    const outcomes = market.outcomes;
    const draw = outcomes.find((o) => DRAW.test(o.name));
    const sides = outcomes.filter((o) => o !== draw);
    const homeOutcome = sides.find((o) => mentions(o.name, home)) ?? sides.find((o) => !mentions(o.name, away)) ?? sides[0];
    const awayOutcome = sides.find((o) => o !== homeOutcome && mentions(o.name, away)) ?? sides.find((o) => o !== homeOutcome);
    const result: Result[] = [];
    const side = (o: CatalogMarket['outcomes'][number] | undefined) => {
      if (o !== undefined) result.push({ label: o.name, chance: round(outcomeChance(o, chances)), market_id: market.id });
    };
    side(homeOutcome);
    side(draw);
    side(awayOutcome);
    return result;
  }

  if (moneyline.length === 0) return [];
  const drawMarket = moneyline.find((m) => DRAW.test(m.label) || DRAW.test(m.question));
  const sides = moneyline.filter((m) => m !== drawMarket);
  const about = (m: CatalogMarket, team: Team | undefined) => mentions(m.label, team) || mentions(m.question, team);
  const homeMarket = sides.find((m) => about(m, home) && !about(m, away)) ?? sides.find((m) => !about(m, away)) ?? sides[0];
  const awayMarket = sides.find((m) => m !== homeMarket && about(m, away)) ?? sides.find((m) => m !== homeMarket);
  const result: Result[] = [];
  const add = (m: CatalogMarket | undefined, label: string) => {
    if (m !== undefined) result.push({ label, chance: round(yesChance(m, chances)), market_id: m.id });
  };
  add(homeMarket, home?.name || homeMarket?.label || 'Home');
  add(drawMarket, 'Draw');
  add(awayMarket, away?.name || awayMarket?.label || 'Away');
  return result;
}

/** A match is in play while its game says live and not ended. */
export function inPlay(game: GameState | undefined): game is GameState {
  return game !== undefined && game.live && !game.ended;
}

export function buildLiveMatch(event: CatalogEvent, game: GameState, chances: Chances, webUrl: string): LiveMatch {
  return {
    slug: event.slug,
    title: event.title,
    // Our league key, as the event's game object shows it (payloads.ts buildGame).
    league: event.league ?? game.league,
    score: game.score,
    clock: game.clock,
    period: game.period,
    teams: event.teams,
    result: matchResult(event, chances),
    markets: event.markets.length,
    url: eventUrl(webUrl, event.slug),
  };
}

/** Every open event in play, busiest first (as the market lists). */
export function buildLiveSnapshot(
  openEvents: readonly CatalogEvent[],
  games: ReadonlyMap<string, GameState>,
  chances: Chances,
  webUrl: string,
): LiveSnapshot {
  const matches: LiveMatch[] = [];
  // In play first, then sorted: the same order as sorting every open event and then picking (the
  // sort is stable), and a build sorts the few matches in play rather than thousands of events.
  for (const event of busiestFirst(openEvents.filter((e) => !e.closed && inPlay(games.get(e.id))))) {
    const game = games.get(event.id);
    if (inPlay(game)) matches.push(buildLiveMatch(event, game, chances, webUrl));
  }
  return { matches };
}
