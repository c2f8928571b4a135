import type { OutcomeRef } from './catalog-db.js';

/**
 * The outcomes the live feed knows, in memory: token → market, event, outcome index, catalog price.
 * Loaded from Postgres at start and kept current by every catalog page, so the hot path (one
 * lookup per book message) never queries the database. A closed outcome is kept a while (a late
 * market_resolved frame still names its market) and then forgotten (`forgetClosed`): the exchange
 * opens thousands of markets a day, and a directory of every one ever seen grows for as long as the
 * process runs.
 */
export class OutcomeDirectory {
  private readonly byToken = new Map<string, OutcomeRef>();
  private readonly byMarket = new Map<string, OutcomeRef[]>();
  /** Closed tokens, and since when (this process's clock: when it first saw them closed). */
  private readonly closedSince = new Map<string, number>();

  constructor(private readonly clock: () => number = Date.now) {}

  get size(): number {
    return this.byToken.size;
  }

  get(tokenId: string): OutcomeRef | undefined {
    return this.byToken.get(tokenId);
  }

  /** The market's outcomes in outcome order. */
  market(marketId: string): OutcomeRef[] {
    return this.byMarket.get(marketId) ?? [];
  }

  /** Add or replace one outcome; says whether the token is new and whether its catalog price or open state moved. */
  upsert(ref: OutcomeRef): { isNew: boolean; priceChanged: boolean; closedChanged: boolean } {
    const prev = this.byToken.get(ref.tokenId);
    this.byToken.set(ref.tokenId, ref);
    if (!ref.closed) this.closedSince.delete(ref.tokenId);
    else if (!this.closedSince.has(ref.tokenId)) this.closedSince.set(ref.tokenId, this.clock());
    const list = (this.byMarket.get(ref.marketId) ?? []).filter((o) => o.tokenId !== ref.tokenId && o.outcomeIndex !== ref.outcomeIndex);
    list.push(ref);
    list.sort((a, b) => a.outcomeIndex - b.outcomeIndex);
    this.byMarket.set(ref.marketId, list);
    return {
      isNew: prev === undefined,
      priceChanged: prev !== undefined && prev.catalogPrice !== ref.catalogPrice,
      closedChanged: prev !== undefined && prev.closed !== ref.closed,
    };
  }

  /** Mark every open outcome of an event closed (the catalog dropped it); returns their tokens. */
  closeEvent(eventId: string): string[] {
    const tokens: string[] = [];
    for (const o of this.byToken.values()) {
      if (o.eventId !== eventId || o.closed) continue;
      this.upsert({ ...o, closed: true });
      tokens.push(o.tokenId);
    }
    return tokens;
  }

  /**
   * Forgets the outcomes closed at or before `at` (their markets' lists too); returns how many. A
   * catalog page that shows one again brings it back, closed, for another while.
   */
  forgetClosed(at: number): number {
    let forgotten = 0;
    for (const [tokenId, since] of this.closedSince) {
      if (since > at) continue;
      this.closedSince.delete(tokenId);
      const ref = this.byToken.get(tokenId);
      this.byToken.delete(tokenId);
      forgotten++;
      if (ref === undefined) continue;
      const rest = (this.byMarket.get(ref.marketId) ?? []).filter((o) => o.tokenId !== tokenId);
      if (rest.length > 0) this.byMarket.set(ref.marketId, rest);
      else this.byMarket.delete(ref.marketId);
    }
    return forgotten;
  }

  /** Known and open: the live feed holds exactly these tokens subscribed once it started. */
  isOpen(tokenId: string): boolean {
    const o = this.byToken.get(tokenId);
    return o !== undefined && !o.closed;
  }

  openTokens(): string[] {
    return [...this.byToken.values()].filter((o) => !o.closed).map((o) => o.tokenId);
  }
}
