import { describe, expect, it } from 'vitest';
import { parseEventsQuery, queryEvents } from '../catalog-query.js';
import type { CatalogEvent } from '../protocol.js';
import { SyntheticExchange } from './engine.js';

/**
 * `/events` filters and sorts the catalog on light list fields and renders only the page asked for:
 * every page must be the one that sorting the fully rendered catalog gives, event for event.
 */
const QUERIES = [
  'active=true&closed=false&order=volume24hr&ascending=false&limit=50&offset=0',
  'active=true&closed=false&order=volume24hr&ascending=false&limit=50&offset=50',
  'active=true&closed=false&order=volume24hr&ascending=true&limit=7&offset=3',
  'order=volume&ascending=false&limit=20',
  'order=liquidity&limit=20',
  'order=startDate&ascending=true&limit=20',
  'order=endDate&ascending=false&limit=20&offset=10',
  'closed=true&limit=100',
  'live=true&limit=100',
  'limit=30&offset=5',
];

/** Every event fully rendered, as `/events` rendered the whole catalog before it sorted. */
const renderAll = (sim: SyntheticExchange) => sim.listing().map((e) => e.render());

describe('the synthetic catalog listing', () => {
  const sim = new SyntheticExchange({ seed: 7, speed: 1, startTime: Date.UTC(2026, 3, 5, 15, 0, 0), paused: true, openEvents: 400, quietSpells: { everyMs: 0, forMs: 0 } });
  // Books walked, games played and some markets closed, so the list fields are not the start's.
  sim.step(400);

  it('lists each event with the fields its rendering shows', () => {
    const rendered = new Map(renderAll(sim).map((e) => [String(e.id), e]));
    const listing = sim.listing();
    expect(listing).toHaveLength(rendered.size);
    const fields = (e: CatalogEvent) => ({
      id: e.id,
      slug: e.slug,
      active: e.active ?? true,
      closed: e.closed ?? false,
      live: e.live ?? false,
      gameId: e.gameId ?? null,
      volume: e.volume,
      volume24hr: e.volume24hr,
      liquidity: e.liquidity,
      startDate: e.startDate,
      endDate: e.endDate,
      tags: (e.tags ?? []).map((t) => t.id),
    });
    for (const item of listing) expect(fields(item.fields)).toEqual(fields(rendered.get(String(item.fields.id))!));
  });

  it('answers every query with the page the rendered catalog gives', () => {
    for (const text of QUERIES) {
      const query = parseOk(text);
      const lazy = queryEvents(sim.listing(), query, (e) => e.fields).map((e) => e.render());
      const whole = queryEvents(renderAll(sim), query, (e) => e);
      expect(lazy, text).toEqual(whole);
    }
    // The queries are not vacuous: the volume pages are full and differ.
    const first = queryEvents(sim.listing(), parseOk(QUERIES[0]!), (e) => e.fields);
    expect(first).toHaveLength(50);
  });
});

function parseOk(text: string) {
  const parsed = parseEventsQuery(new URLSearchParams(text));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.query;
}
