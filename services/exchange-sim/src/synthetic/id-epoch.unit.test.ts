import { describe, expect, it } from 'vitest';
import { SyntheticExchange } from './engine.js';

/** A restarted simulator (a new epoch) on the same database must never give an id or slug to a different event. */
describe('the id epoch of a synthetic run', () => {
  const run = (idEpoch?: number) =>
    new SyntheticExchange({
      seed: 42,
      speed: 1,
      startTime: Date.UTC(2026, 10, 28, 12, 0, 0),
      paused: true,
      quietSpells: { everyMs: 0, forMs: 0 },
      ...(idEpoch === undefined ? {} : { idEpoch }),
    })
      .listing()
      .map((e) => e.render());

  it('keeps the seed\'s ids without an epoch', () => {
    const events = run();
    expect(events[0]?.id).toBe('30001');
  });

  it('gives two runs of the same seed disjoint event ids, market ids, slugs, tokens and game ids', () => {
    const [a, b] = [run(1_795_000_000), run(1_795_003_600)];
    const ids = (events: typeof a) => ({
      events: events.map((e) => String(e.id)),
      slugs: events.map((e) => e.slug),
      markets: events.flatMap((e) => (e.markets ?? []).map((m) => String(m.id))),
      tokens: events.flatMap((e) => (e.markets ?? []).flatMap((m) => JSON.parse(String(m.clobTokenIds ?? '[]')) as string[])),
      games: events.flatMap((e) => (e.gameId === undefined || e.gameId === null ? [] : [String(e.gameId)])),
    });
    const [x, y] = [ids(a), ids(b)];
    for (const key of ['events', 'slugs', 'markets', 'tokens', 'games'] as const) {
      expect(x[key].length, key).toBeGreaterThan(0);
      const other = new Set(y[key]);
      expect(x[key].filter((v) => other.has(v)), key).toEqual([]);
    }
    expect(x.events[0]).toBe('179500000030001');
  });
});
