import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { apiRedis, startApp, type RunningApp } from '../testing/fixtures.js';
import { rawExchange } from '../testing/responses.js';
import { CORS_OPTIONS, corsHeadersOf } from './cors.js';

/**
 * The CORS headers are the cors middleware's on both request paths: Express (the cors package itself)
 * and the front handler (what that middleware wrote once at start-up, cors.ts). Compared on the wire,
 * names and values, in order.
 */

let testRedis: TestRedis;
let redis: Redis;
let api: RunningApp;

beforeAll(async () => {
  testRedis = await createTestRedis('api_cors');
  redis = await apiRedis(testRedis.url);
  api = await startApp({ redis, env: { REDIS_PREFIX: testRedis.prefix, RATE_LIMIT_PER_MINUTE: '100000' } });
});

afterAll(async () => {
  await api?.close();
  redis?.disconnect();
  await testRedis?.cleanup();
});

/** The response's header lines as sent, name and value (the status line left out). */
async function headerLines(request: string): Promise<Array<[string, string]>> {
  const { head } = await rawExchange(api.base, request);
  return head
    .split('\r\n')
    .slice(1)
    .map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon), line.slice(colon + 1).trim()];
    });
}

const cors = (lines: Array<[string, string]>) => lines.filter(([name]) => /^access-control-/i.test(name));
const asPairs = (list: string[]) => Array.from({ length: list.length / 2 }, (_, i): [string, string] => [list[2 * i]!, list[2 * i + 1]!]);

describe('CORS headers', () => {
  it('are the same on a ready response answered in front of Express as on the one Express made', async () => {
    const request = 'GET /api/v1/odds?chance=0.25&cors=1 HTTP/1.1\r\nHost: x\r\nOrigin: https://example.org\r\nConnection: close\r\n\r\n';
    const made = await headerLines(request);
    const held = await headerLines(request);
    expect(cors(made).length).toBeGreaterThan(0);
    expect(cors(held)).toEqual(cors(made));
    // And both are exactly what the cors middleware writes on a GET with these options.
    expect(cors(made)).toEqual(asPairs(corsHeadersOf(CORS_OPTIONS, 'GET')));
    expect(Object.fromEntries(cors(made).map(([n, v]) => [n.toLowerCase(), v]))).toMatchObject({ 'access-control-allow-origin': '*' });
  });

  it('are the same on an error Express answers (404)', async () => {
    const lines = await headerLines('GET /api/v1/nope HTTP/1.1\r\nHost: x\r\nOrigin: https://example.org\r\nConnection: close\r\n\r\n');
    expect(cors(lines)).toEqual(asPairs(corsHeadersOf(CORS_OPTIONS, 'GET')));
  });

  it('answer a preflight with what the cors middleware writes for it, uncounted, with the methods allowed', async () => {
    const lines = await headerLines(
      'OPTIONS /api/v1/markets HTTP/1.1\r\nHost: x\r\nOrigin: https://example.org\r\nAccess-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: if-none-match\r\nConnection: close\r\n\r\n',
    );
    expect(cors(lines)).toEqual(cors(asPairs(corsHeadersOf(CORS_OPTIONS, 'OPTIONS'))));
    const byName = Object.fromEntries(lines.map(([n, v]) => [n.toLowerCase(), v]));
    expect(byName).toMatchObject({
      'access-control-allow-methods': 'GET,HEAD,OPTIONS',
      'access-control-allow-headers': 'If-None-Match,X-Request-Id',
      'access-control-max-age': '86400',
      allow: 'GET, HEAD, OPTIONS',
      'content-length': '0',
    });
    expect(byName['x-ratelimit-limit']).toBeUndefined();
  });
});
