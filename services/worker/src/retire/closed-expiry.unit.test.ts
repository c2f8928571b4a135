import { describe, expect, it } from 'vitest';
import { closedExpiry, REBUILT_KEEP_MS } from './closed-expiry.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

describe("a closed event's snapshot expiry", () => {
  it('is the end of the retention for a key written inside it, and an hour after a write past it', () => {
    const closedAt = 1_000 * HOUR;
    expect(closedExpiry(closedAt, closedAt + MIN, 24 * HOUR)).toBe(closedAt + 24 * HOUR);
    expect(closedExpiry(closedAt, closedAt + 30 * HOUR, 24 * HOUR)).toBe(closedAt + 30 * HOUR + REBUILT_KEEP_MS);
    expect(REBUILT_KEEP_MS).toBe(HOUR);
  });

  it('keeps a key no longer than a retention shorter than an hour', () => {
    const closedAt = 1_000 * HOUR;
    // Written as the event closes: gone when its 15 minutes are, not an hour later.
    expect(closedExpiry(closedAt, closedAt, 15 * MIN)).toBe(closedAt + 15 * MIN);
    // Rebuilt when asked for after them: kept 15 minutes from the write.
    expect(closedExpiry(closedAt, closedAt + 40 * MIN, 15 * MIN)).toBe(closedAt + 55 * MIN);
  });
});
