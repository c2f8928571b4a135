/**
 * bench:settle --hot-sizes: one market of each size settled in parts (settle-market.ts, the job's
 * own code, in this process), every call by a distinct person, a combo per 50 calls with its other
 * leg decided; the first size three times (median printed). Per size:
 *   bench:settle hot=<n> committed_s=… us_per_call=… rss_mb=… parts=…
 * and during the largest, a 10-call market resolved and settled every 3 s beside it (on a pool of
 * its own, as another worker's job) and a call written every 200 ms through the write path, each
 * against the same measured on a quiet database first:
 *   bench:settle during=<n> others_committed_p99_s=… call_write_p99_ms=… call_write_quiet_p99_ms=…
 * The settlement runs in this process, so rss_mb is this process's peak resident size during it
 * (the data set lives in Postgres; the process holds only the parts' people and combos).
 */
import { Redis } from 'ioredis';
import { sql, type Db } from '@pm/shared/db';
import { createDb } from '@pm/shared/db';
import { redisKeys } from '@pm/shared/redis';
import { createRecords } from '@pm/shared/records';
import { createTestDatabase, startOwnRedis } from '@pm/shared/testing';
import { sleep } from '@pm/shared/wait';
import { rebuildProjections } from '../../services/worker/src/projections/index.js';
import { settleMarket } from '../../services/worker/src/settlement/index.js';
import { datasetSteps, resolveMarket } from '../support/records-dataset.js';

const say = (line: string) => process.stdout.write(`${line}\n`);
const p99 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? NaN;
};

/** A market `id` on event e0 with `n` open calls by people 1..n and a combo per 50 of them (other leg decided). */
async function sizedMarket(db: Db, id: string, n: number): Promise<void> {
  await db.query(sql`insert into markets (id, event_id, condition_id, position, question) values (${id}, 'e0', ${`cond-${id}`}, 0, ${`The ${id} market?`})`);
  await db.query(sql`insert into outcomes (market_id, outcome_index, name, token_id) select ${id}, o, case o when 0 then 'Yes' else 'No' end, ${`tok-${id}-`} || o from generate_series(0, 1) o`);
  await db.query(sql`
    insert into calls (id, user_id, market_id, outcome_index, chance_at_call, thesis, made_at)
    select ${`${id}-`} || g, g, ${id}, g % 2, (0.05 + (g % 90) / 100.0)::numeric, '', now() - interval '1 hour' from generate_series(1, ${n}) g`);
  await db.query(sql`
    insert into combos (id, user_id, chance, wins_on_10, made_at)
    select ${`${id}-k`} || g, 1 + (g * 13) % ${n}, 0.25, 40, now() - interval '2 hours' from generate_series(1, ${Math.ceil(n / 50)}) g`);
  await db.query(sql`
    insert into combo_legs (combo_id, leg_index, market_id, outcome_index, chance_at_call, status, settled_at)
    select ${`${id}-k`} || g, 0, ${id}, 0, 0.5, 'open', null from generate_series(1, ${Math.ceil(n / 50)}) g
    union all
    select ${`${id}-k`} || g, 1, 'm1', 1, 0.5, case when g % 2 = 0 then 'won' else 'void' end, now() - interval '1 hour' from generate_series(1, ${Math.ceil(n / 50)}) g`);
}

export async function settleSizes(sizes: number[]): Promise<void> {
  const largest = Math.max(...sizes);
  const runs = sizes.flatMap((n, i) => (i === 0 ? [1, 2, 3].map((r) => ({ n, id: `size${n}-${r}` })) : [{ n, id: `size${n}` }]));
  say(`bench:settle --hot-sizes ${sizes.join(',')} — ${largest.toLocaleString('en')} people; ${runs.map((r) => r.id).join(', ')}`);
  const tdb = await createTestDatabase('bench_sizes');
  const other = createDb(tdb.url, { poolSize: 2 });
  const redisServer = await startOwnRedis();
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  const prefix = 'bench';
  const records = createRecords({ db: other, redis, prefix });
  try {
    const db = tdb.db;
    for (const step of datasetSteps({ calls: 200_000, users: largest, hot: 10 })) {
      const t0 = performance.now();
      await step.run(db);
      say(`  ${step.label.padEnd(58)} ${String(Math.round(performance.now() - t0)).padStart(8)} ms`);
    }
    for (const r of runs) await sizedMarket(db, r.id, r.n);
    // Small markets resolved beside the largest, 10 callers each; and one open market to write calls on.
    const smalls = Array.from({ length: 100 }, (_, i) => `small${i}`);
    for (const id of smalls) await sizedMarket(db, id, 10);
    await sizedMarket(db, 'writes', 1);
    await redis.hset(redisKeys(prefix).chances, 'tok-writes-0', '0.5', 'tok-writes-1', '0.5');
    let t0 = performance.now();
    await rebuildProjections(db, new Date());
    await db.query(sql`vacuum (analyze)`);
    say(`  ${'every projection, vacuum analyze'.padEnd(58)} ${String(Math.round(performance.now() - t0)).padStart(8)} ms`);

    let writer = 0;
    const writeCalls = (stop: () => boolean) =>
      (async () => {
        const ms: number[] = [];
        while (!stop()) {
          // The live chance as the ingestor keeps it fresh.
          await redis.hset(redisKeys(prefix).chanceAt, 'tok-writes-0', String(Date.now()), 'tok-writes-1', String(Date.now()));
          const a = performance.now();
          await records.recordCall({ handle: `user${1 + (writer++ % largest)}`, marketId: 'writes', outcomeIndex: writer % 2, thesis: '' });
          ms.push(performance.now() - a);
          await sleep(200); // pacing: one write every 200 ms
        }
        return ms;
      })();
    // Quiet baseline: calls written with nothing settling, 10 s.
    let quietOver = false;
    const quietTimer = setTimeout(() => (quietOver = true), 10_000);
    const quiet = await writeCalls(() => quietOver);
    clearTimeout(quietTimer);

    const results = new Map<number, number[]>();
    for (const r of runs) {
      await resolveMarket(db, r.id, 0);
      let peak = process.memoryUsage().rss;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
      let over = false;
      const during = r.n === largest ? { writes: writeCalls(() => over), others: settleOthers(() => over) } : undefined;
      t0 = performance.now();
      const settled = await settleMarket(db, r.id, new Date());
      const s = (performance.now() - t0) / 1000;
      over = true;
      clearInterval(sampler);
      const calls = settled.calls.won + settled.calls.lost + settled.calls.void;
      say(`bench:settle hot=${r.n} committed_s=${s.toFixed(2)} us_per_call=${Math.round((s * 1e6) / calls)} rss_mb=${Math.round(peak / 2 ** 20)} parts=${settled.parts} combos=${settled.combos.length}`);
      results.set(r.n, [...(results.get(r.n) ?? []), s]);
      if (during) {
        const [writes, others] = await Promise.all([during.writes, during.others]);
        say(
          `bench:settle during=${r.n} others_committed_p99_s=${(p99(others) / 1000).toFixed(2)} others=${others.length} call_write_p99_ms=${p99(writes).toFixed(1)} call_write_quiet_p99_ms=${p99(quiet).toFixed(1)} writes=${writes.length}`,
        );
      }
    }
    const first = [...(results.get(sizes[0]!) ?? [])].sort((a, b) => a - b);
    say(`bench:settle hot=${sizes[0]} committed_median_s=${first[1]?.toFixed(2)} (of ${first.map((x) => x.toFixed(2)).join(', ')})`);

    /** Every 3 s, one of the small markets resolved and settled on the other pool; ms to its commit each. */
    async function settleOthers(stop: () => boolean): Promise<number[]> {
      const ms: number[] = [];
      for (const id of smalls) {
        if (stop()) break;
        await resolveMarket(other, id, 1);
        const a = performance.now();
        await settleMarket(other, id, new Date());
        ms.push(performance.now() - a);
        await sleep(3000); // pacing: one small settlement every 3 s
      }
      return ms;
    }
  } finally {
    await records.close();
    redis.disconnect();
    await redisServer.stop();
    await other.dispose();
    await tdb.drop();
  }
}
