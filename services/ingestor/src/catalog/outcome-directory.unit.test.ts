import { describe, expect, it } from 'vitest';
import type { OutcomeRef } from './catalog-db.js';
import { OutcomeDirectory } from './outcome-directory.js';

const ref = (tokenId: string, marketId: string, outcomeIndex: number, closed = false): OutcomeRef => ({
  tokenId, marketId, eventId: `e-${marketId}`, eventSlug: `e-${marketId}`, outcomeIndex, name: outcomeIndex === 0 ? 'Yes' : 'No', catalogPrice: 0.5, closed,
});

describe('the outcome directory', () => {
  it('forgets a closed market\'s outcomes once they have been closed long enough, and keeps every open one', () => {
    let now = 1_000;
    const d = new OutcomeDirectory(() => now);
    for (const r of [ref('a0', 'a', 0), ref('a1', 'a', 1), ref('b0', 'b', 0), ref('b1', 'b', 1)]) d.upsert(r);
    now = 2_000;
    d.upsert(ref('a0', 'a', 0, true));
    d.upsert(ref('a1', 'a', 1, true));
    // Closed at 2,000: kept until then, so a late frame still finds the market.
    expect(d.forgetClosed(1_999)).toBe(0);
    expect(d.get('a0')?.marketId).toBe('a');
    expect(d.market('a').map((o) => o.tokenId)).toEqual(['a0', 'a1']);
    expect(d.forgetClosed(2_000)).toBe(2);
    expect(d.get('a0')).toBeUndefined();
    expect(d.market('a')).toEqual([]);
    expect(d.size).toBe(2);
    expect(d.openTokens().sort()).toEqual(['b0', 'b1']);
    expect(d.forgetClosed(10_000)).toBe(0);
  });

  it('counts a closed outcome\'s time from when it was first seen closed, and not at all once it reopens', () => {
    let now = 0;
    const d = new OutcomeDirectory(() => now);
    d.upsert(ref('c0', 'c', 0, true));
    now = 500;
    // Seen closed again (every catalog page that lists it): still closed since 0.
    d.upsert(ref('c0', 'c', 0, true));
    d.upsert(ref('r0', 'r', 0, true));
    now = 600;
    d.upsert(ref('r0', 'r', 0, false));
    expect(d.forgetClosed(100)).toBe(1);
    expect(d.get('c0')).toBeUndefined();
    expect(d.forgetClosed(1_000)).toBe(0);
    expect(d.isOpen('r0')).toBe(true);
  });
});
