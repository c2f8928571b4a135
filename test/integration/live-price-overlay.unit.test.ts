import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshotEtag } from '@pm/shared/redis';
import { priceMessage, type StreamEntry } from '@pm/shared/stream';
import { buildEventSnapshot } from '../../services/worker/src/market-snapshots/payloads.js';
import type { CatalogEvent, CatalogMarket } from '../../services/worker/src/market-snapshots/model.js';
import { createLivePrices, type LivePrices } from '../../services/api/src/snapshots/live-prices.js';
import { eventSnapshotSchema } from '../../services/api/src/snapshots/snapshot-schemas.js';

/**
 * The API's live-price overlay against the worker's own page builder: an event
 * page with live prices laid over it is, byte for byte, the page the worker builds from those
 * chances (chance, the five odds strings, change_24h), so its version (ETag) is the same too; a
 * settled market keeps its final chances whatever the book says.
 */

const WEB = 'https://web.example';

function market(id: string, position: number, over: Partial<CatalogMarket> = {}): CatalogMarket {
  return {
    id,
    eventId: 'e1',
    position,
    question: `Will ${id} happen?`,
    label: '',
    kind: null,
    closesAt: new Date('2027-01-01T00:00:00Z'),
    closed: false,
    oneDayPriceChange: null,
    resolution: null,
    outcomes: [
      { index: 0, name: 'Yes', tokenId: `${id}-0`, catalogPrice: 0.4, finalChance: null },
      { index: 1, name: 'No', tokenId: `${id}-1`, catalogPrice: 0.6, finalChance: null },
    ],
    ...over,
  };
}

const catalogEvent: CatalogEvent = {
  id: 'e1',
  slug: 'who-wins',
  title: 'Who wins?',
  category: 'Politics',
  league: null,
  closesAt: null,
  volume: 1234.5,
  volume24h: 10,
  closed: false,
  teams: [],
  markets: [
    // change_24h follows the chance (history reaches back 24 h).
    market('m-hist', 0),
    // change_24h is the catalog's figure, whatever the chance.
    market('m-catalog', 1, { oneDayPriceChange: -0.0312 }),
    // Settled: final chances, never the book's.
    market('m-settled', 2, {
      closed: true,
      resolution: { outcome: 0, at: new Date('2026-11-01T00:00:00Z') },
      outcomes: [
        { index: 0, name: 'Yes', tokenId: 'm-settled-0', catalogPrice: 0.97, finalChance: 1 },
        { index: 1, name: 'No', tokenId: 'm-settled-1', catalogPrice: 0.03, finalChance: 0 },
      ],
    }),
    // Three outcomes, the last one moves.
    market('m-three', 3, {
      outcomes: [
        { index: 0, name: 'A', tokenId: 'm-three-0', catalogPrice: 0.2, finalChance: null },
        { index: 1, name: 'B', tokenId: 'm-three-1', catalogPrice: 0.3, finalChance: null },
        { index: 2, name: 'C', tokenId: 'm-three-2', catalogPrice: 0.5, finalChance: null },
      ],
    }),
  ],
};

const dayAgo = new Map([['m-hist-0', 0.4123]]);
const refOf = (token: string) => {
  const [marketId, index] = [token.slice(0, token.lastIndexOf('-')), Number(token.slice(token.lastIndexOf('-') + 1))];
  const m = catalogEvent.markets.find((x) => x.id === marketId);
  return { eventSlug: catalogEvent.slug, marketId, outcomeIndex: index, name: m?.outcomes[index]?.name ?? '' };
};

/** The worker's page body for these chances. */
function workerBody(chances: ReadonlyMap<string, number>): string {
  return JSON.stringify(buildEventSnapshot(catalogEvent, { chances, splits: new Map(), game: undefined, webUrl: WEB, dayAgo }));
}

let seq = 0;
const entries = (moves: ReadonlyMap<string, number>): StreamEntry[] =>
  [...moves].map(([token, chance]) => {
    const m = priceMessage(refOf(token), chance, Date.now());
    return { id: `${Date.now()}-${seq++}`, topic: m.topic, event: catalogEvent.slug, market: refOf(token).marketId, data: JSON.stringify(m.data) };
  });

let now = 1_000_000;
let live: LivePrices;
const logger = pino({ level: 'silent' });

afterEach(() => live?.stop());

describe('the live-price overlay', () => {
  it('shows exactly the page the worker builds from the live chances, with the same ETag', () => {
    live = createLivePrices({ clock: () => now, logger, holdMs: 10_000 });
    const before = new Map([
      ['m-hist-0', 0.5],
      ['m-catalog-0', 0.25],
      ['m-three-2', 0.5],
    ]);
    const held = eventSnapshotSchema.parse(JSON.parse(workerBody(before)));
    // What the API parsed is the worker's body, key for key: its version is the worker's ETag.
    expect(snapshotEtag(JSON.stringify(held))).toBe(snapshotEtag(workerBody(before)));

    // Awkward chances included: the extremes, float-noisy ones, a 4-decimal one.
    for (const [hist, cat, three] of [
      [0.535, 0.7, 0.1],
      [0.0001, 0.9999, 0.3333],
      [0, 1, 0.5],
      [0.4123, 0.25, 0.07],
      [0.999, 0.001, 0.9],
    ] as const) {
      const moves = new Map([
        ['m-hist-0', hist],
        ['m-catalog-0', cat],
        ['m-three-2', three],
        // The book of a settled market still moves; its page must not.
        ['m-settled-0', 0.42],
      ]);
      live.offer(entries(moves));
      const shown = live.apply(`event:${catalogEvent.slug}`, held);
      const expected = workerBody(new Map([...before, ...moves]));
      expect(JSON.stringify(shown)).toBe(expected);
      expect(snapshotEtag(JSON.stringify(shown))).toBe(snapshotEtag(expected));
    }
  });

  it('leaves the snapshot itself when nothing live differs from it, and lets a live price go after its hold', () => {
    live = createLivePrices({ clock: () => now, logger, holdMs: 10_000, sweepMs: 60_000 });
    const chances = new Map([['m-hist-0', 0.5]]);
    const held = eventSnapshotSchema.parse(JSON.parse(workerBody(chances)));
    live.offer(entries(chances));
    expect(live.apply(`event:${catalogEvent.slug}`, held)).toBe(held);

    live.offer(entries(new Map([['m-hist-0', 0.61]])));
    const shown = live.apply(`event:${catalogEvent.slug}`, held) as typeof held;
    expect(shown.event.markets[0]?.outcomes[0]?.chance).toBe(0.61);
    // Another event's page and other snapshots are untouched.
    expect(live.apply('event:other', held)).toBe(held);
    expect(live.apply('markets:trending', held)).toBe(held);

    now += 10_000;
    expect(live.apply(`event:${catalogEvent.slug}`, held)).toBe(held);
  });

  it('moves no outcome whose index is not its position on the page (the worker leaves such a market out of the basis)', () => {
    live = createLivePrices({ clock: () => now, logger });
    const gapped = { ...catalogEvent, markets: [market('m-gap', 0, { outcomes: [1, 2].map((index) => ({ index, name: `O${index}`, tokenId: `m-gap-${index}`, catalogPrice: 0.5, finalChance: null })) })] };
    const held = eventSnapshotSchema.parse(JSON.parse(JSON.stringify(buildEventSnapshot(gapped, { chances: new Map(), splits: new Map(), game: undefined, webUrl: WEB }))));
    expect(held.overlay).toEqual({});
    live.offer(entries(new Map([['m-gap-1', 0.9]])));
    expect(live.apply(`event:${catalogEvent.slug}`, held)).toBe(held);
  });

  it('tells its listeners which event pages changed, and ignores what it cannot read', () => {
    live = createLivePrices({ clock: () => now, logger });
    const heard: string[][] = [];
    live.watch((names) => heard.push([...names]));
    live.offer([
      ...entries(new Map([['m-hist-0', 0.3]])),
      { id: '1-1', topic: 'price', event: 'x', market: 'm', data: '{"not":"a price"}' },
      { id: '1-2', topic: 'price', event: 'x', market: 'm', data: 'not json' },
      { id: '1-3', topic: 'score', event: 'x', market: '', data: '{}' },
    ]);
    expect(heard).toEqual([[`event:${catalogEvent.slug}`]]);
    expect(live.size()).toBe(1);
  });
});
