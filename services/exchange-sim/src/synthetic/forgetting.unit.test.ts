import { describe, expect, it } from 'vitest';
import { SyntheticExchange } from './engine.js';
import { seriesHeld } from './history.js';

/**
 * The simulator runs for days while markets open and close all day: what it keeps of a closed event
 * (the event itself, for `GET /events/:id`; whether it vanished from the lists; its price series'
 * lattice values) goes once the event leaves the world, so its memory follows the catalog's size,
 * not how long it has run.
 */
describe('a simulator whose events keep closing', () => {
  it('holds the series and vanished ids of the events it still keeps, not of every event it ever had', () => {
    const sim = new SyntheticExchange({ seed: 11, speed: 1, startTime: Date.UTC(2026, 3, 5, 15, 0, 0), paused: true, openEvents: 40, quietSpells: { everyMs: 0, forMs: 0 } });
    let closedEvents = 0;
    // Past the 2,000 closed events the world keeps: every round resolves each open market (each
    // resolution renders its event, which asks for its series) and lists the catalog.
    while (closedEvents < 2_600) {
      const listing = sim.listing();
      const open = listing.filter((e) => !e.fields.closed).map((e) => e.render());
      for (const event of open) {
        for (const market of event.markets) if (!market.closed) sim.resolve(String(market.id), 0, false);
        closedEvents++;
      }
    }
    const kept = sim.listing().map((e) => e.render());
    const keptMarkets = kept.reduce((n, e) => n + e.markets.length, 0);
    expect(kept.filter((e) => e.closed).length).toBeLessThanOrEqual(2_000);
    // Every series held is a market still in the world (other tests' simulators share none of them: their seeds differ).
    expect(seriesHeld()).toBeLessThanOrEqual(keptMarkets);
    expect(seriesHeld()).toBeGreaterThan(0);
    // One closed event in three vanishes from the lists: of those kept, at most a third plus one.
    expect(sim.unlisted().size).toBeLessThanOrEqual(Math.ceil(2_000 / 3) + 1);
  });
});
