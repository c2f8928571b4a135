import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CATEGORIES, type Category } from '@pm/shared/api';
import type { CatalogEvent, CatalogMarket } from './model.js';
import { createListAssembler, type ListAssembler } from './list-bodies.js';
import { buildListSnapshots } from './payloads.js';

const WEB = 'https://web.example';
const LEAGUES = [null, '', 'epl', 'nba', 'btc', 'ucl'] as const;

function market(eventId: string, n: number, over: Partial<CatalogMarket> = {}): CatalogMarket {
  const id = `${eventId}-m${n}`;
  return {
    id,
    eventId,
    position: n,
    question: `Will "${eventId}" reach step ${n}?\tÉtape — ünïcødé 🎯`,
    label: `Step ${n}`,
    kind: n === 0 ? 'moneyline' : null,
    closesAt: new Date(Date.UTC(2030, 0, 1 + n)),
    closed: false,
    oneDayPriceChange: null,
    resolution: null,
    outcomes: [
      { index: 0, name: 'Yes', tokenId: `${id}-yes`, catalogPrice: 0.5, finalChance: null },
      { index: 1, name: 'No', tokenId: `${id}-no`, catalogPrice: null, finalChance: null },
    ],
    ...over,
  };
}

/**
 * Event `i` of a catalog that has what the lists care about: categories and leagues (null and ''
 * included), closed markets before and among the first three, a resolved market, 1 to 6 markets,
 * volume ties, titles that need escaping.
 */
function event(i: number, over: Partial<CatalogEvent> = {}): CatalogEvent {
  const id = `ev${String(i).padStart(3, '0')}`;
  const markets = Array.from({ length: 1 + (i % 6) }, (_, n) =>
    market(id, n, {
      closed: (i + n) % 5 === 0,
      ...(n === 2 && i % 4 === 0
        ? {
            closed: true,
            resolution: { outcome: 0, at: new Date(Date.UTC(2029, 5, 1)) },
            outcomes: market(id, n).outcomes.map((o) => ({ ...o, finalChance: o.index === 0 ? 1 : 0 })),
          }
        : {}),
    }),
  );
  return {
    id,
    slug: `slug-${id}`,
    title: `Event ${i}: "quoted" \\ back\nline`,
    category: CATEGORIES[i % CATEGORIES.length] as Category,
    league: LEAGUES[i % LEAGUES.length] ?? null,
    closesAt: null,
    volume: i * 10.5,
    volume24h: (i * 37) % 50, // plenty of ties, broken by slug
    closed: false,
    teams: i % 3 === 0 ? [{ name: 'Home', abbreviation: 'HOM', home: true }] : [],
    markets,
    ...over,
  };
}

/** Live chances for about two thirds of the tokens; the rest fall back to the catalog price, or 0. */
function chancesFor(events: readonly CatalogEvent[]): Map<string, number> {
  const chances = new Map<string, number>();
  let k = 0;
  for (const e of events) for (const m of e.markets) for (const o of m.outcomes) if (k++ % 3 !== 0) chances.set(o.tokenId, (k % 999) / 1000 + 0.001);
  return chances;
}

/** What the lists must be: JSON.stringify of buildListSnapshots' payloads. */
function expected(open: readonly CatalogEvent[], chances: ReadonlyMap<string, number>, ranking?: number) {
  const { lists, search, leagueKeys } = buildListSnapshots(open, chances, WEB, ranking);
  return { lists: [...lists, search].map((l) => ({ name: l.name, body: JSON.stringify(l.payload) })), leagueKeys };
}

function expectSame(assembler: ListAssembler, open: readonly CatalogEvent[], chances: ReadonlyMap<string, number>, ranking?: number): number {
  const { lists, leagueKeys, cardsBuilt } = assembler.build(open, chances, ranking);
  const want = expected(open, chances, ranking);
  expect(lists.map((l) => l.name)).toEqual(want.lists.map((l) => l.name));
  for (const [i, l] of lists.entries()) expect(l.body, l.name).toBe(want.lists[i]?.body);
  expect(leagueKeys).toEqual(want.leagueKeys);
  return cardsBuilt;
}

const catalog = Array.from({ length: 150 }, (_, i) => event(i));
/** A first market's Yes token of an event whose first market is open (so its card shows it). */
const shownToken = (e: CatalogEvent) => e.markets.find((m) => !m.closed)?.outcomes[0]?.tokenId ?? '';

describe('list bodies assembled from kept fragments', () => {
  it('carry the ranking version they were cut from, byte for byte the payload, and the order it records', () => {
    const assembler = createListAssembler(WEB);
    expectSame(assembler, catalog, chancesFor(catalog), 7);
    expect(assembler.build(catalog, chancesFor(catalog), 8).lists[0]?.body.startsWith('{"ranking":8,"categories":')).toBe(true);
    const trending = JSON.parse(assembler.build(catalog, chancesFor(catalog), 8).lists[0]!.body) as { events: Array<{ slug: string }> };
    expect(assembler.order(catalog).slice(0, 60).map((e) => e.slug)).toEqual(trending.events.map((e) => e.slug));
  });

  it('are JSON.stringify of the list payloads, byte for byte (lists over 60, closed events, missing chances)', () => {
    const open = [...catalog, { ...event(999), closed: true, volume24h: 1_000 }];
    const assembler = createListAssembler(WEB);
    // A card per listed event: open, with an open market (events whose markets all closed are not listed).
    const listed = catalog.filter((e) => e.markets.some((m) => !m.closed)).length;
    expect(listed).toBeLessThan(150);
    expect(expectSame(assembler, open, chancesFor(open))).toBe(listed);
    // Over 60 in trending and some categories, so every list is capped as the payload is.
    expect(expected(open, new Map()).lists.find((l) => l.name === 'markets:trending')?.body.match(/"slug":/g)).toHaveLength(60);
  });

  it('rebuild only the cards whose event or shown chances changed, and stay equal to the payloads', () => {
    const assembler = createListAssembler(WEB);
    let open = [...catalog];
    const chances = chancesFor(open);
    expectSame(assembler, open, chances);

    expect(expectSame(assembler, open, chances)).toBe(0); // nothing changed

    const moved = catalog[7] as CatalogEvent;
    chances.set(shownToken(moved), 0.123);
    expect(expectSame(assembler, open, chances)).toBe(1);

    // A chance no card shows: a closed market's, and a fourth open market's.
    const hidden = catalog.find((e) => e.markets.filter((m) => !m.closed).length > 3) as CatalogEvent;
    const fourth = hidden.markets.filter((m) => !m.closed)[3] as CatalogMarket;
    const closed = (catalog[5] as CatalogEvent).markets.find((m) => m.closed) as CatalogMarket;
    chances.set(fourth.outcomes[0]?.tokenId ?? '', 0.77);
    chances.set(closed.outcomes[1]?.tokenId ?? '', 0.66);
    expect(expectSame(assembler, open, chances)).toBe(0);

    chances.delete(shownToken(moved)); // back to the catalog price
    expect(expectSame(assembler, open, chances)).toBe(1);

    // The catalog reloads one event as a new object (renamed, busier): its card and the order change.
    open = open.map((e) => (e === catalog[20] ? { ...e, title: 'Renamed "again"', volume24h: 10_000 } : e));
    expect(expectSame(assembler, open, chances)).toBe(1);

    // An event leaves and a new one arrives (a league appears with it, another may go).
    open = [...open.filter((e) => e !== catalog[3]), event(500, { league: 'new-league', volume24h: 5 })];
    expect(expectSame(assembler, open, chances)).toBe(1);
    expect(assembler.build(open, chances).leagueKeys).toContain('new-league');
  });

  it('stay equal to the payloads over any sequence of chance moves and catalog changes', () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('chance' as const), event: fc.nat(), outcome: fc.nat(), value: fc.integer({ min: 0, max: 1000 }).map((v) => v / 1000) }),
      fc.record({ kind: fc.constant('drop-chance' as const), event: fc.nat(), outcome: fc.nat() }),
      fc.record({ kind: fc.constant('replace' as const), event: fc.nat(), volume24h: fc.integer({ min: 0, max: 60 }) }),
      fc.record({ kind: fc.constant('remove' as const), event: fc.nat() }),
      fc.record({ kind: fc.constant('add' as const), seed: fc.integer({ min: 200, max: 260 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 12 }), (steps) => {
        const assembler = createListAssembler(WEB);
        let open: CatalogEvent[] = catalog.slice(0, 70);
        const chances = chancesFor(open);
        expectSame(assembler, open, chances);
        for (const s of steps) {
          const target = open[(s.kind === 'add' ? 0 : s.event) % open.length];
          if (target === undefined) continue;
          const tokens = target.markets.flatMap((m) => m.outcomes.map((o) => o.tokenId));
          if (s.kind === 'chance') chances.set(tokens[s.outcome % tokens.length] ?? '', s.value);
          if (s.kind === 'drop-chance') chances.delete(tokens[s.outcome % tokens.length] ?? '');
          if (s.kind === 'replace') open = open.map((e) => (e === target ? { ...e, volume24h: s.volume24h, title: `${e.title}!` } : e));
          if (s.kind === 'remove') open = open.filter((e) => e !== target);
          if (s.kind === 'add' && !open.some((e) => e.id === event(s.seed).id)) open = [...open, event(s.seed)];
          expectSame(assembler, open, chances);
        }
      }),
      { numRuns: 40 },
    );
  });
});
