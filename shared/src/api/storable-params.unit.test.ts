import { describe, expect, it } from 'vitest';
import { endpointList } from './endpoints.js';

/**
 * Every free-text parameter of every endpoint in the table refuses what Postgres cannot take (a NUL)
 * and what has no UTF-8 form (an unpaired surrogate), so such a request is the client's 400 and never
 * reaches a store. The list is derived from the table: a new endpoint or parameter is covered at once.
 */

const cases = endpointList.flatMap((endpoint) =>
  Object.keys(endpoint.params.shape).map((name) => ({ endpoint, name, label: `${endpoint.path} ${name}` })),
);

describe('parameters a store cannot take', () => {
  it.each(cases)('$label refuses a NUL character and an unpaired surrogate', ({ endpoint, name }) => {
    for (const bad of ['a\u0000b', '\u0000', 'x\uD800', '\uDC00y']) {
      // Other parameters may be missing or wrong too: what counts is an issue on this one.
      const parsed = endpoint.params.safeParse({ [name]: bad });
      expect(parsed.success, `${endpoint.path} ${name}=${JSON.stringify(bad)}`).toBe(false);
      expect(parsed.error?.issues.some((i) => i.path[0] === name)).toBe(true);
    }
  });

  it('still accepts paired surrogates (emoji) and other Unicode in free text', () => {
    const markets = endpointList.find((e) => e.path === '/api/v1/markets')!;
    expect(markets.params.safeParse({ q: 'bitcoin 🚀 élection' }).success).toBe(true);
    const user = endpointList.find((e) => e.path === '/api/v1/users/{handle}')!;
    expect(user.params.safeParse({ handle: '@Zoë' }).success).toBe(true);
  });
});
