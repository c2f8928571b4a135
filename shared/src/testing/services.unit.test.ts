import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseTestServices, dockerHints, givenUrls, LOCAL_POSTGRES_URL, LOCAL_REDIS_URL } from './services.js';

/** Where the tests' Postgres and Redis come from, decided without starting anything. */

describe('chooseTestServices', () => {
  it('takes the URLs given, Docker or not', () => {
    for (const dockerReachable of [true, false]) {
      expect(chooseTestServices({ postgresUrl: 'postgres://pg.test/x', redisUrl: 'redis://r.test:6379/0', dockerReachable })).toEqual({
        postgres: { from: 'environment', url: 'postgres://pg.test/x' },
        redis: { from: 'environment', url: 'redis://r.test:6379/0' },
      });
    }
  });

  it('starts containers where a Docker engine answers and no URL is given', () => {
    expect(chooseTestServices({ postgresUrl: undefined, redisUrl: undefined, dockerReachable: true })).toEqual({
      postgres: { from: 'container' },
      redis: { from: 'container' },
    });
  });

  it('starts a container only for the server whose URL is missing', () => {
    expect(chooseTestServices({ postgresUrl: 'postgres://pg.test/x', redisUrl: undefined, dockerReachable: true })).toEqual({
      postgres: { from: 'environment', url: 'postgres://pg.test/x' },
      redis: { from: 'container' },
    });
  });

  it('uses the local servers where no Docker engine answers', () => {
    expect(chooseTestServices({ postgresUrl: undefined, redisUrl: undefined, dockerReachable: false })).toEqual({
      postgres: { from: 'local', url: LOCAL_POSTGRES_URL },
      redis: { from: 'local', url: LOCAL_REDIS_URL },
    });
  });
});

describe('givenUrls', () => {
  it('prefers the test-only names, and counts an empty value as not given', () => {
    expect(givenUrls({ TEST_DATABASE_URL: 'postgres://t/x', DATABASE_URL: 'postgres://d/x', TEST_REDIS_URL: '', REDIS_URL: 'redis://r:1/0' })).toEqual({
      postgresUrl: 'postgres://t/x',
      redisUrl: 'redis://r:1/0',
    });
    expect(givenUrls({})).toEqual({ postgresUrl: undefined, redisUrl: undefined });
  });
});

describe('dockerHints', () => {
  const emptyHome = () => mkdtempSync(path.join(os.tmpdir(), 'pm-home-'));

  it('names DOCKER_HOST and the sockets and files that exist', () => {
    const home = emptyHome();
    writeFileSync(path.join(home, '.testcontainers.properties'), 'docker.host=tcp://127.0.0.1:2375\n');
    const hints = dockerHints({ DOCKER_HOST: 'tcp://127.0.0.1:2375' }, home);
    expect(hints).toContain('tcp://127.0.0.1:2375');
    expect(hints).toContain(path.join(home, '.testcontainers.properties'));
  });

  it('finds nothing in an empty home without DOCKER_HOST (apart from a system socket, where there is one)', () => {
    const hints = dockerHints({}, emptyHome());
    expect(hints.filter((h) => h !== '/var/run/docker.sock')).toEqual([]);
  });
});
