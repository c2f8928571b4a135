import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { errorBodySchema, oddsResponseSchema } from '@pm/shared/api';
import { freePort } from '@pm/shared/testing';
import { startApp, type RunningApp } from '../testing/fixtures.js';

/** Redis unreachable: data reads answer 503 quickly (never 500, never a hang); computed answers still work. */

let redis: Redis;
let api: RunningApp;
let hungRedis: Redis;
let hungApi: RunningApp;
let blackhole: net.Server;
const blackholeSockets: net.Socket[] = [];

beforeAll(async () => {
  const port = await freePort();
  redis = new Redis(`redis://127.0.0.1:${port}/0`, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 500,
    commandTimeout: 1_000,
  });
  redis.on('error', () => {});
  api = await startApp({ redis, env: { REDIS_PREFIX: 't_api_down', REDIS_URL: `redis://127.0.0.1:${port}/0` } });

  // A server that accepts connections and never answers: a Redis that hangs rather than refuses.
  blackhole = net.createServer((socket) => blackholeSockets.push(socket));
  await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
  const hungPort = (blackhole.address() as net.AddressInfo).port;
  // Offline queue on and no commandTimeout: every command waits for a reply that never comes.
  hungRedis = new Redis(`redis://127.0.0.1:${hungPort}/0`, { maxRetriesPerRequest: null, enableOfflineQueue: true });
  hungRedis.on('error', () => {});
  hungApi = await startApp({ redis: hungRedis, env: { REDIS_PREFIX: 't_api_hung' } });
});

afterAll(async () => {
  await api?.close();
  await hungApi?.close();
  redis?.disconnect();
  hungRedis?.disconnect();
  for (const socket of blackholeSockets) socket.destroy();
  await new Promise<void>((resolve) => (blackhole ? blackhole.close(() => resolve()) : resolve()));
});

describe('Redis unreachable', () => {
  it.each(['/api/v1/markets', '/api/v1/markets?q=bitcoin', '/api/v1/markets/some-event'])('answers %s with 503 within 2 s', async (path) => {
    const started = Date.now();
    const res = await fetch(`${api.base}${path}`, { signal: AbortSignal.timeout(5_000) });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.status).toBe(503);
    expect(errorBodySchema.parse(await res.json()).error.code).toBe('unavailable');
  });

  it('still converts odds, which need no Redis', async () => {
    const res = await fetch(`${api.base}/api/v1/odds?chance=0.25`);
    expect(res.status).toBe(200);
    expect(oddsResponseSchema.parse(await res.json()).wins_on_10).toBe(40);
  });

  it('answers 503 within 2 s when Redis accepts but never replies', async () => {
    const started = Date.now();
    const res = await fetch(`${hungApi.base}/api/v1/markets`, { signal: AbortSignal.timeout(5_000) });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(res.status).toBe(503);
    expect(errorBodySchema.parse(await res.json()).error.code).toBe('unavailable');
  });
});
