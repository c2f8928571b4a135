import { describe, expect, it } from 'vitest';
import { toBooleanOrNull, toIsoTimeOrNull, toNumberOrNull, toStringArrayOrNull } from './lenient.js';

describe('lenient time', () => {
  it('reads the catalog\'s Postgres-style time with a short offset', () => {
    expect(toIsoTimeOrNull('2026-04-05 15:10:00+00')).toBe('2026-04-05T15:10:00.000Z');
  });
  it('reads ISO with Z, with offsets, and fractional seconds', () => {
    expect(toIsoTimeOrNull('2026-04-05T15:10:00Z')).toBe('2026-04-05T15:10:00.000Z');
    expect(toIsoTimeOrNull('2026-04-05T17:10:00+02:00')).toBe('2026-04-05T15:10:00.000Z');
    expect(toIsoTimeOrNull('2026-04-05 15:10:00.123+0000')).toBe('2026-04-05T15:10:00.123Z');
  });
  it('reads a bare date and Unix seconds or milliseconds', () => {
    expect(toIsoTimeOrNull('2026-04-05')).toBe('2026-04-05T00:00:00.000Z');
    expect(toIsoTimeOrNull(1_775_401_800)).toBe('2026-04-05T15:10:00.000Z');
    expect(toIsoTimeOrNull('1775401800000')).toBe('2026-04-05T15:10:00.000Z');
  });
  it('gives null for empty, garbage and non-strings', () => {
    expect(toIsoTimeOrNull('')).toBeNull();
    expect(toIsoTimeOrNull('soon')).toBeNull();
    expect(toIsoTimeOrNull(null)).toBeNull();
    expect(toIsoTimeOrNull({})).toBeNull();
  });
});

describe('lenient numbers, booleans, arrays', () => {
  it('reads numbers given as strings, and "" as missing', () => {
    expect(toNumberOrNull('0.52')).toBe(0.52);
    expect(toNumberOrNull(12)).toBe(12);
    expect(toNumberOrNull('')).toBeNull();
    expect(toNumberOrNull('abc')).toBeNull();
    expect(toNumberOrNull(null)).toBeNull();
  });
  it('reads booleans given as strings', () => {
    expect(toBooleanOrNull('true')).toBe(true);
    expect(toBooleanOrNull(false)).toBe(false);
    expect(toBooleanOrNull('maybe')).toBeNull();
  });
  it('reads JSON-encoded string arrays and plain arrays', () => {
    expect(toStringArrayOrNull('["Yes","No"]')).toEqual(['Yes', 'No']);
    expect(toStringArrayOrNull(['1', 0])).toEqual(['1', '0']);
    expect(toStringArrayOrNull('not json')).toBeNull();
    expect(toStringArrayOrNull('{"a":1}')).toBeNull();
    expect(toStringArrayOrNull('[{"a":1}]')).toBeNull();
  });
});
