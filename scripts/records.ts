/**
 * The write path from the command line (`npm run records -- <command> …`), against the stack's
 * DATABASE_URL / REDIS_URL / REDIS_PREFIX. Prints the result as JSON; a refusal (or a usage error)
 * is one clear line on stderr and exit code 1.
 *   user     --handle h --name "N" [--bio "…"] [--interests "Football: EPL,Crypto"] [--avatar URL]
 *   call     --user h --market <id> --outcome <index|name> --thesis "…" [--copy <callId>] [--fade]
 *   update   --call <id> --body "…"
 *   combo    --user h --leg <marketId>:<outcome> --leg <marketId>:<outcome> …   (outcome: index or name)
 *   follow   --user a --target b
 *   unfollow --user a --target b
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '@pm/shared/config';
import { createRedis } from '@pm/shared/redis';
import { createDb, migrate, sql, type Db } from '@pm/shared/db';
import { createRecords, RecordRefused, RecordsUnavailable, type Records } from '@pm/shared/records';

const USAGE = `usage: npm run records -- <user|call|update|combo|follow|unfollow> [options]  (see scripts/records.ts)`;

class UsageError extends Error {}

function need(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** An outcome given as its index, or as its name (case-insensitive) looked up on the market. */
async function outcomeIndex(db: Db, marketId: string, given: string): Promise<number> {
  if (/^\d+$/.test(given)) return Number(given);
  // Input: market id, outcome name. Output: the index of that outcome, if the market has it.
  const rows: Array<{ outcome_index: number }> = await db.query(sql`
    select outcome_index from outcomes where market_id = ${marketId} and lower(name) = lower(${given.trim()})
  `);
  if (!rows[0]) throw new RecordRefused('unknown_outcome', `market ${marketId} has no outcome named ${JSON.stringify(given)}`);
  return rows[0].outcome_index;
}

async function run(command: string, args: string[], records: Records, db: Db): Promise<unknown> {
  const { values } = parseArgs({
    args,
    options: {
      handle: { type: 'string' },
      name: { type: 'string' },
      bio: { type: 'string' },
      interests: { type: 'string' },
      avatar: { type: 'string' },
      user: { type: 'string' },
      market: { type: 'string' },
      outcome: { type: 'string' },
      thesis: { type: 'string' },
      copy: { type: 'string' },
      fade: { type: 'boolean', default: false },
      call: { type: 'string' },
      body: { type: 'string' },
      leg: { type: 'string', multiple: true },
      target: { type: 'string' },
    },
    allowPositionals: false,
  });
  switch (command) {
    case 'user':
      return records.createUser({
        handle: need(values, 'handle'),
        displayName: need(values, 'name'),
        ...(values.bio === undefined ? {} : { bio: values.bio }),
        ...(values.avatar === undefined ? {} : { avatar: values.avatar }),
        ...(values.interests === undefined ? {} : { interests: values.interests.split(',').map((s) => s.trim()).filter(Boolean) }),
      });
    case 'call': {
      const marketId = need(values, 'market');
      return records.recordCall({
        handle: need(values, 'user'),
        marketId,
        outcomeIndex: await outcomeIndex(db, marketId, need(values, 'outcome')),
        thesis: values.thesis ?? '',
        copiedFrom: values.copy ?? null,
        isFade: values.fade ?? false,
      });
    }
    case 'update':
      return records.addThesisUpdate(need(values, 'call'), need(values, 'body'));
    case 'combo': {
      const legs = [];
      for (const leg of values.leg ?? []) {
        const at = leg.lastIndexOf(':');
        if (at <= 0 || at === leg.length - 1) throw new UsageError(`--leg must be <marketId>:<outcome>, got ${JSON.stringify(leg)}`);
        const marketId = leg.slice(0, at);
        legs.push({ marketId, outcomeIndex: await outcomeIndex(db, marketId, leg.slice(at + 1)) });
      }
      return records.recordCombo({ handle: need(values, 'user'), legs });
    }
    case 'follow':
      await records.follow(need(values, 'user'), need(values, 'target'));
      return { following: true };
    case 'unfollow':
      await records.unfollow(need(values, 'user'), need(values, 'target'));
      return { following: false };
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  }
}

async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  if (command === undefined || command === '--help') {
    process.stderr.write(`${USAGE}\n`);
    return 1;
  }
  const config = loadConfig();
  await migrate(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, { poolSize: 2 });
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 3 });
  const records = createRecords({ db, redis, prefix: config.REDIS_PREFIX });
  try {
    const result = await run(command, args, records, db);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof RecordRefused) process.stderr.write(`refused (${err.code}): ${err.message}\n`);
    else if (err instanceof RecordsUnavailable) process.stderr.write(`not confirmed: ${err.message}\n`);
    else if (err instanceof UsageError || (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`${err.message}\n${USAGE}\n`);
    } else throw err;
    return 1;
  } finally {
    await records.close();
    await db.dispose();
    redis.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`records failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
