import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { CallListSnapshot } from '@pm/shared/api';
import { createTestRedis, type TestRedis } from '@pm/shared/testing';
import { apiRedis, event, listSnapshot, startApp, writeSnapshot, type RunningApp } from '../testing/fixtures.js';

/**
 * The API description as clients get it: the served /api/v1/openapi.json is the committed
 * openapi.json (clients and the typed client are generated from that file), and the docs page's copy
 * offers example requests taken from the data being served.
 */

const COMMITTED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../openapi.json');

let withData: TestRedis;
let empty: TestRedis;
let clients: Redis[] = [];
let api: RunningApp;
let emptyApi: RunningApp;

const seeded = event('serie-a-int-mil-2026-11-30', 'Inter vs. Milan', 'Football', ['Will Inter win on 2026-11-30?', 'Will Milan win on 2026-11-30?']);
const newestCall: CallListSnapshot['calls'][number] = {
  id: 'Zq81LmNoPx',
  user: { handle: 'derby_dan', avatar: null },
  market_id: 'market-with-calls',
  event: 'serie-a-int-mil-2026-11-30',
  question: 'Will Milan win on 2026-11-30?',
  outcome: 'Yes',
  outcome_index: 0,
  chance_at_call: 0.31,
  thesis: 'Milan away at 31% is too long.',
  copied_from: null,
  is_fade: false,
  status: 'open',
  profit_on_10: null,
  made_at: '2026-11-24T20:00:00.000Z',
  settled_at: null,
  url: 'http://localhost:3000/c/Zq81LmNoPx',
};

beforeAll(async () => {
  [withData, empty] = await Promise.all([createTestRedis('api_openapi'), createTestRedis('api_openapi_empty')]);
  const redis = await apiRedis(withData.url);
  const emptyRedis = await apiRedis(empty.url);
  clients = [redis, emptyRedis];
  api = await startApp({ redis, env: { REDIS_URL: withData.url, REDIS_PREFIX: withData.prefix, RATE_LIMIT_PER_MINUTE: '100000' } });
  emptyApi = await startApp({ redis: emptyRedis, env: { REDIS_URL: empty.url, REDIS_PREFIX: empty.prefix, RATE_LIMIT_PER_MINUTE: '100000' } });
  await writeSnapshot(withData.redis, withData.prefix, 'markets:trending', listSnapshot([seeded]), '"trending-1"');
  await writeSnapshot(withData.redis, withData.prefix, 'calls:latest', { calls: [newestCall] } satisfies CallListSnapshot, '"calls-1"');
});

afterAll(async () => {
  await api?.close();
  await emptyApi?.close();
  for (const client of clients) client.disconnect();
  await withData?.cleanup();
  await empty?.cleanup();
});

interface Parameter {
  name: string;
  in: string;
  examples?: Record<string, { value: unknown }>;
}
type Document = { paths: Record<string, { get: { parameters: Parameter[]; description: string } }> };

/** Every example value of every parameter, as `path name=value`. */
function parameterExamples(doc: Document): string[] {
  return Object.entries(doc.paths).flatMap(([p, { get }]) =>
    get.parameters.flatMap((param) => Object.values(param.examples ?? {}).map((e) => `${p} ${param.name}=${String(e.value)}`)),
  );
}

describe('the OpenAPI document', () => {
  it('is served exactly as committed in openapi.json', async () => {
    const served = await (await fetch(`${api.base}/api/v1/openapi.json`)).text();
    const committed = readFileSync(COMMITTED, 'utf8');
    // One line instead of a 4,000-line diff: the fix is always the same command.
    if (JSON.stringify(JSON.parse(served)) !== JSON.stringify(JSON.parse(committed))) {
      expect.fail('openapi.json differs from the document the API serves (/api/v1/openapi.json): run `npm run openapi` and commit openapi.json and clients/typescript/src/schema.d.ts');
    }
  });

  it('on the docs page, offers example requests on the data being served', async () => {
    const res = await fetch(`${api.base}/api/v1/docs/openapi.json`);
    expect(res.status).toBe(200);
    const examples = parameterExamples((await res.json()) as Document);
    expect(examples).toContain(`/api/v1/markets/{eventSlug} eventSlug=${seeded.slug}`);
    expect(examples).toContain(`/api/v1/markets/{eventSlug}/history market=${seeded.markets[0]!.id}`);
    expect(examples).toContain(`/api/v1/markets/by-id/{marketId} marketId=${seeded.markets[0]!.id}`);
    expect(examples).toContain('/api/v1/calls/{id} id=Zq81LmNoPx');
    expect(examples).toContain('/api/v1/calls market=market-with-calls');
    expect(examples).toContain('/api/v1/users/{handle} handle=derby_dan');
    expect(examples).toContain('/api/v1/users/{handle} handle=@DERBY_DAN');
    expect(examples).toContain('/api/v1/users/{handle}/calls handle=@derby_dan');
  });

  it('on the docs page of a service with no data yet, keeps the fixed examples', async () => {
    const docs = (await (await fetch(`${emptyApi.base}/api/v1/docs/openapi.json`)).json()) as Document;
    const served = (await (await fetch(`${emptyApi.base}/api/v1/openapi.json`)).json()) as Document;
    expect(parameterExamples(docs)).toEqual(parameterExamples(served));
  });
});
