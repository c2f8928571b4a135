import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../db/index.js';
import { createLogger } from '../logger.js';
import { createServiceMetrics } from '../metrics.js';
import { checkReadiness, redisCheck, startOpsServer, type OpsServer } from './ops.js';
import { postgresCheck } from '../db/readiness.js';
import { freePort, startOwnRedis, testServices, uniqueSuffix, type OwnRedis } from '../testing/index.js';
import { eventually, until } from '../wait.js';

/**
 * /readyz says what is down in words: a Redis of this test's own (never the shared one) is stopped
 * under a running ops server and started again; a Postgres with nothing on its port, and one without
 * the database, are named with the reason.
 */

interface Ready {
  ok: boolean;
  checks: Record<string, { ok: boolean; ms: number; error?: string }>;
}

async function readyz(ops: OpsServer): Promise<{ status: number; body: Ready }> {
  const res = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
  return { status: res.status, body: (await res.json()) as Ready };
}

/** Polls /readyz until `ok` holds (a client notices a dead server on its next reconnect attempt). */
async function readyzUntil(ops: OpsServer, ok: (r: { status: number; body: Ready }) => boolean, timeoutMs = 15_000) {
  let last: { status: number; body: Ready } | undefined;
  return until(
    () => `/readyz to match; last: ${last?.status} ${JSON.stringify(last?.body)}`,
    async () => {
      last = await readyz(ops);
      return ok(last) && last;
    },
    { timeoutMs, everyMs: 100 },
  );
}

describe('/readyz with a dependency down', () => {
  let own: OwnRedis;
  let redis: Redis;
  let ops: OpsServer;

  beforeAll(async () => {
    own = await startOwnRedis();
    // As the services connect: BullMQ's settings, so a PING would wait for the reconnect forever.
    redis = new Redis(own.url, { maxRetriesPerRequest: null });
    ops = await startOpsServer({
      host: '127.0.0.1',
      port: 0,
      metrics: createServiceMetrics('worker'),
      readiness: { redis: redisCheck(redis) },
      logger: createLogger('worker', { LOG_LEVEL: 'silent' }),
    });
  });

  afterAll(async () => {
    await ops?.close();
    redis?.disconnect();
    await own?.stop();
  });

  it('names Redis, its address and why when it stops, and is ready again when it is back', async () => {
    const before = await readyzUntil(ops, (r) => r.status === 200);
    expect(before.body).toMatchObject({ ok: true, checks: { redis: { ok: true } } });

    await own.stop();
    const expected = `Redis at 127.0.0.1:${own.port} is not answering (connection refused)`;
    const down = await readyzUntil(ops, (r) => r.body.checks['redis']?.error === expected);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ ok: false, checks: { redis: { ok: false, ms: expect.any(Number), error: expected } } });
    // Answered at once from the client's state, not after a PING timed out.
    expect(down.body.checks['redis']!.ms).toBeLessThan(500);
    process.stdout.write(`\n/readyz with Redis stopped: ${down.status} ${JSON.stringify(down.body)}\n`);

    await own.start();
    const back = await readyzUntil(ops, (r) => r.status === 200, 30_000);
    expect(back.body.checks['redis']).toMatchObject({ ok: true });
  }, 60_000);
});

/** Runs the check until its error is `expected` (the first probe may only see the deadline pass). */
function checkUntil(check: ReturnType<typeof postgresCheck>, expected: string) {
  return eventually(() => checkReadiness({ postgres: check }), (report) => report.checks['postgres']?.error === expected, { timeoutMs: 15_000, everyMs: 200 });
}

describe('Postgres named in words', () => {
  it('says nothing answers on its port', async () => {
    const port = await freePort();
    const url = `postgres://postgres:secret@127.0.0.1:${port}/predictions`;
    const db = createDb(url);
    try {
      const expected = `Postgres at 127.0.0.1:${port} is not answering (connection refused)`;
      const report = await checkUntil(postgresCheck(db, url), expected);
      expect(report).toEqual({ ok: false, checks: { postgres: { ok: false, ms: expect.any(Number), error: expected } } });
    } finally {
      await db.dispose();
    }
  });

  it("repeats the server's own words when it answers with an error, never the password", async () => {
    const url = new URL((await testServices()).postgresUrl);
    url.pathname = `/pm_missing_${uniqueSuffix()}`;
    const db = createDb(url.toString());
    try {
      const expected = `Postgres at ${url.hostname}:${url.port || '5432'} answered with an error: database "${url.pathname.slice(1)}" does not exist`;
      const error = (await checkUntil(postgresCheck(db, url.toString()), expected)).checks['postgres']?.error ?? '';
      expect(error).toBe(expected);
      if (url.password) expect(error).not.toContain(url.password);
    } finally {
      await db.dispose();
    }
  });
});

describe('a check that hangs', () => {
  it('fails with its name and the deadline, and does not hang the probe', async () => {
    const report = await checkReadiness({ started: () => new Promise<void>(() => {}) }, 200);
    expect(report).toEqual({ ok: false, checks: { started: { ok: false, ms: expect.any(Number), error: 'started did not answer within 200 ms' } } });
  });
});
