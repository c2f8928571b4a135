import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createReadyCache } from './ready-cache.js';
import { readyResponse, serveReady } from './ready-response.js';

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

  it('keeps the responses still asked for and drops the least recently used', () => {
    const cache = createReadyCache(snapshots, 3);
    for (let i = 0; i < 3; i++) cache.remember(`/c?${i}`, entry(10));
    expect(cache.lookup('/c?0')).toBeDefined();
    cache.remember('/c?3', entry(10));
    expect([0, 1, 2, 3].filter((i) => cache.lookup(`/c?${i}`) !== undefined)).toEqual([0, 2, 3]);
  });

  it('drops the oldest past its entry count, and a response whose snapshot moved on', () => {
    let version = '"v1"';
    const cache = createReadyCache({ version: () => version, live: () => true }, 3);
    for (let i = 0; i < 5; i++) cache.remember(`/b?${i}`, entry(10));
    expect([...Array(5).keys()].filter((i) => cache.lookup(`/b?${i}`) !== undefined)).toEqual([2, 3, 4]);
    version = '"v2"';
    expect(cache.lookup('/b?4')).toBeUndefined();
  });

  it('holds a body that arrived as a slice of a larger read, and its encodings, by their own bytes only', async () => {
    // As ioredis hands over a reply: a view on the 64 KB the socket read it in.
    const read = Buffer.alloc(64 * 1024, 0x20);
    const json = Buffer.from(JSON.stringify({ data: Array.from({ length: 200 }, (_, i) => ({ i, name: `market ${i}` })) }));
    json.copy(read, 1_000);
    const slice = read.subarray(1_000, 1_000 + json.length);
    const ready = readyResponse('/api/v1/markets', '"e"', 'public, max-age=5', slice);
    expect(ready.body.equals(json)).toBe(true);
    expect(ready.body.buffer.byteLength).toBe(json.length);
    // Encodings made on demand, as a client asking for each gets them.
    const server = http.createServer((req, res) => void serveReady(req, res, ready));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      for (const coding of ['gzip', 'br'] as const) {
        const res = await fetch(url, { headers: { 'accept-encoding': coding } });
        expect(res.headers.get('content-encoding')).toBe(coding);
        expect(Buffer.from(await res.arrayBuffer()).equals(json)).toBe(true);
        const encoded = ready.encoded.get(coding) as Buffer;
        expect((coding === 'br' ? zlib.brotliDecompressSync(encoded) : zlib.gunzipSync(encoded)).equals(json)).toBe(true);
        expect(encoded.buffer.byteLength).toBe(encoded.length);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
