import { describe, expect, it } from 'vitest';
import { slopePerHour, summarise } from './stats.js';

const HOUR = 3_600_000;

describe('soak slopes', () => {
  it('measures growth per hour by least squares, and none for a flat series', () => {
    const growing = [0, 1, 2, 3, 4].map((i) => ({ t: (i * HOUR) / 4, value: 100 + 5 * i }));
    expect(slopePerHour(growing)).toBeCloseTo(20, 9);
    const flat = [0, 1, 2, 3].map((i) => ({ t: i * 60_000, value: 42 }));
    expect(slopePerHour(flat)).toBe(0);
    expect(slopePerHour([{ t: 0, value: 1 }])).toBeNull();
  });

  it('ignores the warm-up when it takes the slope, but keeps the first sample as the start', () => {
    // A start that doubles in its first 20 minutes, then holds: flat after the warm-up.
    const points = [...Array(13).keys()].map((i) => ({ t: i * 5 * 60_000, value: i <= 4 ? 100 + 25 * i : 200 }));
    const s = summarise(points, 20 * 60_000);
    expect(s.start).toBe(100);
    expect(s.end).toBe(200);
    expect(s.slope).toBe(0);
    expect(s.max).toBe(200);
  });
});
