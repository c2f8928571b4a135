import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callListResponseSchema, endpointList, marketListResponseSchema, STREAM_PATH, streamQueryParams } from '@pm/shared/api';
import { until } from '@pm/shared/wait';
import { startStack, type Stack } from '../support/stack.js';

/**
 * Bad input never looks like an outage. Every parameter of every endpoint in the endpoint table (and
 * the stream's) is sent values a client could send by mistake or on purpose — a NUL byte, invalid
 * UTF-8, an encoded surrogate, huge strings, path traversal, SQL-ish text, bad cursors, odd Unicode —
 * against the whole stack with data in it. Each must be answered 2xx or 4xx: a 5xx says a dependency
 * is down, and a client or an alert would read it that way.
 */

/** Values as they stand in the request target (already percent-encoded, or deliberately not). */
const HOSTILE: readonly string[] = [
  '%00',
  'a%00b',
  '%FF',
  '%C0%80',
  '%ED%A0%80',
  '%ED%B0%80x',
  '%E0%80%AF',
  '%',
  '%2',
  '%%41',
  '%0D%0ASet-Cookie:%20x=1',
  '..',
  '..%2F..%2Fetc%2Fpasswd',
  '%2E%2E%2F%2E%2E',
  "'%20OR%20'1'%3D'1",
  '1%3B%20DROP%20TABLE%20calls%3B--',
  '%5C%27%22%60',
  '%25%5F%2A',
  '%F0%9F%92%A9',
  '%E2%80%AE%D8%B9%D8%B1%D8%A8%D9%8A',
  '%EF%BB%BF',
  '%EF%BF%BF',
  '-1',
  '1e309',
  'NaN',
  '99999999999999999999999',
  '%20',
  'x'.repeat(5_000),
  'x'.repeat(20_000),
  // Cursors: not base64, base64 of JSON nobody signed, one with a NUL, a very long one.
  'abc',
  'eyJpZCI6IjEifQ',
  'eyJpZCI6IjEifQ.AAAA',
  'eyJpZCI6IgAifQ',
  'A'.repeat(600),
];

interface Answer {
  target: string;
  status: number;
  body: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** GET the raw target, byte for byte (fetch would normalise `..` and re-encode). A stream is cut once its status is known. */
function getRaw(base: URL, target: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, path: target, method: 'GET', agent, headers }, (res) => {
      const status = res.statusCode ?? 0;
      if ((res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        req.destroy();
        return resolve({ target, status, body: '' });
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ target, status, body: Buffer.concat(chunks).toString('utf8').slice(0, 300) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Runs `jobs` a few at a time (the machine is shared), keeping their order. */
async function inTurn<T>(jobs: ReadonlyArray<() => Promise<T>>, width = 8): Promise<T[]> {
  const out: T[] = new Array<T>(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

let stack: Stack;
let base: URL;
/** A real value of each path parameter, so only the parameter under test is hostile. */
const real: Record<string, string> = {};

beforeAll(async () => {
  stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  base = new URL(stack.apiUrl);
  const json = async (path: string) => (await fetch(`${stack.apiUrl}${path}`)).json() as Promise<unknown>;
  // The records lists exist once the worker has built them and the demo crowd has called something.
  const calls = await until(
    'a call on the list',
    async () => {
      const parsed = callListResponseSchema.safeParse(await json('/api/v1/calls'));
      return parsed.success && parsed.data.calls.length > 0 ? parsed.data.calls : undefined;
    },
    { timeoutMs: 90_000, everyMs: 500, context: () => stack.logs() },
  );
  const markets = marketListResponseSchema.parse(await json('/api/v1/markets'));
  const event = markets.events[0]!;
  Object.assign(real, {
    eventSlug: event.slug,
    marketId: event.markets[0]!.id,
    id: calls[0]!.id,
    handle: calls[0]!.user.handle,
  });
  for (const path of ['/api/v1/leaderboard', '/api/v1/combos', '/api/v1/live']) {
    await until(`${path} to answer 200`, async () => (await fetch(`${stack.apiUrl}${path}`)).status === 200, {
      timeoutMs: 60_000,
      everyMs: 500,
      context: () => stack.logs(),
    });
  }
});

afterAll(async () => {
  agent.destroy();
  await stack?.stop();
});

/** `/api/v1/markets/{eventSlug}` with `eventSlug` (raw) in place, every other path parameter real. */
function fill(path: string, name?: string, raw?: string): string {
  return path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, p: string) => (p === name ? raw! : encodeURIComponent(real[p]!)));
}

describe('hostile input', () => {
  it('is never answered 5xx by any endpoint, for any parameter', async () => {
    const targets: Array<{ target: string; headers?: Record<string, string> }> = [];
    for (const endpoint of endpointList) {
      for (const name of Object.keys(endpoint.params.shape)) {
        for (const raw of HOSTILE) {
          targets.push({
            target: endpoint.pathParams.includes(name) ? fill(endpoint.path, name, raw) : `${fill(endpoint.path)}?${name}=${raw}`,
          });
        }
      }
    }
    for (const { name } of streamQueryParams) for (const raw of HOSTILE) targets.push({ target: `${STREAM_PATH}?${name}=${raw}` });
    for (const raw of HOSTILE.filter((r) => !r.includes('%') && r.length < 1_000)) targets.push({ target: STREAM_PATH, headers: { 'last-event-id': raw } });

    const answers = await inTurn(targets.map(({ target, headers }) => () => getRaw(base, target, headers)));
    const failures = answers.filter((a) => a.status >= 500 || a.status < 200);
    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    console.log(`[hostile] ${answers.length} requests: ${[...byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`);
    expect(
      failures.map((f) => `${f.status} ${f.target.slice(0, 120)} ${f.body}`),
      'requests answered 5xx (or not at all)',
    ).toEqual([]);
    // Every endpoint and parameter was reached: the list is derived from the table, not typed by hand.
    expect(answers.length).toBeGreaterThan(endpointList.length * HOSTILE.length);
  });

  it('answers a NUL in a person or a call id 400, naming the parameter', async () => {
    for (const [path, name] of [
      ['/api/v1/users/%00', 'handle'],
      ['/api/v1/users/a%00b/calls', 'handle'],
      ['/api/v1/calls/%00', 'id'],
      ['/api/v1/calls?market=%00', 'market'],
    ] as const) {
      const answer = await getRaw(base, path);
      expect(answer.status, path).toBe(400);
      expect(JSON.parse(answer.body), path).toMatchObject({ ok: false, error: { code: 'bad_request' } });
      expect(answer.body, path).toContain(name);
    }
  });
});
