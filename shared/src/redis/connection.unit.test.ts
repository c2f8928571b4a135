import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config.js';
import { isClusterUrl, parseRedisUrl } from './connection.js';
import { redisKeys } from './keys.js';
import { queuePrefix } from '../queues/names.js';

describe('REDIS_URL', () => {
  it('takes one server as it is', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379/0')).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6379/0' });
    expect(parseRedisUrl('rediss://u:p@cache.example:6380').kind).toBe('single');
  });

  it('lists the nodes of a cluster, with credentials and TLS', () => {
    expect(parseRedisUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001,redis-c:7002')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: 'redis-c', port: 7002 },
      ],
      tls: false,
    });
    expect(parseRedisUrl('rediss+cluster://app:s%40cret@[::1]:7000/')).toEqual({
      kind: 'cluster',
      nodes: [{ host: '::1', port: 7000 }],
      username: 'app',
      password: 's@cret',
      tls: true,
    });
    expect(isClusterUrl('redis+cluster://a:1')).toBe(true);
    expect(isClusterUrl('redis://a:1')).toBe(false);
  });

  it('refuses a cluster node without a port, a database number, or another scheme, naming the variable', () => {
    expect(() => parseRedisUrl('redis+cluster://a:7000,b')).toThrow(/"b" must be host:port/);
    expect(() => parseRedisUrl('redis+cluster://a:7000/1')).toThrow(/no database number/);
    expect(() => parseRedisUrl('http://a:7000')).toThrow(/must start with redis:\/\//);
    expect(() => parseConfig({ REDIS_URL: 'redis+cluster://a:99999' })).toThrow(/REDIS_URL: cluster node "a:99999"/);
    expect(parseConfig({ REDIS_URL: 'redis+cluster://a:7000,b:7001' }).REDIS_URL).toBe('redis+cluster://a:7000,b:7001');
  });
});

describe('key names on a cluster', () => {
  const tagOf = (key: string) => /\{([^}]*)\}/.exec(key)?.[1];

  it('puts every key used together under the stack hash tag, and spreads the rate-limit counters', () => {
    const keys = redisKeys('pm');
    const together = [keys.chances, keys.chanceAt, keys.feed, keys.dirtyEvents, keys.dirtyHistory, keys.backfilledHistory, keys.dirtyRecords, keys.catalogVersion, keys.snapshot('live'), keys.snapshotBuiltAt];
    expect(new Set(together.map(tagOf))).toEqual(new Set(['pm']));
    expect(tagOf(`${keys.rateLimitPrefix}203.0.113.9`)).toBeUndefined();
  });

  it('gives BullMQ its own tag, so every key of every queue is in one slot apart from the rest', () => {
    expect(tagOf(`${queuePrefix('pm')}:settlement:id`)).toBe('pm:bull');
  });
});
