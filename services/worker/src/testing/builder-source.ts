import { createLogger } from '@pm/shared/logger';
import type { PrefixedRedis } from '@pm/shared/redis';
import type { TestDatabase } from '@pm/shared/testing';

/** The public web address the snapshot tests build links with. */
export const WEB_URL = 'https://predict.example';

/**
 * What every snapshot builder under test reads and writes (the same `source` worker.ts hands both
 * builder families): the test's database and Redis prefix, a silent logger and the test's clock.
 */
export function builderSource(tdb: Pick<TestDatabase, 'db'>, tr: PrefixedRedis, now: () => number = Date.now) {
  return {
    db: tdb.db,
    redis: tr.redis,
    prefix: tr.prefix,
    webUrl: WEB_URL,
    logger: createLogger('worker-test', { LOG_LEVEL: 'silent' }),
    clock: { now },
  };
}
