import type { SportsFrame } from '../protocol.js';
import type { League, Sport, Team } from './catalog-data.js';
import type { Rng } from './prng.js';

/**
 * Matches in accelerated time. A match is a list of segments (halves, quarters, breaks) measured in
 * simulation milliseconds; scoring is a Poisson process over game minutes, so the result does not
 * depend on how coarse the ticks are. Fair chances of every market of the match follow from the
 * score and the game time left (Poisson for soccer, a normal margin for basketball and football).
 */
interface SportRules {
  /** Simulation ms per game minute. */
  minuteMs: number;
  /** Scoring events per team per game minute at strength 1. */
  eventsPerMinute: number;
  /** Mean points per scoring event. */
  pointsPerEvent: number;
  /** Standard deviation of the final margin over a whole game (normal model). */
  marginSd: number;
  totalSd: number;
  fullMinutes: number;
  overtimeMinutes: number;
}

export const RULES: Record<Sport, SportRules> = {
  soccer: { minuteMs: 6_000, eventsPerMinute: 1.3 / 90, pointsPerEvent: 1, marginSd: 0, totalSd: 0, fullMinutes: 90, overtimeMinutes: 0 },
  basketball: { minuteMs: 10_000, eventsPerMinute: 1.1, pointsPerEvent: 2.1, marginSd: 12, totalSd: 18, fullMinutes: 48, overtimeMinutes: 5 },
  football: { minuteMs: 8_000, eventsPerMinute: 0.08, pointsPerEvent: 5.8, marginSd: 13.5, totalSd: 14, fullMinutes: 60, overtimeMinutes: 10 },
};

/** Simulation ms a match sits in the catalog before kick-off, and between full time and resolution. */
export const PRE_MATCH_MS = 150_000;
export const RESOLVE_DELAY_MS = 15_000;

interface Segment {
  period: string;
  play: boolean;
  simMs: number;
  gameMinutes: number;
  /** Soccer: minutes already played when the segment starts (elapsed "74"). */
  minuteBase: number;
}

export type GamePhase = 'scheduled' | 'live' | 'ended';

export interface GameState {
  gameId: number;
  league: League;
  home: Team;
  away: Team;
  kickoff: number;
  strengthHome: number;
  strengthAway: number;
  segments: Segment[];
  clockMs: number;
  homeScore: number;
  awayScore: number;
  phase: GamePhase;
  period: string;
  elapsed: string;
  endedAt: number | null;
  /** Basketball/football: favourite's handicap (positive) and whether the favourite is home. */
  spreadLine: number;
  favouriteIsHome: boolean;
  totalLine: number;
}

function play(sport: Sport, period: string, gameMinutes: number, minuteBase = 0): Segment {
  return { period, play: true, simMs: gameMinutes * RULES[sport].minuteMs, gameMinutes, minuteBase };
}

function pause(period: string, simMs: number): Segment {
  return { period, play: false, simMs, gameMinutes: 0, minuteBase: 0 };
}

function schedule(sport: Sport, rng: Rng): Segment[] {
  if (sport === 'soccer') {
    return [play(sport, '1H', 45 + rng.int(1, 4), 0), pause('HT', 45_000), play(sport, '2H', 45 + rng.int(2, 6), 45)];
  }
  const q = sport === 'basketball' ? 12 : 15;
  return [
    play(sport, 'Q1', q), pause('Q1', 20_000), play(sport, 'Q2', q), pause('HT', 40_000),
    play(sport, 'Q3', q), pause('Q3', 20_000), play(sport, 'Q4', q),
  ];
}

export function createGame(gameId: number, league: League, home: Team, away: Team, kickoff: number, rng: Rng): GameState {
  const sport = league.sport;
  const strengthHome = sport === 'soccer' ? rng.range(0.6, 1.6) : rng.range(0.92, 1.08);
  const strengthAway = sport === 'soccer' ? rng.range(0.6, 1.6) : rng.range(0.92, 1.08);
  const game: GameState = {
    gameId, league, home, away, kickoff, strengthHome, strengthAway,
    segments: schedule(sport, rng), clockMs: 0, homeScore: 0, awayScore: 0,
    phase: 'scheduled', period: '', elapsed: '', endedAt: null,
    spreadLine: 0, favouriteIsHome: true, totalLine: 2.5,
  };
  if (sport !== 'soccer') {
    const r = RULES[sport];
    const perTeam = r.eventsPerMinute * r.pointsPerEvent * r.fullMinutes;
    const margin = perTeam * (strengthHome - strengthAway) + 2.5;
    game.favouriteIsHome = margin >= 0;
    game.spreadLine = Math.floor(Math.abs(margin)) + 0.5;
    game.totalLine = Math.round(perTeam * (strengthHome + strengthAway)) + 0.5;
  }
  return game;
}

function locate(game: GameState): { index: number; start: number } | null {
  let start = 0;
  for (let i = 0; i < game.segments.length; i++) {
    const seg = game.segments[i];
    if (!seg) break;
    if (game.clockMs < start + seg.simMs) return { index: i, start };
    start += seg.simMs;
  }
  return null;
}

function scoreEvents(game: GameState, gameMinutes: number, rng: Rng): void {
  const sport = game.league.sport;
  const r = RULES[sport];
  const homeAdvantage = sport === 'soccer' ? 1.15 : 1.02;
  for (const team of ['home', 'away'] as const) {
    const strength = team === 'home' ? game.strengthHome * homeAdvantage : game.strengthAway;
    const events = rng.poisson(r.eventsPerMinute * strength * gameMinutes);
    let points = 0;
    for (let i = 0; i < events; i++) {
      if (sport === 'soccer') points += 1;
      else if (sport === 'basketball') points += rng.chance(0.1) ? 1 : rng.chance(0.33) ? 3 : 2;
      else points += rng.chance(0.58) ? 7 : 3;
    }
    if (team === 'home') game.homeScore += points;
    else game.awayScore += points;
  }
}

/** Run the match up to simulation time `now`; true when score, period or phase changed. */
export function advanceGame(game: GameState, now: number, rng: Rng): boolean {
  if (game.phase === 'ended' || now < game.kickoff) return false;
  const before = `${game.phase}|${game.period}|${game.homeScore}-${game.awayScore}`;
  game.phase = 'live';
  const sport = game.league.sport;
  const target = now - game.kickoff;
  while (game.phase === 'live') {
    const at = locate(game);
    if (!at) {
      if (sport !== 'soccer' && game.homeScore === game.awayScore) {
        const overtimes = game.segments.filter((s) => s.period === 'OT').length;
        // Football: one overtime, then a decisive field goal rather than a tie (moneyline is two-way).
        if (sport === 'football' && overtimes >= 1) {
          if (rng.chance(0.5)) game.homeScore += 3;
          else game.awayScore += 3;
        } else {
          game.segments.push(pause(game.period, 20_000), play(sport, 'OT', RULES[sport].overtimeMinutes));
          continue;
        }
      }
      game.phase = 'ended';
      game.endedAt = game.kickoff + game.clockMs;
      break;
    }
    if (game.clockMs >= target) break;
    const seg = game.segments[at.index];
    if (!seg) break;
    const until = Math.min(at.start + seg.simMs, target);
    if (seg.play) scoreEvents(game, (until - game.clockMs) / RULES[sport].minuteMs, rng);
    game.clockMs = until;
  }
  describeClock(game);
  return before !== `${game.phase}|${game.period}|${game.homeScore}-${game.awayScore}`;
}

function describeClock(game: GameState): void {
  const sport = game.league.sport;
  if (game.phase === 'ended') {
    const last = game.segments[game.segments.length - 1];
    game.period = sport === 'soccer' ? 'FT' : (last?.period ?? 'Q4');
    game.elapsed = sport === 'soccer' ? '90' : '0:00';
    return;
  }
  const at = locate(game);
  const seg = at ? game.segments[at.index] : undefined;
  if (!at || !seg) return;
  game.period = seg.period;
  const minutesIn = seg.play ? (game.clockMs - at.start) / RULES[sport].minuteMs : 0;
  if (sport === 'soccer') {
    game.elapsed = seg.play ? String(seg.minuteBase + Math.floor(minutesIn) + 1) : '45';
    return;
  }
  const left = seg.play ? Math.max(0, Math.ceil((seg.gameMinutes - minutesIn) * 60)) : 0;
  game.elapsed = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
}

/** Game minutes still to play (scheduled segments only). */
function minutesLeft(game: GameState): number {
  if (game.phase === 'ended') return 0;
  const r = RULES[game.league.sport];
  let left = 0;
  let start = 0;
  for (const seg of game.segments) {
    const end = start + seg.simMs;
    if (seg.play && end > game.clockMs) left += (end - Math.max(start, game.clockMs)) / r.minuteMs;
    start = end;
  }
  return left;
}

export function normCdf(x: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(x));
  const d = 0.3989423 * Math.exp((-x * x) / 2);
  const p = d * t * (0.3193815 + t * (-0.3565638 + t * (1.781478 + t * (-1.821256 + t * 1.330274))));
  return x > 0 ? 1 - p : p;
}

function poissonPmf(lambda: number, max: number): number[] {
  const out: number[] = [];
  let p = Math.exp(-lambda);
  for (let k = 0; k <= max; k++) {
    out.push(p);
    p = (p * lambda) / (k + 1);
  }
  return out;
}

export interface GameFairs {
  home: number;
  draw: number;
  away: number;
  over: number;
  btts: number;
  /** Probability the favourite covers the spread. */
  spread: number;
}

/** Fair chances of the match's markets given the score and the time left. */
export function gameFairs(game: GameState): GameFairs {
  const sport = game.league.sport;
  const r = RULES[sport];
  const left = minutesLeft(game);
  const hs = game.homeScore;
  const as = game.awayScore;
  if (sport === 'soccer') {
    const ph = poissonPmf(r.eventsPerMinute * game.strengthHome * 1.15 * left, 12);
    const pa = poissonPmf(r.eventsPerMinute * game.strengthAway * left, 12);
    let home = 0, draw = 0, away = 0, over = 0;
    ph.forEach((x, i) => pa.forEach((y, j) => {
      const w = x * y;
      const d = hs + i - (as + j);
      if (d > 0) home += w;
      else if (d === 0) draw += w;
      else away += w;
      if (hs + i + as + j > 2.5) over += w;
    }));
    const homeScores = hs > 0 ? 1 : 1 - (ph[0] ?? 1);
    const awayScores = as > 0 ? 1 : 1 - (pa[0] ?? 1);
    return { home, draw, away, over, btts: homeScores * awayScores, spread: 0.5 };
  }
  const share = left / r.fullMinutes;
  const perTeam = r.eventsPerMinute * r.pointsPerEvent * left;
  const mu = hs - as + perTeam * (game.strengthHome * 1.02 - game.strengthAway);
  const sd = r.marginSd * Math.sqrt(share) + 0.3;
  const totalMu = hs + as + perTeam * (game.strengthHome * 1.02 + game.strengthAway);
  const totalSd = r.totalSd * Math.sqrt(share) + 0.3;
  const home = normCdf(mu / sd);
  const favMu = game.favouriteIsHome ? mu : -mu;
  return {
    home, draw: 0, away: 1 - home,
    over: normCdf((totalMu - game.totalLine) / totalSd),
    btts: 0.5,
    spread: normCdf((favMu - game.spreadLine) / sd),
  };
}

const STATUS: Record<Sport, { live: string; ended: string }> = {
  // Casing differs across leagues on the real feed (docs/protocol.md §2); consumers compare case-insensitively.
  soccer: { live: 'InProgress', ended: 'Final' },
  basketball: { live: 'inprogress', ended: 'final' },
  football: { live: 'running', ended: 'finished' },
};

export function sportsFrame(game: GameState, simNow: number): SportsFrame {
  const status = STATUS[game.league.sport];
  const frame: SportsFrame = {
    gameId: game.gameId,
    leagueAbbreviation: game.league.abbreviation,
    homeTeam: game.home.name,
    awayTeam: game.away.name,
    status: game.phase === 'ended' ? status.ended : game.phase === 'live' ? status.live : 'Scheduled',
    score: `${game.homeScore}-${game.awayScore}`,
    period: game.period,
    elapsed: game.elapsed,
    live: game.phase === 'live',
    ended: game.phase === 'ended',
  };
  if (game.phase === 'ended') frame.finishedTimestamp = new Date(game.endedAt ?? simNow).toISOString();
  return frame;
}
