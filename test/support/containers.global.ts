import { chooseTestServices, dockerReachable, givenUrls, startTestContainers } from '@pm/shared/testing/services';

/**
 * vitest global setup: where a Docker engine answers and no test URLs are given, start Postgres 18
 * and Redis 7 containers once for the whole run and hand their URLs to every test file (the workers
 * inherit TEST_DATABASE_URL and TEST_REDIS_URL); each file still makes its own database and prefix on
 * them. Elsewhere this does nothing and the tests use the given or local servers. It loads only the
 * choosing module, not the whole test toolbox (pg, ioredis, migrations): it runs before every test run.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  const given = givenUrls(process.env);
  if (given.postgresUrl && given.redisUrl) return undefined;
  const choice = chooseTestServices({ ...given, dockerReachable: await dockerReachable() });
  if (choice.postgres.from !== 'container' && choice.redis.from !== 'container') return undefined;
  const started = await startTestContainers(choice);
  process.env.TEST_DATABASE_URL = started.postgresUrl;
  process.env.TEST_REDIS_URL = started.redisUrl;
  console.log(`[test services] containers: ${started.postgresUrl.replace(/\/\/[^@]*@/, '//')} ${started.redisUrl}`);
  return () => started.stop();
}
