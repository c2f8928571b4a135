import { describe, expect, it } from 'vitest';
import { snapshotEtag } from '@pm/shared/redis';
import { createEtagMemo } from './etag-memo.js';

describe('the etag memo', () => {
  it('gives the snapshotEtag of each body, per name, whether it hashed or remembered', () => {
    const memo = createEtagMemo();
    const a = '{"events":[1]}';
    const b = '{"events":[2]}';
    expect(memo.etagOf('markets:trending', a)).toBe(snapshotEtag(a));
    expect(memo.etagOf('markets:trending', a)).toBe(snapshotEtag(a));
    expect(memo.etagOf('markets:search', b)).toBe(snapshotEtag(b));
    expect(memo.etagOf('markets:trending', b)).toBe(snapshotEtag(b));
    expect(memo.etagOf('markets:trending', a)).toBe(snapshotEtag(a));
    // Equal text built anew (not the same string object) is still recognised by value.
    expect(memo.etagOf('markets:search', ['{"events":', '[2]}'].join(''))).toBe(snapshotEtag(b));
  });
});
