import { COINS, league, LEAGUES, type CoinKey, type GenericFamily } from './catalog-data.js';
import { coin, EventFactory } from './factory.js';
import { advanceGame, gameFairs, PRE_MATCH_MS, RULES } from './games.js';
import { seedBook } from './book-moves.js';
import type { SimEvent, SimMarket } from './model.js';
import type { Rng } from './prng.js';

/**
 * The synthetic catalog: which events exist, indexed by token and market id, and the "slots" that
 * keep it full. Every event belongs to a slot; when it closes, its slot makes the replacement (the
 * next match of that pitch, the next five-minute window of that coin, the next politics question…),
 * so the count of open events per family never drops.
 */
const SOCCER_SLOTS = ['epl', 'epl', 'la-liga', 'la-liga', 'serie-a', 'bundesliga', 'ucl', 'mls', 'epl', 'serie-a'];
const NBA_SLOTS = 4;
const NFL_SLOTS = 3;
const GENERIC_COUNTS: Record<GenericFamily, number> = { politics: 10, economy: 8, tech: 8, culture: 8 };
const OUTRIGHTS: ReadonlyArray<[string, string, readonly string[]]> = [
  ['epl', 'English Premier League Winner', ['Arsenal', 'Liverpool', 'Manchester City', 'Chelsea']],
  ['ucl', 'UEFA Champions League Winner', ['Real Madrid', 'PSG', 'Bayern Munich', 'Arsenal', 'Barcelona']],
  ['nba', 'NBA Champion', ['Celtics', 'Nuggets', 'Thunder', 'Knicks']],
  ['nfl', 'Super Bowl Champion', ['Chiefs', 'Eagles', 'Bills', 'Ravens']],
];
const UNTAGGED: ReadonlyArray<[CoinKey, number, string]> = [
  ['bitcoin', 100_000, '$100k'],
  ['ethereum', 4_000, '$4,000'],
];

/** Length of a crypto up/down window, simulation ms. */
export const UP_DOWN_MS = 300_000;
/** Volatility of the coins' spot walk per sqrt(simulation second) (≈ 56 % a year). */
export const SPOT_VOL = 1e-4;
/** Closed events kept in the catalog (served to closed=true, slug= and id=). */
const KEEP_CLOSED = 2_000;

export interface TokenRef {
  event: SimEvent;
  market: SimMarket;
  outcome: 0 | 1;
}

export class World {
  readonly events: SimEvent[] = [];
  readonly byToken = new Map<string, TokenRef>();
  readonly byMarketId = new Map<string, { event: SimEvent; market: SimMarket }>();
  readonly spot: Record<CoinKey, number>;
  private readonly factory: EventFactory;

  constructor(
    private readonly rng: Rng,
    private readonly nowMs: () => number,
    idEpoch = 0,
  ) {
    this.factory = new EventFactory(rng, nowMs, idEpoch);
    this.spot = Object.fromEntries(COINS.map((c) => [c.key, c.spot])) as Record<CoinKey, number>;
  }

  /**
   * The starting catalog: matches staggered so several are already in play; then, when `openEvents`
   * asks for more than that, generic questions of every family in turn until there are that many
   * (each has a slot of its own, so it is replaced when it closes and the count holds).
   */
  build(openEvents = 0): void {
    const now = this.nowMs();
    const stagger = (slots: number, sport: 'soccer' | 'basketball' | 'football', make: (i: number, kickoff: number) => SimEvent) => {
      const r = RULES[sport];
      const length = PRE_MATCH_MS + 0.9 * r.fullMinutes * r.minuteMs;
      for (let i = 0; i < slots; i++) {
        const phase = (i / slots) * length;
        const event = make(i, now + PRE_MATCH_MS - phase);
        if (event.game) {
          // Fast-forward matches that kicked off before the simulator started.
          advanceGame(event.game, now, this.rng);
          const fairs = gameFairs(event.game);
          for (const m of event.markets) {
            m.fair = marketFair(m, fairs);
            seedBook(m, this.rng);
          }
        }
        this.add(event);
      }
    };
    stagger(SOCCER_SLOTS.length, 'soccer', (i, k) => this.factory.match(league(SOCCER_SLOTS[i] ?? 'epl'), k, `soccer:${i}`));
    stagger(NBA_SLOTS, 'basketball', (i, k) => this.factory.match(league('nba'), k, `nba:${i}`));
    stagger(NFL_SLOTS, 'football', (i, k) => this.factory.match(league('nfl'), k, `nfl:${i}`));
    OUTRIGHTS.forEach(([key, title, options], i) =>
      this.add(this.factory.outright(league(key), title, options, `outright:${i}`)));
    COINS.forEach((c, i) => {
      const start = now - (i + 1) * 60_000;
      this.add(this.factory.upDown(c, this.spot[c.key] * (1 + (i % 2 ? 1 : -1) * 0.0004), start, start + UP_DOWN_MS, `updown:${c.key}`));
      this.add(this.factory.aboveLadder(c, this.spot[c.key], `ladder:${c.key}`));
    });
    for (const [key, strike, label] of UNTAGGED) this.add(this.factory.untaggedAbove(coin(key), strike, label, `untagged:${key}`));
    const families = Object.keys(GENERIC_COUNTS) as GenericFamily[];
    for (const family of families) {
      for (let i = 0; i < GENERIC_COUNTS[family]; i++) this.add(this.factory.generic(family, `generic:${family}:${i}`));
    }
    for (let n = 0; this.events.length < openEvents; n++) {
      const family = families[n % families.length]!;
      this.add(this.factory.generic(family, `generic:${family}:${GENERIC_COUNTS[family] + Math.floor(n / families.length)}`));
    }
  }

  /** Adds an event; returns the closed events that left the world to make room (KEEP_CLOSED). */
  add(event: SimEvent): SimEvent[] {
    this.events.push(event);
    for (const market of event.markets) {
      this.byMarketId.set(market.id, { event, market });
      market.tokens.forEach((token, outcome) => this.byToken.set(token, { event, market, outcome: outcome === 0 ? 0 : 1 }));
    }
    return this.pruneClosed();
  }

  /** The event that takes a closed event's place in its slot. */
  replacement(closed: SimEvent): SimEvent {
    const now = this.nowMs();
    const [kind = '', key = ''] = closed.slot.split(':');
    if (kind === 'soccer' || kind === 'nba' || kind === 'nfl') {
      const l = closed.game?.league ?? LEAGUES[0];
      if (!l) throw new Error('no league');
      return this.factory.match(l, now + PRE_MATCH_MS + this.rng.int(0, 60) * 1_000, closed.slot);
    }
    if (kind === 'updown') return this.factory.upDown(coin(key), this.spot[coin(key).key], now, now + UP_DOWN_MS, closed.slot);
    if (kind === 'ladder') return this.factory.aboveLadder(coin(key), this.spot[coin(key).key], closed.slot);
    if (kind === 'untagged') {
      const spec = UNTAGGED.find(([k]) => k === key) ?? UNTAGGED[0];
      if (!spec) throw new Error('no untagged spec');
      return this.factory.untaggedAbove(coin(spec[0]), spec[1], spec[2], closed.slot);
    }
    if (kind === 'outright') {
      const spec = OUTRIGHTS[Number(key)] ?? OUTRIGHTS[0];
      if (!spec) throw new Error('no outright spec');
      return this.factory.outright(league(spec[0]), spec[1], spec[2], closed.slot);
    }
    return this.factory.generic(closed.family as GenericFamily, closed.slot);
  }

  walkSpots(dtSeconds: number): void {
    for (const c of COINS) this.spot[c.key] *= Math.exp(SPOT_VOL * Math.sqrt(dtSeconds) * this.rng.normal());
  }

  private pruneClosed(): SimEvent[] {
    let closed = 0;
    for (const e of this.events) if (e.closed) closed++;
    const pruned: SimEvent[] = [];
    while (closed > KEEP_CLOSED) {
      const i = this.events.findIndex((e) => e.closed);
      const [gone] = this.events.splice(i, 1);
      closed--;
      if (gone === undefined) break;
      pruned.push(gone);
      for (const m of gone.markets) {
        this.byMarketId.delete(m.id);
        for (const t of m.tokens) this.byToken.delete(t);
      }
    }
    return pruned;
  }
}

/** A sports market's fair chance (of its first outcome) from the match fairs. */
export function marketFair(m: SimMarket, fairs: ReturnType<typeof gameFairs>): number {
  return Math.min(0.995, Math.max(0.005, rawFair(m, fairs)));
}

function rawFair(m: SimMarket, fairs: ReturnType<typeof gameFairs>): number {
  switch (m.role.kind) {
    case 'home': return fairs.home;
    case 'draw': return fairs.draw;
    case 'away': return fairs.away;
    case 'over': return fairs.over;
    case 'btts': return fairs.btts;
    case 'spread': return fairs.spread;
    default: return m.fair;
  }
}
