import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { sameData } from './same-data.js';

const event = () => ({
  id: 'e1',
  slug: 'a-b',
  closesAt: new Date('2030-05-01T19:00:00Z'),
  volume: 12.5,
  league: null as string | null,
  teams: [{ name: 'A', home: true }],
  markets: [{ id: 'm1', resolution: null as { outcome: number | null; at: Date } | null, outcomes: [{ index: 0, catalogPrice: 0.25, finalChance: null }] }],
});

describe('sameData', () => {
  it('says what isDeepStrictEqual says of catalog-shaped data, for every single change', () => {
    const changes: Array<(e: ReturnType<typeof event>) => void> = [
      () => {},
      (e) => (e.slug = 'a-c'),
      (e) => (e.closesAt = new Date('2030-05-01T19:00:01Z')),
      (e) => (e.volume = 12.6),
      (e) => (e.league = 'epl'),
      (e) => (e.teams[0]!.home = false),
      (e) => e.teams.push({ name: 'B', home: false }),
      (e) => (e.markets[0]!.resolution = { outcome: null, at: new Date(0) }),
      (e) => (e.markets[0]!.outcomes[0]!.catalogPrice = 0.26),
      (e) => (e.markets[0]!.outcomes[0]!.finalChance = 0 as unknown as null),
      (e) => ((e as Record<string, unknown>).extra = undefined),
      (e) => delete (e as Partial<ReturnType<typeof event>>).volume,
      (e) => (e.volume = Number.NaN),
    ];
    for (const [i, change] of changes.entries()) {
      const changed = event();
      change(changed);
      expect(sameData(event(), changed), `change ${i}`).toBe(isDeepStrictEqual(event(), changed));
      expect(sameData(changed, event()), `change ${i}, reversed`).toBe(isDeepStrictEqual(changed, event()));
    }
    expect(sameData({ v: Number.NaN }, { v: Number.NaN })).toBe(true);
  });

  it('compares Maps by their entries', () => {
    const splits = (people: number) => new Map([[0, people], [1, 3]]);
    expect(sameData(splits(2), splits(2))).toBe(true);
    expect(sameData(splits(2), splits(4))).toBe(false);
    expect(sameData(splits(2), new Map([[0, 2]]))).toBe(false);
    expect(sameData(undefined, splits(2))).toBe(false);
    expect(sameData(undefined, undefined)).toBe(true);
  });
});
