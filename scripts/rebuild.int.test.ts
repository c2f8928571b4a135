import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@pm/shared/db';
import { createLogger } from '@pm/shared/logger';
import { createSnapshotTrigger, queuePrefix, type JobData, type SnapshotTrigger } from '@pm/shared/queues';
import { createRecords, createRecordsTrigger, type Records, type RecordsTrigger } from '@pm/shared/records';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { createRebuildAllProcessor } from '../services/worker/src/projections/index.js';
import { insertMarkets, logResolution, setChance } from '../services/worker/src/settlement/test-fixture.js';

/**
 * `npm run rebuild` re-derives everything from Postgres, settlement included: a resolved market whose
 * settlement job was lost (no worker ran, Redis forgot it) is settled, and the projections show it.
 * The script only queues the worker's `rebuild-all` job; here the worker's own processor runs it.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let tdb: TestDatabase;
let tr: TestRedis;
let records: Records;
let trigger: RecordsTrigger;
let snapshots: SnapshotTrigger;
let worker: Worker<JobData['rebuild-all'], unknown, 'rebuild-all'>;

beforeAll(async () => {
  [tdb, tr] = await Promise.all([createTestDatabase('rebuild'), createTestRedis('rebuild')]);
  await insertMarkets(tdb.db, ['rb1', 'rb2']);
  records = createRecords({ db: tdb.db, redis: tr.redis, prefix: tr.prefix });
  await records.createUser({ handle: 'rita', displayName: 'Rita' });
  const connection = tr.redis.duplicate({ maxRetriesPerRequest: null });
  trigger = createRecordsTrigger({ redis: connection, prefix: tr.prefix });
  snapshots = createSnapshotTrigger({ redis: tr.redis, prefix: tr.prefix });
  const rebuildAll = createRebuildAllProcessor({ db: tdb.db, redis: tr.redis, prefix: tr.prefix, trigger, snapshots, logger: createLogger('rebuild-test', { LOG_LEVEL: 'silent' }) });
  worker = new Worker<JobData['rebuild-all'], unknown, 'rebuild-all'>('projections', rebuildAll, { connection, prefix: queuePrefix(tr.prefix) });
});

afterAll(async () => {
  await worker?.close();
  await trigger?.close();
  await snapshots?.close();
  await records?.close();
  await tr?.cleanup();
  await tdb?.drop();
});

function rebuild(): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/rebuild.ts'], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: tdb.url, REDIS_URL: tr.url, REDIS_PREFIX: tr.prefix, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('npm run rebuild', () => {
  it('settles resolved markets left with open calls, then projects them', async () => {
    for (const [i, m] of ['rb1', 'rb2'].entries()) {
      await setChance(tr.redis, tr.prefix, m, 0, '0.25');
      await records.recordCall({ handle: 'rita', marketId: m, outcomeIndex: 0, thesis: `call ${i}` });
    }
    await logResolution(tdb.db, 'rb1', 0);
    const { code, out } = await rebuild();
    expect(code, out).toBe(0);
    expect(JSON.parse(out.slice(out.indexOf('{'))) as { settled_markets: number }).toMatchObject({ settled_markets: 1 });
    const calls: Array<{ market_id: string; status: string }> = await tdb.db.query(sql`select market_id, status from calls order by market_id`);
    expect(calls).toEqual([
      { market_id: 'rb1', status: 'won' },
      { market_id: 'rb2', status: 'open' },
    ]);
    const record: Array<{ calls: number; won: number }> = await tdb.db.query(sql`select calls, won from user_records`);
    expect(record).toEqual([{ calls: 2, won: 1 }]);
  }, 60_000);
});
