import { describe, expect, it } from 'vitest';
import { createReadyCache } from './ready-cache.js';
import { readyResponse } from './ready-response.js';

/** A ready response cache holds what is current, and no more than its entries and bytes allow. */
const snapshots = { version: () => '"v1"', live: () => true };
const entry = (bytes: number) => ({
  ready: readyResponse('/api/v1/odds', '"e"', 'public, max-age=5', Buffer.alloc(bytes)),
  versions: [['live', '"v1"']] as const,
  live: undefined,
});

describe('ready response cache', () => {
  it('drops the oldest responses past its byte budget, so many large bodies cannot pile up', () => {
    // Each 1,000-byte body counts 1,500 with its encodings: a 10,000-byte budget holds six.
    const cache = createReadyCache(snapshots, 100, 10_000);
    for (let i = 0; i < 10; i++) cache.remember(`/a?${i}`, entry(1_000));
    const held = [...Array(10).keys()].filter((i) => cache.lookup(`/a?${i}`) !== undefined);
    expect(held).toEqual([4, 5, 6, 7, 8, 9]);
  });

  it('drops the oldest past its entry count, and a response whose snapshot moved on', () => {
    let version = '"v1"';
    const cache = createReadyCache({ version: () => version, live: () => true }, 3);
    for (let i = 0; i < 5; i++) cache.remember(`/b?${i}`, entry(10));
    expect([...Array(5).keys()].filter((i) => cache.lookup(`/b?${i}`) !== undefined)).toEqual([2, 3, 4]);
    version = '"v2"';
    expect(cache.lookup('/b?4')).toBeUndefined();
  });
});
