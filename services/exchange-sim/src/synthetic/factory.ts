import type { GammaTag } from '../protocol.js';
import { BinaryBook } from './book.js';
import { seedBook } from './book-moves.js';
import {
  COINS, GENERIC_TEMPLATES, HORIZONS, MONTHS, leagueTags, tagsFor,
  type Coin, type GenericFamily, type League,
} from './catalog-data.js';
import { createGame, gameFairs, PRE_MATCH_MS, RULES, type GameState } from './games.js';
import type { Family, MarketRole, SimEvent, SimMarket } from './model.js';
import type { Rng } from './prng.js';

const DAY_MS = 86_400_000;

interface MarketSpec {
  question: string;
  groupItemTitle: string;
  outcomes: [string, string];
  fair: number;
  role: MarketRole;
  sportsMarketType?: string;
  line?: number;
}

interface EventSpec {
  family: Family;
  title: string;
  slugBase: string;
  description: string;
  tags: GammaTag[] | null;
  startDate: number;
  endDate: number;
  exclusive: boolean;
  slot: string;
  markets: MarketSpec[];
  game?: GameState;
  coin?: Coin;
  upDown?: { openPrice: number; start: number; end: number };
}

export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function dayLabel(ms: number): string {
  const d = new Date(ms);
  return `${MONTHS[d.getUTCMonth()] ?? ''} ${d.getUTCDate()}`;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function money(value: number): string {
  return value >= 100 ? `$${Math.round(value).toLocaleString('en-US')}` : `$${value.toFixed(2)}`;
}

const clampFair = (p: number): number => Math.min(0.97, Math.max(0.03, p));

/**
 * Builds the synthetic catalog's events. All randomness comes from one seeded stream, and ids come
 * from counters, so the same seed and the same call order give the same catalog.
 */
export class EventFactory {
  private eventSeq = 0;
  private marketSeq = 0;
  private gameSeq = 0;
  private readonly slugs = new Set<string>();
  private readonly cursors: Record<GenericFamily, number> = { politics: 0, economy: 0, tech: 0, culture: 0 };

  /**
   * @param idEpoch 0: ids as they always were (30001…, 540001…, games 90001…). Otherwise a run's own
   *   epoch (the run line gives the start's Unix seconds): every id and event slug carries it, so a
   *   simulator restarted on the same database never hands an id (or a slug) to a different event.
   */
  constructor(
    private readonly rng: Rng,
    private readonly nowMs: () => number,
    private readonly idEpoch = 0,
  ) {}

  /** `base + seq`, after the epoch's digits when there is one (a fixed 10-digit prefix: no two runs' ids meet). */
  private idOf(base: number, seq: number): string {
    return this.idEpoch > 0 ? `${this.idEpoch}${base + seq}` : String(base + seq);
  }

  private uniqueSlug(base: string): string {
    let slug = base;
    for (let n = 2; this.slugs.has(slug); n++) slug = `${base}-${n}`;
    this.slugs.add(slug);
    return slug;
  }

  private market(spec: MarketSpec, eventSlug: string, description: string, createdAt: number): SimMarket {
    const rng = this.rng;
    this.marketSeq += 1;
    const fair = clampFair(spec.fair);
    const volume = Math.round(Math.exp(rng.range(Math.log(2_000), Math.log(4_000_000))) * 100) / 100;
    const market: SimMarket = {
      id: this.idOf(540_000, this.marketSeq),
      conditionId: `0x${rng.hex(64)}`,
      question: spec.question,
      slug: this.uniqueSlug(`${eventSlug}-${slugify(spec.groupItemTitle || spec.question)}`.slice(0, 120)),
      groupItemTitle: spec.groupItemTitle,
      description,
      outcomes: spec.outcomes,
      tokens: [rng.digits(76), rng.digits(76)],
      sportsMarketType: spec.sportsMarketType ?? null,
      line: spec.line ?? null,
      role: spec.role,
      fair,
      initialFair: fair,
      createdAt,
      book: new BinaryBook(),
      // About one market in twelve quotes wider than 0.10, where the display rule uses the last trade.
      spreadTarget: rng.chance(0.08) ? rng.int(12, 20) * 10 : rng.pick([10, 10, 10, 20, 20, 30, 40]),
      lastTrade: null,
      volume,
      volume24hr: Math.round(volume * rng.range(0.01, 0.25) * 100) / 100,
      closed: false,
      finalPrices: null,
      resolvedAt: null,
    };
    seedBook(market, rng);
    return market;
  }

  private event(spec: EventSpec): SimEvent {
    this.eventSeq += 1;
    const createdAt = this.nowMs();
    const slug = this.uniqueSlug(this.idEpoch > 0 ? `${spec.slugBase}-${this.idEpoch.toString(36)}` : spec.slugBase);
    const description = spec.description;
    return {
      id: this.idOf(30_000, this.eventSeq),
      slug,
      title: spec.title,
      description,
      family: spec.family,
      tags: spec.tags,
      createdAt,
      startDate: spec.startDate,
      endDate: spec.endDate,
      // A few events carry Gamma's non-ISO time strings ("2026-04-05 15:10:00+00").
      nonIsoDates: this.eventSeq % 9 === 4,
      exclusive: spec.exclusive,
      markets: spec.markets.map((m) => this.market(m, slug, description, createdAt)),
      closed: false,
      closedAt: null,
      game: spec.game ?? null,
      upDown: spec.upDown && spec.coin ? { coin: spec.coin.key, ...spec.upDown } : null,
      coin: spec.coin?.key ?? null,
      slot: spec.slot,
      liquidityBase: Math.round(this.rng.range(5_000, 400_000)),
    };
  }

  private pickTeams(league: League): [League['teams'][number], League['teams'][number]] {
    const home = this.rng.pick(league.teams);
    let away = this.rng.pick(league.teams);
    while (away.abbreviation === home.abbreviation) away = this.rng.pick(league.teams);
    return [home, away];
  }

  /** A match: soccer gets home/draw/away + totals + both-teams-to-score; others moneyline + spread + totals. */
  match(league: League, kickoff: number, slot: string): SimEvent {
    this.gameSeq += 1;
    const [home, away] = this.pickTeams(league);
    const game = createGame(this.idEpoch * 1_000_000 + 90_000 + this.gameSeq, league, home, away, kickoff, this.rng);
    const fairs = gameFairs(game);
    const vs = `${home.name} vs. ${away.name}`;
    const day = isoDay(kickoff);
    const rules = RULES[league.sport];
    const duration = game.segments.reduce((sum, s) => sum + s.simMs, 0);
    const markets: MarketSpec[] =
      league.sport === 'soccer'
        ? [
            { question: `Will ${home.name} win on ${day}?`, groupItemTitle: home.name, outcomes: ['Yes', 'No'], fair: fairs.home, role: { kind: 'home' }, sportsMarketType: 'moneyline' },
            { question: `Will ${vs} end in a draw?`, groupItemTitle: `Draw (${vs})`, outcomes: ['Yes', 'No'], fair: fairs.draw, role: { kind: 'draw' }, sportsMarketType: 'moneyline' },
            { question: `Will ${away.name} win on ${day}?`, groupItemTitle: away.name, outcomes: ['Yes', 'No'], fair: fairs.away, role: { kind: 'away' }, sportsMarketType: 'moneyline' },
            { question: `${vs}: O/U 2.5`, groupItemTitle: 'O/U 2.5', outcomes: ['Over', 'Under'], fair: fairs.over, role: { kind: 'over' }, sportsMarketType: 'totals', line: 2.5 },
            { question: `${vs}: Both Teams to Score`, groupItemTitle: 'Both Teams to Score', outcomes: ['Yes', 'No'], fair: fairs.btts, role: { kind: 'btts' }, sportsMarketType: 'both_teams_to_score' },
          ]
        : (() => {
            const fav = game.favouriteIsHome ? home : away;
            const dog = game.favouriteIsHome ? away : home;
            return [
              { question: vs, groupItemTitle: 'Moneyline', outcomes: [home.name, away.name], fair: fairs.home, role: { kind: 'home' }, sportsMarketType: 'moneyline' },
              { question: `Spread: ${fav.name} (-${game.spreadLine})`, groupItemTitle: `Spread -${game.spreadLine}`, outcomes: [fav.name, dog.name], fair: fairs.spread, role: { kind: 'spread' }, sportsMarketType: 'spreads', line: -game.spreadLine },
              { question: `${vs}: O/U ${game.totalLine}`, groupItemTitle: `O/U ${game.totalLine}`, outcomes: ['Over', 'Under'], fair: fairs.over, role: { kind: 'over' }, sportsMarketType: 'totals', line: game.totalLine },
            ];
          })();
    return this.event({
      family: league.sport === 'soccer' ? 'soccer' : league.key === 'nba' ? 'nba' : 'nfl',
      title: vs,
      slugBase: `${league.key}-${home.abbreviation}-${away.abbreviation}-${day}`.toLowerCase(),
      description: `${vs}, ${league.abbreviation.toUpperCase()}, scheduled for ${new Date(kickoff).toISOString()}. ` +
        `Regulation time of ${rules.fullMinutes} minutes plus stoppage time counts.`,
      tags: leagueTags(league),
      startDate: kickoff - PRE_MATCH_MS,
      endDate: kickoff + duration,
      exclusive: false,
      slot,
      markets,
      game,
    });
  }

  /** A season outright (sports-tagged, no game). */
  outright(league: League, title: string, options: readonly string[], slot: string): SimEvent {
    const now = this.nowMs();
    return this.event({
      family: league.sport === 'soccer' ? 'soccer' : league.key === 'nba' ? 'nba' : 'nfl',
      title,
      slugBase: slugify(title),
      description: `This market resolves to the winner of the ${title.replace(/ Winner$| Champion$/, '')}.`,
      tags: leagueTags(league).filter((t) => t.slug !== 'games'),
      startDate: now,
      endDate: now + this.rng.int(60, 200) * DAY_MS,
      exclusive: true,
      slot,
      markets: this.exclusiveOptions(options, (o) => `Will ${o} win the ${title.replace(/ Winner$| Champion$/, '')}?`),
    });
  }

  private exclusiveOptions(options: readonly string[], question: (option: string) => string): MarketSpec[] {
    const weights = options.map(() => this.rng.range(0.15, 1) ** 2);
    const sum = weights.reduce((a, b) => a + b, 0);
    return options.map((option, i) => ({
      question: question(option),
      groupItemTitle: option,
      outcomes: ['Yes', 'No'],
      fair: (weights[i] ?? 0) / sum,
      role: { kind: 'generic' },
    }));
  }

  /** A short crypto "Up or Down" window. */
  upDown(coin: Coin, spot: number, start: number, end: number, slot: string): SimEvent {
    const fmt = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    const title = `${coin.name} Up or Down - ${dayLabel(start)}, ${fmt(start)}-${fmt(end)} UTC`;
    return this.event({
      family: 'crypto',
      title,
      slugBase: `${coin.symbol.toLowerCase()}-updown-5m-${Math.floor(start / 1000)}`,
      description: `Resolves "Up" if the ${coin.symbol}/USD price at the end of the window is greater than or equal to the price at its start, "Down" otherwise.`,
      tags: tagsFor('crypto', coin.key, 'up-or-down'),
      startDate: start,
      endDate: end,
      exclusive: false,
      slot,
      coin,
      upDown: { openPrice: spot, start, end },
      markets: [{ question: title, groupItemTitle: '', outcomes: ['Up', 'Down'], fair: 0.5, role: { kind: 'updown' } }],
    });
  }

  /** A ladder of "above $K" markets on a date a few days out. */
  aboveLadder(coin: Coin, spot: number, slot: string): SimEvent {
    const now = this.nowMs();
    const end = now + this.rng.int(2, 9) * DAY_MS;
    const base = Math.round(spot / coin.step) * coin.step;
    const strikes = [-2, -1, 0, 1, 2].map((k) => Math.round((base + k * coin.step) * 100) / 100);
    const title = `${coin.name} above ___ on ${dayLabel(end)}?`;
    return this.event({
      family: 'crypto',
      title,
      slugBase: slugify(`${coin.name} above on ${dayLabel(end)}`),
      description: `Each market resolves Yes if the ${coin.symbol}/USDT close on ${isoDay(end)} is above its price.`,
      tags: tagsFor('crypto', coin.key, 'crypto-prices'),
      startDate: now,
      endDate: end,
      exclusive: false,
      slot,
      coin,
      markets: strikes.map((strike) => ({
        question: `Will the price of ${coin.name} be above ${money(strike)} on ${dayLabel(end)}?`,
        groupItemTitle: money(strike),
        outcomes: ['Yes', 'No'],
        fair: 0.5,
        role: { kind: 'above', strike },
      })),
    });
  }

  /**
   * A single price-level market WITHOUT tags, as the real catalog sometimes serves: the title alone
   * ("Bitcoin above $100k on Friday?") has to classify it.
   */
  untaggedAbove(coin: Coin, strike: number, label: string, slot: string): SimEvent {
    const now = this.nowMs();
    const title = `${coin.name} above ${label} on Friday?`;
    return this.event({
      family: 'crypto',
      title,
      slugBase: slugify(title),
      description: `Resolves Yes if the ${coin.symbol}/USDT price is above ${money(strike)} at noon ET on Friday.`,
      tags: null,
      startDate: now,
      endDate: now + this.rng.int(2, 5) * DAY_MS,
      exclusive: false,
      slot,
      coin,
      markets: [{ question: title, groupItemTitle: '', outcomes: ['Yes', 'No'], fair: 0.5, role: { kind: 'above', strike } }],
    });
  }

  /** The next politics/economy/tech/culture event, cycling through that family's templates. */
  generic(family: GenericFamily, slot: string): SimEvent {
    const templates = GENERIC_TEMPLATES[family];
    const n = this.cursors[family]++;
    const template = templates[n % templates.length];
    if (!template) throw new Error(`no template for ${family}`);
    const now = this.nowMs();
    const end = now + Math.round(template.days * this.rng.range(0.8, 1.2)) * DAY_MS;
    const fill = (text: string, option = '') =>
      text
        .replaceAll('{when}', HORIZONS[(n + this.eventSeq) % HORIZONS.length] ?? 'in 2026')
        .replaceAll('{month}', MONTHS[new Date(end).getUTCMonth()] ?? 'December')
        .replaceAll('{option}', option);
    const title = fill(template.title);
    const markets: MarketSpec[] = template.options
      ? this.exclusiveOptions(template.options, (o) => fill(template.question ?? '{option}?', o))
      : [{ question: title, groupItemTitle: '', outcomes: ['Yes', 'No'], fair: this.rng.range(0.04, 0.9), role: { kind: 'generic' } }];
    return this.event({
      family,
      title,
      slugBase: slugify(title),
      description: `This market resolves according to the outcome of "${title}" as reported by credible sources before ${isoDay(end)}.`,
      tags: tagsFor(...template.tags),
      startDate: now,
      endDate: end,
      exclusive: Boolean(template.options),
      slot,
      markets,
    });
  }
}

export function coin(key: string): Coin {
  const found = COINS.find((c) => c.key === key);
  if (!found) throw new Error(`unknown coin ${key}`);
  return found;
}
