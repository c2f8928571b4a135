import type { OutcomeRef } from './catalog-db.js';

/**
 * The outcomes the live feed knows, in memory: token → market, event, outcome index, catalog price.
 * Loaded from Postgres at start and kept current by every catalog page, so the hot path (one
 * lookup per book message) never queries the database.
 */
export class OutcomeDirectory {
  private readonly byToken = new Map<string, OutcomeRef>();
  private readonly byMarket = new Map<string, OutcomeRef[]>();

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

  /** Known and open: the live feed holds exactly these tokens subscribed once it started. */
  isOpen(tokenId: string): boolean {
    const o = this.byToken.get(tokenId);
    return o !== undefined && !o.closed;
  }

  openTokens(): string[] {
    return [...this.byToken.values()].filter((o) => !o.closed).map((o) => o.tokenId);
  }
}
