import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createDb, sql, type Db } from '@pm/shared/db';
import { createRecords } from '@pm/shared/records';
import { createTestDatabase, createTestRedis, startCommitCutter, type CommitCutter, type TestDatabase, type TestRedis } from '@pm/shared/testing';
import { insertMarkets, setChance } from '../../../services/worker/src/settlement/test-fixture.js';
import { crowdWrite } from './write.js';

/**
 * The demo crowd's writes through a lost commit answer (a relay in front of Postgres that cuts the
 * connection once the server committed): the crowd sends the call again with its key and is answered
 * with the one written, so the call exists once; a refusal is answered with undefined, not thrown.
 */
let tdb: TestDatabase;
let tr: TestRedis;
let cutter: CommitCutter;
let cutDb: Db;

beforeAll(async () => {
  [tdb, tr] = await Promise.all([createTestDatabase('crowd_write'), createTestRedis('crowd_write')]);
  await insertMarkets(tdb.db, ['cw1']);
  cutter = await startCommitCutter(tdb.url);
  cutDb = createDb(cutter.url, { poolSize: 2 });
});

afterAll(async () => {
  await cutDb?.dispose();
  await cutter?.close();
  await tr?.cleanup();
  await tdb?.drop();
});

describe('a crowd write in doubt', () => {
  it('is sent again with its key and answered with the call written, which exists once', async () => {
    const records = createRecords({ db: cutDb, redis: tr.redis, prefix: tr.prefix });
    await records.createUser({ handle: 'crowdy', displayName: 'Crowdy' });
    await setChance(tr.redis, tr.prefix, 'cw1', 0, '0.3');
    const warnings: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void warnings.push(line) });
    cutter.armNextCommit();
    const made = await crowdWrite(logger, 'recordCall', (key) => records.recordCall({ handle: 'crowdy', marketId: 'cw1', outcomeIndex: 0, thesis: 'crowd in doubt', key }));
    expect(cutter.cut()).toBe(1);
    expect(made?.repeated).toBe(true);
    const rows: Array<{ id: string }> = await tdb.db.query(sql`select id from calls where thesis = 'crowd in doubt'`);
    expect(rows.map((r) => r.id)).toEqual([made!.id]);
    expect(warnings.some((w) => w.includes('crowd write in doubt'))).toBe(true);
    // A refusal is part of the crowd's life: undefined, nothing thrown.
    expect(await crowdWrite(logger, 'recordCall', (key) => records.recordCall({ handle: 'nobody', marketId: 'cw1', outcomeIndex: 0, thesis: '', key }))).toBeUndefined();
  });
});
