import { describe, expect, it } from 'vitest';
import { parseDirty } from './builder.js';

describe('parseDirty', () => {
  it('sorts the dirty set into calls and markets; the global lists need no member, a person needs nothing', () => {
    const dirty = parseDirty(['call:aB3', 'user:42', 'lists:42', 'market:540101', 'combos', 'leaderboard', 'call:x:y']);
    expect(dirty.calls).toEqual(['aB3', 'x:y']);
    expect(dirty.markets).toEqual(['540101']);
    expect(dirty.ignored).toEqual([]);
  });

  it('sets aside members no producer should write, so one bad member cannot fail every build', () => {
    const dirty = parseDirty(['user:alice', 'user:', 'call:', 'event:1', 'combos:open']);
    expect(dirty.ignored).toEqual(['user:alice', 'user:', 'call:', 'event:1', 'combos:open']);
    expect([...dirty.calls, ...dirty.markets]).toEqual([]);
  });
});
