/**
 * The write path from the command line (`npm run records -- <command> …`), against the stack's
 * DATABASE_URL / REDIS_URL / REDIS_PREFIX. Prints the result as JSON in the API's snake_case; a
 * refusal is one clear line on stderr and exit code 1; a usage error prints the usage and exits 2.
 * `--help` prints the usage (below).
 */
import { loadConfig } from '@pm/shared/config';
import { createRedis } from '@pm/shared/redis';
import { createDb, migrate, sql, tables, type Db } from '@pm/shared/db';
import { brierOf, calibration, CATEGORIES, clvOf, skillSums, type SkillCall } from '@pm/shared/domain';
import { createRecords, newWriteKey, RecordRefused, RecordsUnavailable, retryInDoubt, type Records } from '@pm/shared/records';
import { parseCli, printJson, usageError } from './lib/cli.js';

const USAGE = `usage: npm run records -- <command> [options]

Records through the service's own write path, at the live price, against DATABASE_URL, REDIS_URL
and REDIS_PREFIX. Prints the result as JSON.

commands:
  user      --handle <h> --name <display name> [--bio <text>] [--interests "Football: EPL,Crypto"] [--avatar <url>]
  call      --user <h> --market <market id> --outcome <index|name> [--thesis <text>] [--copy <call id>] [--fade] [--key <k>]
  update    --call <call id> --body <text> [--key <k>]
  combo     --user <h> --leg <market id>:<index|name> --leg <market id>:<index|name> … [--key <k>]   (2 to 6 legs)
  follow    --user <h> --target <h>
  unfollow  --user <h> --target <h>
  show      --handle <h> [--category <category>]   a person's record with its skill figures (brier,
            calibration, clv), recomputed from their settled calls and the markets' closing chances

--key: the write's idempotency key (one person's, any text up to 200 characters; one is made when
  not given). A write whose answer was lost with the connection (Postgres restarting or failing over)
  is sent again with its key for up to a minute: if it was written, the answer is that one
  ("repeated": true), never a second call. Sent again later with the same --key, it does the same;
  the same key with different content is refused.

exit codes: 0 recorded · 1 refused or not confirmed (the message says why) · 2 usage error
  -h, --help  this text`;

const COMMAND = 'records';

/** Options that each take one text value. */
function textOptions<K extends string>(...names: K[]): Record<K, { type: 'string' }> {
  return Object.fromEntries(names.map((n) => [n, { type: 'string' }])) as Record<K, { type: 'string' }>;
}

/** The options of each command; any other option is a usage error naming it. */
const COMMANDS = {
  user: textOptions('handle', 'name', 'bio', 'interests', 'avatar'),
  call: { ...textOptions('user', 'market', 'outcome', 'thesis', 'copy', 'key'), fade: { type: 'boolean', default: false } },
  update: textOptions('call', 'body', 'key'),
  combo: { ...textOptions('user', 'key'), leg: { type: 'string', multiple: true } },
  follow: textOptions('user', 'target'),
  unfollow: textOptions('user', 'target'),
  show: textOptions('handle', 'category'),
} as const;
type Command = keyof typeof COMMANDS;

function need(values: Record<string, unknown>, name: string, command: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.trim() === '') usageError({ command: `${COMMAND} ${command}`, usage: USAGE }, `--${name} is required`);
  return v;
}

/** An outcome given as its index, or as its name (case-insensitive) looked up on the market. */
async function outcomeIndex(db: Db, marketId: string, given: string): Promise<number> {
  if (/^\d+$/.test(given)) return Number(given);
  // Input: market id, outcome name. Output: the market's outcomes (none: the market is unknown).
  const rows = await tables.outcomes(db).find({ market_id: marketId }).orderByAsc('outcome_index').select('outcome_index', 'name').all();
  // An unknown market is said as such, not as a missing outcome of it (the write path says the same).
  if (rows.length === 0) throw new RecordRefused('unknown_market', `no market with id ${marketId}`);
  const match = rows.find((r) => r.name.toLowerCase() === given.trim().toLowerCase());
  if (!match) {
    throw new RecordRefused('unknown_outcome', `market ${marketId} has no outcome named ${JSON.stringify(given)} (its outcomes: ${rows.map((r) => r.name).join(', ')})`);
  }
  return match.outcome_index;
}

/** How long a write in doubt is sent again: longer than a failover of the primary takes. */
const IN_DOUBT_RETRY_MS = 60_000;

async function run(command: Command, args: string[], records: Records, db: Db): Promise<unknown> {
  const { values: parsed } = parseCli({ command: `${COMMAND} ${command}`, usage: USAGE, options: COMMANDS[command], args });
  const values = parsed as Record<string, string | boolean | string[] | undefined>;
  const text = (name: string): string | undefined => (typeof values[name] === 'string' ? values[name] : undefined);
  const key = text('key') ?? newWriteKey();
  /** A keyed write, sent again with its key while it is in doubt (each retry said on stderr). */
  const keyed = <T>(write: () => Promise<T>): Promise<T> =>
    retryInDoubt(write, {
      timeoutMs: IN_DOUBT_RETRY_MS,
      onRetry: (err, attempt) => process.stderr.write(`in doubt (attempt ${attempt}): ${err.message}; sending it again with key ${JSON.stringify(key)}\n`),
    }).catch((err: unknown) => {
      if (err instanceof RecordsUnavailable) err.message += `; to send it again later: --key ${JSON.stringify(key)}`;
      throw err;
    });
  switch (command) {
    case 'user': {
      const interests = text('interests');
      return records.createUser({
        handle: need(values, 'handle', command),
        displayName: need(values, 'name', command),
        ...(text('bio') === undefined ? {} : { bio: text('bio') }),
        ...(text('avatar') === undefined ? {} : { avatar: text('avatar') }),
        ...(interests === undefined ? {} : { interests: interests.split(',').map((s) => s.trim()).filter(Boolean) }),
      });
    }
    case 'call': {
      const handle = need(values, 'user', command);
      const marketId = need(values, 'market', command);
      const outcome = need(values, 'outcome', command);
      const input = {
        handle,
        marketId,
        outcomeIndex: await outcomeIndex(db, marketId, outcome),
        thesis: text('thesis') ?? '',
        copiedFrom: text('copy') ?? null,
        isFade: values['fade'] === true,
        key,
      };
      return keyed(() => records.recordCall(input));
    }
    case 'update': {
      const [callId, body] = [need(values, 'call', command), need(values, 'body', command)];
      return keyed(() => records.addThesisUpdate(callId, body, { key }));
    }
    case 'combo': {
      const handle = need(values, 'user', command);
      const legs: Array<{ marketId: string; outcomeIndex: number }> = [];
      for (const leg of (values['leg'] as string[] | undefined) ?? []) {
        const at = leg.lastIndexOf(':');
        if (at <= 0 || at === leg.length - 1) usageError({ command: `${COMMAND} combo`, usage: USAGE }, `--leg must be <market id>:<outcome>, got ${JSON.stringify(leg)}`);
        const marketId = leg.slice(0, at);
        legs.push({ marketId, outcomeIndex: await outcomeIndex(db, marketId, leg.slice(at + 1)) });
      }
      return keyed(() => records.recordCombo({ handle, legs, key }));
    }
    case 'follow':
      await records.follow(need(values, 'user', command), need(values, 'target', command));
      return { following: true };
    case 'unfollow':
      await records.unfollow(need(values, 'user', command), need(values, 'target', command));
      return { following: false };
    case 'show':
      return show(db, need(values, 'handle', command).replace(/^@/, ''), text('category'));
  }
}

/**
 * A person's record (user_records) with the skill figures of their settled calls, recomputed here
 * with the domain's rules from the calls and their markets' closing chances (the API's figures come
 * from the records; the two agree). Input: handle, category. Output: the record, or a refusal.
 */
async function show(db: Db, handle: string, category: string | undefined): Promise<unknown> {
  const field = category === undefined ? null : CATEGORIES.find((c) => c.toLowerCase() === category.toLowerCase());
  if (field === undefined) throw new RecordRefused('bad_input', `--category must be one of ${CATEGORIES.join(', ')}`);
  // Input: handle. Output: the person and their record (zeros before the projection reaches them).
  const [person]: Array<{ id: number; handle: string; settled: number | null; won: number | null; right_pct: number | null; profit_on_10: string | null; xp: number | null }> = await db.query(sql`
    select u.id, u.handle, r.settled, r.won, r.right_pct, r.profit_on_10::text, r.xp
    from users u left join user_records r on r.user_id = u.id where lower(u.handle) = ${handle.toLowerCase()}`);
  if (!person) throw new RecordRefused('unknown_user', `no user with handle ${handle}`);
  // Input: the person, a category (null: all). Output: their settled calls with the closing chance of the called outcome.
  const rows: Array<{ status: SkillCall['status']; chance: string; closing: string | null }> = await db.query(sql`
    select c.status, c.chance_at_call::text as chance, (m.closing_chances[c.outcome_index + 1])::text as closing
    from calls c join markets m on m.id = c.market_id join events e on e.id = m.event_id
    where c.user_id = ${person.id} and c.status <> 'open' and (${field}::text is null or e.category = ${field}::text)`);
  const calls = rows.map((r) => ({ status: r.status, chanceAtCall: Number(r.chance), closingChance: r.closing === null ? null : Number(r.closing) }));
  const sums = skillSums(calls);
  return {
    handle: person.handle,
    settled: person.settled ?? 0,
    won: person.won ?? 0,
    right_pct: person.right_pct ?? 0,
    profit_on_10: Number(person.profit_on_10 ?? 0),
    xp: person.xp ?? 0,
    category: field,
    brier: brierOf(sums),
    clv: clvOf(sums),
    calibration: calibration(calls),
  };
}

async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  const spec = { command: COMMAND, usage: USAGE };
  if (command === '--help' || command === '-h') parseCli({ ...spec, options: {}, args: ['--help'] });
  if (command === undefined) usageError(spec, 'a command is required');
  if (command.startsWith('-')) {
    const known = Object.values(COMMANDS).some((options) => Object.hasOwn(options, command.replace(/^-+/, '').split('=')[0]!));
    usageError(spec, known ? `the command comes first: records <command> ${command} …` : `unknown option ${command}`);
  }
  if (!Object.hasOwn(COMMANDS, command)) usageError(spec, `unknown command ${JSON.stringify(command)}`);
  // Options are checked before anything connects, so a typo never waits on a database.
  if (args.includes('--help') || args.includes('-h')) parseCli({ ...spec, options: {}, args: ['--help'] });
  parseCli({ command: `${COMMAND} ${command}`, usage: USAGE, options: COMMANDS[command as Command], args });

  const config = loadConfig();
  await migrate(config.DATABASE_URL);
  const db = createDb(config.DATABASE_URL, { poolSize: 2 });
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 3 });
  const records = createRecords({ db, redis, prefix: config.REDIS_PREFIX });
  try {
    printJson(await run(command as Command, args, records, db));
    return 0;
  } catch (err) {
    if (err instanceof RecordRefused) process.stderr.write(`refused (${err.code}): ${err.message}\n`);
    else if (err instanceof RecordsUnavailable) process.stderr.write(`not confirmed: ${err.message}\n`);
    else throw err;
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
