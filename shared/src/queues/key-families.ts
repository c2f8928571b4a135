import { redisKeyBase } from '../redis/keys.js';
import { queuePrefix, queues } from './names.js';

/**
 * Every family of Redis keys one stack makes (here rather than in ../redis because it names the
 * queues' keys too, and the redis area is the API's, which never loads the queues), with what keeps it from growing for ever: a TTL, a
 * trim, a consumer that empties it, a fixed set of names, or the retirement of closed events
 * (services/worker/src/retire). docs/redis-keys.md shows this table; test/infra/redis-keys.unit.test.ts
 * fails when a key built by keys.ts, a snapshot family or a queue has no family here, or a family is
 * missing from the docs. `npm run soak` counts the keys of each family.
 *
 * A new family is one more entry: where its keys live (`space`), the pattern of what follows the
 * space's base and `:` (`tail`), and its bound in words (`bound`) and in kind (`how`).
 */

/** Where a key starts: `{prefix}:` (the stack's tagged keys), `{prefix:bull}:` (BullMQ), `prefix:` (untagged: rate limits). */
export type KeySpace = 'stack' | 'queues' | 'plain';

export type BoundKind =
  /** The key expires (PX/PEXPIRE) unless renewed by something alive. */
  | 'ttl'
  /** Entries past a window or a count are dropped on each write. */
  | 'trimmed'
  /** A set its consumer pops whole: it holds what changed since the last build. */
  | 'drained'
  /** One key, or one per name of a set fixed by the code or the catalog's categories and leagues. */
  | 'fixed'
  /** One key or field per event or market: expired or deleted a while after the event closed (services/worker/src/retire). */
  | 'retired'
  /** One field per live process; a process gone is removed by the others. */
  | 'live'
  /** A pub/sub channel: nothing is stored. */
  | 'channel';

export interface KeyFamily {
  family: string;
  space: KeySpace;
  /** Matches the rest of the key after the space's base and `:`. */
  tail: RegExp;
  type: 'string' | 'hash' | 'set' | 'zset' | 'stream' | 'channel' | 'bullmq';
  how: BoundKind;
  bound: string;
}

const retired = 'expires CLOSED_RETENTION_HOURS (default 24) after its event closed (worker retirement sweep, every minute); built again when asked for after that, then expires an hour after the rebuild';

export const KEY_FAMILIES: readonly KeyFamily[] = [
  { family: 'chances', space: 'stack', tail: /^chances$/, type: 'hash', how: 'retired', bound: 'one field per token of a market not yet retired; a closed event\'s tokens are deleted CLOSED_RETENTION_HOURS after it closed' },
  { family: 'quotes', space: 'stack', tail: /^quotes$/, type: 'hash', how: 'retired', bound: 'as chances' },
  { family: 'chances:at', space: 'stack', tail: /^chances:at$/, type: 'hash', how: 'retired', bound: 'as chances' },
  { family: 'feed', space: 'stack', tail: /^feed$/, type: 'hash', how: 'fixed', bound: 'one key, four fields' },
  { family: 'feed:announce', space: 'stack', tail: /^feed:announce$/, type: 'channel', how: 'channel', bound: 'pub/sub, nothing stored' },
  { family: 'dirty:events', space: 'stack', tail: /^dirty:events$/, type: 'set', how: 'drained', bound: 'popped whole by each market snapshot build' },
  { family: 'dirty:history', space: 'stack', tail: /^dirty:history$/, type: 'set', how: 'drained', bound: 'popped whole by each history build' },
  { family: 'dirty:history:backfilled', space: 'stack', tail: /^dirty:history:backfilled$/, type: 'set', how: 'drained', bound: 'popped whole by each history build' },
  { family: 'dirty:records', space: 'stack', tail: /^dirty:records$/, type: 'set', how: 'drained', bound: 'popped whole by each record snapshot build' },
  { family: 'dirty:catalog', space: 'stack', tail: /^dirty:catalog$/, type: 'set', how: 'drained', bound: 'popped whole with catalog:version by each market snapshot build' },
  { family: 'dirty:projection-users', space: 'stack', tail: /^dirty:projection-users$/, type: 'set', how: 'drained', bound: 'popped whole by each projection job' },
  { family: 'dirty:projection-markets', space: 'stack', tail: /^dirty:projection-markets$/, type: 'set', how: 'drained', bound: 'popped whole by each projection job' },
  { family: 'ranking:version', space: 'stack', tail: /^ranking:version$/, type: 'string', how: 'fixed', bound: 'one counter' },
  { family: 'snap:markets:ranking', space: 'stack', tail: /^snap:markets:ranking:[^:]+$/, type: 'hash', how: 'ttl', bound: 'one per ranking version; expires 20 min after the next version replaced it' },
  { family: 'snap:book', space: 'stack', tail: /^snap:book:.+$/, type: 'hash', how: 'ttl', bound: 'one per traded market; expires 10 min after its last write' },
  { family: 'catalog:version', space: 'stack', tail: /^catalog:version$/, type: 'string', how: 'fixed', bound: 'one counter' },
  { family: 'snap:announce', space: 'stack', tail: /^snap:announce$/, type: 'channel', how: 'channel', bound: 'pub/sub, nothing stored' },
  { family: 'snapshots:built', space: 'stack', tail: /^snapshots:built$/, type: 'hash', how: 'fixed', bound: 'one field per snapshot family (11)' },
  { family: 'snap:markets', space: 'stack', tail: /^snap:markets:(trending|search|category:[^:]+|league:[^:]+)$/, type: 'hash', how: 'fixed', bound: 'trending, search, one per category and league of the catalog' },
  { family: 'snap:live', space: 'stack', tail: /^snap:live$/, type: 'hash', how: 'fixed', bound: 'one key' },
  { family: 'snap:calls:latest', space: 'stack', tail: /^snap:calls:latest$/, type: 'hash', how: 'fixed', bound: 'one key' },
  { family: 'snap:leaderboard', space: 'stack', tail: /^snap:leaderboard:[^:]+$/, type: 'hash', how: 'fixed', bound: 'one per kept board (6: profit, right, xp, week, clv, brier)' },
  { family: 'snap:combos', space: 'stack', tail: /^snap:combos:[^:]+$/, type: 'hash', how: 'fixed', bound: 'one per status (4)' },
  { family: 'snap:event', space: 'stack', tail: /^snap:event:.+$/, type: 'hash', how: 'retired', bound: `one per event; ${retired}` },
  { family: 'snap:history', space: 'stack', tail: /^snap:history:[^:]+:[^:]+$/, type: 'hash', how: 'retired', bound: `four per market (1d, 1w, 1m, max); ${retired}` },
  { family: 'snap:calls:market', space: 'stack', tail: /^snap:calls:market:.+$/, type: 'hash', how: 'retired', bound: `one per market with calls; ${retired}` },
  { family: 'board-ranking', space: 'stack', tail: /^board-ranking:.+$/, type: 'string', how: 'ttl', bound: 'one per computed board ranked in the last 10 s (PX the rankings\' age bound); ~7 bytes per person on it' },
  { family: 'market-events', space: 'stack', tail: /^market-events$/, type: 'hash', how: 'retired', bound: 'one field per market; a closed event\'s markets are deleted CLOSED_RETENTION_HOURS after it closed' },
  { family: 'lease:ingestor', space: 'stack', tail: /^lease:ingestor:.+$/, type: 'string', how: 'ttl', bound: 'PX INGESTOR_LEASE_SECONDS, renewed by its live owner' },
  { family: 'ingestors', space: 'stack', tail: /^ingestors$/, type: 'hash', how: 'live', bound: 'one field per live ingestor; the others delete a silent one' },
  { family: 'stream', space: 'stack', tail: /^stream$/, type: 'stream', how: 'trimmed', bound: 'entries older than 15 min trimmed on each XADD (MINID); the key expires 30 min after the last' },
  { family: 'stream:clients', space: 'stack', tail: /^stream:clients:.+$/, type: 'zset', how: 'ttl', bound: 'one per client with an open stream; PEXPIREAT past its newest heartbeat' },
  { family: 'projections:week-edge', space: 'stack', tail: /^projections:week-edge$/, type: 'string', how: 'fixed', bound: 'one key' },
  { family: 'reconciler:epoch', space: 'stack', tail: /^reconciler:epoch$/, type: 'string', how: 'fixed', bound: 'one key' },
  { family: 'bull:snapshots', space: 'queues', tail: /^snapshots:/, type: 'bullmq', how: 'trimmed', bound: 'one job waiting and one running (deduplicated); 20 finished and 50 failed kept; events stream 10,000 entries' },
  { family: 'bull:records', space: 'queues', tail: /^records:/, type: 'bullmq', how: 'trimmed', bound: 'deduplicated builds; 50 finished and 1,000 failed kept; events stream 10,000 entries' },
  { family: 'bull:settlement', space: 'queues', tail: /^settlement:/, type: 'bullmq', how: 'trimmed', bound: 'one job per resolved market until done; 1,000 finished and 1,000 failed kept; events stream 10,000 entries' },
  { family: 'bull:history', space: 'queues', tail: /^history:/, type: 'bullmq', how: 'trimmed', bound: 'one job scheduler (the rollup, every minute); 10 finished and 100 failed kept; events stream 10,000 entries' },
  { family: 'bull:archive', space: 'queues', tail: /^archive:/, type: 'bullmq', how: 'trimmed', bound: 'one job scheduler (the plan, every 10 minutes; 10 finished and 100 failed kept) and one job per closed day and dataset not yet written, removed when it finishes; events stream 10,000 entries' },
  { family: 'bull:projections', space: 'queues', tail: /^projections:/, type: 'bullmq', how: 'trimmed', bound: '10 finished and 100 failed kept (one rebuild-all per schema version); the weekly repeat and the window upkeep; events stream 10,000 entries' },
  { family: 'rl', space: 'plain', tail: /^rl:.+$/, type: 'string', how: 'ttl', bound: 'one per client address; expires with its minute window' },
];

/** The base a space's keys start with, before `:`. */
export function spaceBase(space: KeySpace, prefix: string): string {
  if (space === 'stack') return redisKeyBase(prefix);
  if (space === 'queues') return queuePrefix(prefix);
  return prefix;
}

/** SCAN patterns that find every key of the stack `prefix`. */
export function stackKeyPatterns(prefix: string): string[] {
  return (['stack', 'queues', 'plain'] as const).map((s) => `${spaceBase(s, prefix).replace(/([*?[\]\\])/g, '\\$1')}:*`);
}

/** The family of one key of the stack `prefix`, or undefined for a key no family describes. */
export function keyFamily(key: string, prefix: string): KeyFamily | undefined {
  for (const space of ['stack', 'queues', 'plain'] as const) {
    const base = `${spaceBase(space, prefix)}:`;
    if (!key.startsWith(base)) continue;
    const tail = key.slice(base.length);
    return KEY_FAMILIES.find((f) => f.space === space && f.tail.test(tail));
  }
  return undefined;
}

/** The queue names, for checking that every queue has a family. */
export const QUEUE_NAMES = Object.keys(queues);
