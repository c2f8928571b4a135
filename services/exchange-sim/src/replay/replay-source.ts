import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { downsample, resolveRange } from '../history-range.js';
import type {
  BookMessage, ExchangeSource, HistoryPoint, HistoryQuery, LevelInput, MarketResolvedMessage, Outlets,
  ResolveResult, SportsFrame,
} from '../protocol.js';
import { historyFileSchema, parseStringArray, type FeedLine, type ReplayEvent, type Scenario } from './scenario.js';

const bookFrameSchema = z.looseObject({
  event_type: z.literal('book'),
  asset_id: z.string(),
  market: z.string().default(''),
  bids: z.array(z.object({ price: z.string(), size: z.string() })),
  asks: z.array(z.object({ price: z.string(), size: z.string() })),
  timestamp: z.string().default(''),
  hash: z.string().default(''),
});

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Serves a scenario folder and replays its feed: frame i goes out at `at_i / speed` ms after the
 * start (or the last restart), market frames exactly as recorded (filtered per subscription only when
 * a plain object carries an asset_id), sports frames to every sports socket.
 */
export class ReplayExchange implements ExchangeSource {
  readonly mode = 'replay' as const;
  private readonly books = new Map<string, BookMessage>();
  private readonly historyCache = new Map<string, HistoryPoint[]>();
  private outlets: Outlets | null = null;
  private cursor = 0;
  /** Next entry of `scenario.catalogUpdates` to apply. */
  private updateCursor = 0;
  private startedAt = 0;
  private pausedAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly hidden = new Set<string>();
  private quietTimer: NodeJS.Timeout | null = null;
  private quietUntil = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly speed: number,
    paused = false,
  ) {
    if (paused) this.pausedAt = performance.now();
  }

  get tick(): number {
    return this.cursor;
  }

  get paused(): boolean {
    return this.pausedAt !== null;
  }

  start(outlets: Outlets): void {
    this.outlets = outlets;
    this.restart();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.quietTimer = null;
    this.timer = null;
    this.outlets = null;
  }

  restart(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.cursor = 0;
    // Catalog updates already applied stay applied (a closed market is not reopened); they are
    // applied again, idempotently, when their time comes round.
    this.updateCursor = 0;
    this.books.clear();
    this.startedAt = performance.now();
    if (this.pausedAt !== null) this.pausedAt = this.startedAt;
    this.schedule();
  }

  pause(): void {
    if (this.pausedAt !== null) return;
    this.pausedAt = performance.now();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  resume(): void {
    if (this.pausedAt === null) return;
    this.startedAt += performance.now() - this.pausedAt;
    this.pausedAt = null;
    this.schedule();
  }

  step(frames: number): void {
    const until = Math.min(this.scenario.feed.length, this.cursor + frames);
    while (this.cursor < until) this.dispatchNext();
  }

  private schedule(): void {
    if (this.pausedAt !== null || !this.outlets) return;
    const nextAt = Math.min(
      this.scenario.feed[this.cursor]?.at ?? Number.POSITIVE_INFINITY,
      this.scenario.catalogUpdates[this.updateCursor]?.at ?? Number.POSITIVE_INFINITY,
    );
    if (nextAt === Number.POSITIVE_INFINITY) return;
    const delay = nextAt / this.speed - (performance.now() - this.startedAt);
    this.timer = setTimeout(() => this.pump(), Math.max(0, delay));
  }

  private pump(): void {
    this.timer = null;
    const elapsed = performance.now() - this.startedAt;
    // Catalog first: a frame and a catalog change at the same `at` see the changed catalog.
    for (let u = this.scenario.catalogUpdates[this.updateCursor]; u && u.at / this.speed <= elapsed; u = this.scenario.catalogUpdates[this.updateCursor]) {
      this.updateCursor++;
      this.applyCatalogUpdate(u.event);
    }
    for (let next = this.scenario.feed[this.cursor]; next && next.at / this.speed <= elapsed; next = this.scenario.feed[this.cursor]) {
      this.dispatchNext();
    }
    this.schedule();
  }

  private applyCatalogUpdate(event: ReplayEvent): void {
    const catalog = this.scenario.catalog;
    const i = catalog.findIndex((e) => String(e.id) === String(event.id));
    // A copy: the scenario's own update stays pristine for a restart.
    const copy = structuredClone(event);
    if (i >= 0) catalog[i] = copy;
    else catalog.push(copy);
  }

  private dispatchNext(): void {
    const line: FeedLine | undefined = this.scenario.feed[this.cursor++];
    if (!line || !this.outlets) return;
    const frame = line.frame;
    if (line.channel === 'sports') {
      this.outlets.sports(frame);
      return;
    }
    for (const element of Array.isArray(frame) ? frame : [frame]) {
      const book = bookFrameSchema.safeParse(element);
      if (book.success) this.books.set(book.data.asset_id, book.data as BookMessage);
    }
    const assetId = isPlainObject(frame) && typeof frame.asset_id === 'string' ? frame.asset_id : null;
    this.outlets.marketRaw(frame, assetId);
  }

  listing() {
    return this.scenario.catalog.map((e) => ({ fields: e, render: () => e }));
  }

  unlisted(): ReadonlySet<string> {
    return this.hidden;
  }

  vanish(eventId: string): boolean {
    if (!this.scenario.catalog.some((e) => String(e.id) === eventId)) return false;
    this.hidden.add(eventId);
    return true;
  }

  /** The feed waits for `ms` (its timeline shifts by as much), unless it was paused already. */
  quiet(ms: number): number {
    this.quietUntil = Math.max(this.quietUntil, Date.now() + ms);
    if (this.quietTimer === null && this.pausedAt === null) {
      this.pause();
      const wake = () => {
        const left = this.quietUntil - Date.now();
        if (left > 0) {
          this.quietTimer = setTimeout(wake, left);
          return;
        }
        this.quietTimer = null;
        this.resume();
      };
      this.quietTimer = setTimeout(wake, ms);
    }
    return this.quietUntil;
  }

  sports(): unknown[] {
    return this.scenario.sports;
  }

  tags(): unknown[] {
    const seen = new Map<string, unknown>();
    for (const e of this.scenario.catalog) for (const t of e.tags ?? []) seen.set(String(t.id), t);
    return [...seen.values()];
  }

  history(tokenId: string, query: HistoryQuery): HistoryPoint[] | undefined {
    // Token ids name files: refuse anything that could leave the history folder.
    if (!/^[A-Za-z0-9_-]+$/.test(tokenId)) return [];
    let points = this.historyCache.get(tokenId);
    if (!points) {
      const path = join(this.scenario.folder, 'history', `${tokenId}.json`);
      points = existsSync(path) ? historyFileSchema.parse(JSON.parse(readFileSync(path, 'utf8'))).history : [];
      points.sort((a, b) => a.t - b.t);
      this.historyCache.set(tokenId, points);
    }
    const first = points[0];
    const last = points[points.length - 1];
    if (!first || !last) return [];
    return downsample(points, resolveRange(query, last.t, first.t));
  }

  private conditionOf(tokenId: string): string {
    for (const e of this.scenario.catalog) {
      for (const m of e.markets) if (parseStringArray(m.clobTokenIds).includes(tokenId)) return m.conditionId ?? '';
    }
    return '';
  }

  book(tokenId: string): BookMessage {
    // Before the feed recorded a book for it: an empty one with no time (the exchange's `""`), not
    // the wall clock, which would be newer than every recorded book to come and make a client that
    // keeps only fresh books (docs/protocol.md §1) refuse them.
    return this.books.get(tokenId) ?? {
      event_type: 'book', asset_id: tokenId, market: this.conditionOf(tokenId), bids: [], asks: [],
      timestamp: '', hash: '',
    };
  }

  setBook(tokenId: string, bids: LevelInput[], asks: LevelInput[]): BookMessage[] {
    const level = (l: LevelInput) => ({ price: String(l.price), size: String(l.size) });
    const book: BookMessage = {
      event_type: 'book', asset_id: tokenId, market: this.conditionOf(tokenId),
      bids: [...bids].sort((a, b) => a.price - b.price).map(level),
      asks: [...asks].sort((a, b) => b.price - a.price).map(level),
      timestamp: String(Date.now()), hash: `${tokenId.slice(0, 8)}-${Date.now()}`,
    };
    this.books.set(tokenId, book);
    this.outlets?.market([book]);
    return [book];
  }

  resolve(marketId: string, winningOutcomeIndex: number | null, announce: boolean): ResolveResult {
    for (const event of this.scenario.catalog) {
      const market = event.markets.find((m) => String(m.id) === marketId || m.conditionId === marketId);
      if (!market) continue;
      if (market.closed === true) return { ok: false, status: 409, error: `market ${marketId} is already resolved` };
      const tokens = parseStringArray(market.clobTokenIds);
      const outcomes = parseStringArray(market.outcomes);
      const winner = winningOutcomeIndex;
      const prices = tokens.map((_, i) => (winner === null ? '0.5' : i === winner ? '1' : '0'));
      Object.assign(market, {
        closed: true, acceptingOrders: false, umaResolutionStatus: 'resolved', outcomePrices: JSON.stringify(prices),
      });
      if (event.markets.every((m) => m.closed === true)) event.closed = true;
      if (announce && this.outlets) {
        const message: MarketResolvedMessage = {
          event_type: 'market_resolved', id: String(market.id), market: market.conditionId ?? '', assets_ids: tokens,
          winning_asset_id: winner === null ? '' : (tokens[winner] ?? ''),
          winning_outcome: winner === null ? '' : (outcomes[winner] ?? ''),
          timestamp: String(Date.now()),
        };
        this.outlets.market([message]);
      }
      return { ok: true, market };
    }
    return { ok: false, status: 404, error: `no market ${marketId}` };
  }

  activeGames(): SportsFrame[] {
    return [];
  }
}
