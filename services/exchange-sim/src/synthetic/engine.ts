import { resolveRange } from '../history-range.js';
import type {
  BookMessage, ExchangeSource, HistoryPoint, HistoryQuery, LevelInput, MarketMessage, Outlets,
  ResolveResult, SportsFrame,
} from '../protocol.js';
import { ALL_TAGS, LEAGUES, leagueTags } from './catalog-data.js';
import { moveMarket } from './book-moves.js';
import { advanceGame, gameFairs, normCdf, RESOLVE_DELAY_MS, sportsFrame } from './games.js';
import { forgetSeries, series } from './history.js';
import type { SimEvent, SimMarket } from './model.js';
import { Rng } from './prng.js';
import { bookMessage, newMarketMessages, listFields, renderEvent, seriesKey, seriesSpec } from './render.js';
import { exclusiveWinner, naturalWinner, resolveMarket } from './resolution.js';
import { marketFair, SPOT_VOL, World } from './world.js';

/** Real milliseconds between ticks; each tick is TICK_MS × speed of simulation time. */
export const TICK_MS = 150;
/** History reaches this far before the simulator's start (at least a month for every token). */
const HISTORY_DAYS = 35;
/** Resolved markets answer nothing at finer fidelity than this (docs/protocol.md §4: "ask coarser"). */
const RESOLVED_MIN_FIDELITY = 10;
const VOID_RATE = 1 / 15;
const ANNOUNCE_RATE = 0.7;

export interface SyntheticOptions {
  seed: number;
  speed: number;
  /** Simulation start (ms); defaults to now. Fixing it makes two runs' catalogs byte-identical. */
  startTime?: number;
  /** Start with the random walk stopped (tests drive it with step/resume). */
  paused?: boolean;
  /**
   * Quiet spells as real sockets have them (docs/protocol.md §1): every `everyMs` of wall-clock time the
   * books stop moving for `forMs` (sockets stay open and answer PONG). Default every 8 min for 60 s;
   * `everyMs: 0` turns them off.
   */
  quietSpells?: { everyMs: number; forMs: number };
  /** Open events to keep at least: the designed catalog, then generic questions up to this many. */
  openEvents?: number;
  /**
   * 0 (default): ids as the seed always gave them. Otherwise this run's epoch: ids, slugs and token
   * ids differ from every other run's, so a restart never gives an id to a different event.
   */
  idEpoch?: number;
}

/** One closed event in this many drops out of the catalog's list queries (docs/protocol.md §3 quirk). */
const VANISH_EVERY = 3;

const clamp = (p: number) => Math.min(0.98, Math.max(0.02, p));

/**
 * The seeded synthetic exchange: a World of events, advanced tick by tick. Simulation time is
 * `start + tick × TICK_MS × speed`, so the same seed gives the same sequence whatever the timer jitter.
 */
export class SyntheticExchange implements ExchangeSource {
  readonly mode = 'synthetic' as const;
  private readonly world: World;
  private readonly moves: Rng;
  private readonly games: Rng;
  private readonly outcomes: Rng;
  private readonly start0: number;
  private tickNo = 0;
  private timer: NodeJS.Timeout | null = null;
  private outlets: Outlets | null = null;
  private isPaused = false;
  private readonly hidden = new Set<string>();
  /** Wall-clock ms until which the books do not move. */
  private quietUntil = 0;
  private nextSpellAt = 0;
  private closedCount = 0;

  constructor(private readonly opts: SyntheticOptions) {
    const root = new Rng(opts.seed);
    this.start0 = opts.startTime ?? Date.now();
    const epoch = opts.idEpoch ?? 0;
    this.world = new World(root.fork(epoch > 0 ? `catalog:${epoch}` : 'catalog'), () => this.now(), epoch);
    this.moves = root.fork('moves');
    this.games = root.fork('games');
    this.outcomes = root.fork('outcomes');
    this.world.build(opts.openEvents ?? 0);
    this.isPaused = opts.paused ?? false;
    const spells = this.opts.quietSpells ?? { everyMs: 8 * 60_000, forMs: 60_000 };
    this.nextSpellAt = spells.everyMs > 0 ? Date.now() + spells.everyMs : Number.POSITIVE_INFINITY;
  }

  unlisted(): ReadonlySet<string> {
    return this.hidden;
  }

  vanish(eventId: string): boolean {
    if (!this.world.events.some((e) => e.id === eventId)) return false;
    this.hidden.add(eventId);
    return true;
  }

  quiet(ms: number): number {
    this.quietUntil = Math.max(this.quietUntil, Date.now() + ms);
    return this.quietUntil;
  }

  /** In a quiet spell (a scheduled one starts here): no book moves this tick. */
  private isQuiet(): boolean {
    const wall = Date.now();
    const spells = this.opts.quietSpells ?? { everyMs: 8 * 60_000, forMs: 60_000 };
    if (wall >= this.nextSpellAt) {
      this.quiet(spells.forMs);
      this.nextSpellAt = wall + spells.everyMs;
    }
    return wall < this.quietUntil;
  }

  get tick(): number {
    return this.tickNo;
  }

  get paused(): boolean {
    return this.isPaused;
  }

  /** Simulation time, ms. */
  now(): number {
    return this.start0 + this.tickNo * TICK_MS * this.opts.speed;
  }

  start(outlets: Outlets): void {
    this.outlets = outlets;
    this.timer = setInterval(() => {
      if (!this.isPaused) this.step(1);
    }, TICK_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  pause(): void {
    this.isPaused = true;
  }

  resume(): void {
    this.isPaused = false;
  }

  step(ticks: number): void {
    for (let i = 0; i < ticks; i++) this.tickOnce();
  }

  private publish(messages: MarketMessage[]): void {
    if (messages.length && this.outlets) this.outlets.market(messages);
  }

  private tickOnce(): void {
    this.tickNo += 1;
    const now = this.now();
    const stamp = String(Date.now());
    const dt = (TICK_MS * this.opts.speed) / 1000;
    const out: MarketMessage[] = [];
    this.world.walkSpots(dt);

    for (const event of this.world.events.filter((e) => !e.closed)) {
      this.advanceEvent(event, now, stamp, out);
    }

    if (this.isQuiet()) {
      this.publish(out);
      return;
    }
    const open = this.openMarkets();
    const dynamic = open.filter((m) => m.role.kind !== 'generic');
    const count = 1 + (this.moves.chance(0.5) ? 1 : 0) + (this.moves.chance(0.2) ? 1 : 0);
    for (let i = 0; i < count && open.length; i++) {
      const pool = dynamic.length && this.moves.chance(0.5) ? dynamic : open;
      const market = this.moves.pick(pool);
      if (market.role.kind === 'generic') {
        // Non-sport markets random-walk on the logit scale.
        const x = Math.log(market.fair / (1 - market.fair)) + 0.08 * this.moves.normal();
        market.fair = clamp(1 / (1 + Math.exp(-x)));
      }
      out.push(...moveMarket(market, { rng: this.moves, timestamp: stamp }));
    }
    // A goal moves fair prices far from the books: sweep those at once, as the real book reprices.
    let sweeps = 0;
    for (const market of dynamic) {
      const bid = market.book.bestBid();
      const ask = market.book.bestAsk();
      if (bid !== null && ask !== null && Math.abs((bid + ask) / 2 - market.fair * 1000) <= 60) continue;
      if (++sweeps > 6) break;
      out.push(...moveMarket(market, { rng: this.moves, timestamp: stamp }));
    }
    this.publish(out);
  }

  private advanceEvent(event: SimEvent, now: number, stamp: string, out: MarketMessage[]): void {
    const g = event.game;
    if (g) {
      if (advanceGame(g, now, this.games)) this.outlets?.sports(sportsFrame(g, now));
      const fairs = gameFairs(g);
      for (const m of event.markets) if (!m.closed) m.fair = marketFair(m, fairs);
      if (g.phase === 'ended' && now >= (g.endedAt ?? now) + RESOLVE_DELAY_MS) this.autoResolve(event, now, stamp, out);
      return;
    }
    const up = event.upDown;
    if (up) {
      const left = Math.max(1, (up.end - now) / 1000);
      const m = event.markets[0];
      if (m) m.fair = clamp(normCdf(Math.log(this.world.spot[up.coin] / up.openPrice) / (SPOT_VOL * Math.sqrt(left))));
      if (now >= up.end) this.autoResolve(event, now, stamp, out);
      return;
    }
    if (event.coin) {
      const left = Math.max(1, (event.endDate - now) / 1000);
      const spot = this.world.spot[event.coin];
      for (const m of event.markets) {
        if (m.role.kind === 'above') m.fair = clamp(normCdf(Math.log(spot / m.role.strike) / (SPOT_VOL * Math.sqrt(left))));
      }
    }
    if (now >= event.endDate) this.autoResolve(event, now, stamp, out);
  }

  /** End-of-life resolution: about one in fifteen is void, and some are not announced on the ws. */
  private autoResolve(event: SimEvent, now: number, stamp: string, out: MarketMessage[]): void {
    const rng = this.outcomes;
    const voided = rng.chance(VOID_RATE);
    const announce = !voided && rng.chance(ANNOUNCE_RATE);
    const exclusive = event.exclusive ? exclusiveWinner(event, rng) : undefined;
    for (const m of event.markets) {
      if (m.closed) continue;
      const winner = voided ? null : exclusive ? (m === exclusive ? 0 : 1) : naturalWinner(event, m, this.world, rng);
      const message = resolveMarket(m, winner, announce, now, stamp);
      if (message) out.push(message);
    }
    this.closeIfDone(event, now, stamp, out);
  }

  private closeIfDone(event: SimEvent, now: number, stamp: string, out: MarketMessage[]): void {
    if (event.closed || event.markets.some((m) => !m.closed)) return;
    event.closed = true;
    event.closedAt = now;
    // Some closed events vanish from the list queries; `GET /events/:id` still answers them.
    if (++this.closedCount % VANISH_EVERY === 0) this.hidden.add(event.id);
    if (event.game?.phase === 'ended') event.game.period = event.game.period || 'FT';
    // Keep the catalog full: the event's slot opens its next event, announced as new markets.
    const next = this.world.replacement(event);
    // What is kept of an event that left the world goes with it: the simulator runs for days.
    for (const gone of this.world.add(next)) {
      this.hidden.delete(gone.id);
      for (const m of gone.markets) forgetSeries(seriesKey(this.opts.seed, m.id));
    }
    out.push(...newMarketMessages(next, stamp));
  }

  private openMarkets(): SimMarket[] {
    const out: SimMarket[] = [];
    for (const e of this.world.events) if (!e.closed) for (const m of e.markets) if (!m.closed) out.push(m);
    return out;
  }

  listing() {
    const now = this.now();
    return this.world.events.map((e) => ({ fields: listFields(e), render: () => renderEvent(e, this.opts.seed, now) }));
  }

  sports(): unknown[] {
    return LEAGUES.map((l, i) => ({
      id: i + 1,
      sport: l.abbreviation,
      image: `https://polymarket-upload.s3.us-east-2.amazonaws.com/${l.key}.png`,
      resolution: `https://www.${l.key}.com/`,
      ordering: l.sport === 'soccer' ? 'home' : 'away',
      tags: leagueTags(l).map((t) => t.id).join(','),
      series: l.series,
    }));
  }

  tags(): unknown[] {
    return ALL_TAGS.map((t) => ({ ...t }));
  }

  history(tokenId: string, query: HistoryQuery): HistoryPoint[] | undefined {
    const ref = this.world.byToken.get(tokenId);
    if (!ref) return undefined;
    const m = ref.market;
    const spec = seriesSpec(this.opts.seed, m, this.now());
    const earliest = Math.floor((Math.min(this.start0, m.createdAt) - HISTORY_DAYS * 86_400_000) / 1000);
    const range = resolveRange(query, spec.endSec, earliest);
    if (m.closed && range.fidelity < RESOLVED_MIN_FIDELITY) return [];
    return series(spec, range, ref.outcome === 1);
  }

  book(tokenId: string): BookMessage | undefined {
    const ref = this.world.byToken.get(tokenId);
    return ref ? bookMessage(ref.market, ref.outcome, String(Date.now())) : undefined;
  }

  setBook(tokenId: string, bids: LevelInput[], asks: LevelInput[]): BookMessage[] | undefined {
    const ref = this.world.byToken.get(tokenId);
    if (!ref) return undefined;
    const { market, outcome } = ref;
    const milli = (p: number) => Math.round(p * 1000);
    const size = (s: number) => Math.round(s * 100);
    // The second token's book is stored as the mirror of the first's.
    const yesBids = outcome === 0 ? bids : asks.map((l) => ({ price: 1 - l.price, size: l.size }));
    const yesAsks = outcome === 0 ? asks : bids.map((l) => ({ price: 1 - l.price, size: l.size }));
    const book = market.book;
    book.clear();
    for (const l of yesBids) if (size(l.size) > 0) book.bids.set(milli(l.price), size(l.size));
    for (const l of yesAsks) if (size(l.size) > 0) book.asks.set(milli(l.price), size(l.size));
    book.tick = [...book.bids.keys(), ...book.asks.keys()].every((p) => p % 10 === 0) ? 10 : 1;
    const bb = book.bestBid();
    const ba = book.bestAsk();
    // So that a resumed random walk starts from the forced prices instead of sweeping them away.
    if (bb !== null && ba !== null) market.fair = Math.min(0.995, Math.max(0.005, (bb + ba) / 2000));
    const stamp = String(Date.now());
    const books = [bookMessage(market, outcome, stamp), bookMessage(market, outcome === 0 ? 1 : 0, stamp)];
    this.publish(books);
    return books;
  }

  resolve(marketId: string, winningOutcomeIndex: number | null, announce: boolean): ResolveResult {
    const ref = this.world.byMarketId.get(marketId) ??
      [...this.world.byMarketId.values()].find((r) => r.market.conditionId === marketId);
    if (!ref) return { ok: false, status: 404, error: `no market ${marketId}` };
    if (ref.market.closed) return { ok: false, status: 409, error: `market ${marketId} is already resolved` };
    const now = this.now();
    const stamp = String(Date.now());
    const winner = winningOutcomeIndex === null ? null : winningOutcomeIndex === 0 ? 0 : 1;
    const out: MarketMessage[] = [];
    const message = resolveMarket(ref.market, winner, announce, now, stamp);
    if (message) out.push(message);
    this.closeIfDone(ref.event, now, stamp, out);
    this.publish(out);
    const rendered = renderEvent(ref.event, this.opts.seed, now);
    return { ok: true, market: rendered.markets.find((m) => m.id === ref.market.id) };
  }

  activeGames(): SportsFrame[] {
    const now = this.now();
    const frames: SportsFrame[] = [];
    for (const e of this.world.events) {
      if (!e.closed && e.game?.phase === 'live') frames.push(sportsFrame(e.game, now));
    }
    return frames;
  }
}
