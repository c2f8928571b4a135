import { z } from 'zod';
import { parseRedisUrl } from './redis/connection.js';

/**
 * The whole service's configuration: one schema over the environment, parsed once per process.
 * Every default runs locally against the bundled simulator; `loadConfig` stops with a message that
 * names the offending variable rather than letting a typo surface later as a connection error.
 */
const bool = z
  .enum(['1', '0', 'true', 'false', 'yes', 'no', ''])
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

const url = (protocols: string[]) =>
  z
    .string()
    .url()
    .refine((v) => protocols.some((p) => v.startsWith(`${p}://`)), {
      message: `must start with ${protocols.map((p) => `${p}://`).join(' or ')}`,
    });

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  DATABASE_URL: url(['postgres', 'postgresql']).default('postgres://postgres@127.0.0.1:5432/predictions'),
  /**
   * API: a streaming replica of DATABASE_URL for its read-only statements (pages past the first, a
   * person's pages, a call's page); unset = every read on DATABASE_URL. The primary answers whenever the
   * replica is away or behind DATABASE_READ_MAX_LAG_MS (shared/src/db/read-pool.ts, docs/replicas.md).
   */
  DATABASE_READ_URL: z.preprocess((v) => (v === '' ? undefined : v), url(['postgres', 'postgresql']).optional()),
  /** API: replica lag (ms) past which reads go to the primary; with the 100 ms probe, a page is at most this + 100 ms behind a commit. */
  DATABASE_READ_MAX_LAG_MS: z.coerce.number().int().min(0).max(60_000).default(500),
  /**
   * One server (`redis://host:port/db`, `rediss://` for TLS) or a Redis Cluster
   * (`redis+cluster://h1:p1,h2:p2,…`, `rediss+cluster://`): see shared/src/redis/connection.ts.
   */
  REDIS_URL: z
    .string()
    .superRefine((v, ctx) => {
      try {
        parseRedisUrl(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      }
    })
    .default('redis://127.0.0.1:6379/0'),
  /** Prefix of every Redis key and BullMQ queue, so several stacks (and test files) share one Redis. */
  REDIS_PREFIX: z.string().regex(/^[a-z0-9_-]+$/i, 'must be letters, digits, _ or -').default('pm'),
  HOST: z.string().default('0.0.0.0'),
  /**
   * Where the ingestor's and worker's ops ports (/metrics, /healthz, /readyz) listen: loopback unless
   * configured, since they are for the machine's own Prometheus and probes, not for the internet.
   * Containers set 0.0.0.0 so that Prometheus in the next container can scrape them.
   */
  OPS_HOST: z.string().min(1).default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  INGESTOR_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  WORKER_PORT: z.coerce.number().int().min(0).max(65535).default(3002),
  SIM_PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  PUBLIC_WEB_URL: url(['http', 'https']).default('http://localhost:3000').transform((v) => v.replace(/\/+$/, '')),
  // Signs the `next_cursor` of list pages (HMAC), so a cursor altered by hand or made for another list
  // is a 400. Every API replica must share it; set a random one in production (knowing it lets someone
  // start a page anywhere in a public list, nothing more).
  CURSOR_SECRET: z.string().min(16, 'must be at least 16 characters').default('pm-development-cursor-secret'),
  GAMMA_URL: url(['http', 'https']).default('http://127.0.0.1:4000').transform((v) => v.replace(/\/+$/, '')),
  CLOB_URL: url(['http', 'https']).default('http://127.0.0.1:4000').transform((v) => v.replace(/\/+$/, '')),
  CLOB_WS_URL: url(['ws', 'wss']).default('ws://127.0.0.1:4000').transform((v) => v.replace(/\/+$/, '')),
  SPORTS_WS_URL: url(['ws', 'wss']).default('ws://127.0.0.1:4000').transform((v) => v.replace(/\/+$/, '')),
  /** Proxy hops whose X-Forwarded-For is believed; 0 = use the socket address, so the header cannot dodge the rate limit. */
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  /** Seconds between catalog syncs (docs/protocol.md §3: paced, 30–60 s). */
  CATALOG_SYNC_SECONDS: z.coerce.number().min(1).default(30),
  /**
   * Absent is not void: an event the catalog answers 404 for by id is closed (without a resolution)
   * only after CATALOG_VANISH_SYNCS syncs in a row found it missing AND the first of them is at least
   * this many seconds old. One 404 (a deploy, a moved event, a restarted simulator) changes nothing.
   */
  CATALOG_VANISH_GRACE_SECONDS: z.coerce.number().min(0).default(3600),
  CATALOG_VANISH_SYNCS: z.coerce.number().int().min(1).default(3),
  /**
   * Ingestor: share the markets with the other ingestors of this stack through leases in Redis
   * (services/ingestor/src/sharing). Set it on every ingestor when running more than one; off, an
   * ingestor serves every market and syncs the catalog itself.
   */
  INGESTOR_LEASES: bool.default(false),
  /** Ingestor leases: how long one lasts unrenewed; a dead ingestor's markets move within about 1.25× this. */
  INGESTOR_LEASE_SECONDS: z.coerce.number().min(1).max(300).default(10),
  /** Ingestor's id in the leases; default `<hostname>:<INGESTOR_PORT>` (stable across restarts, so a restarted one takes its own share back). */
  INGESTOR_ID: z.string().min(1).optional(),
  /** Ingestor: recycle a market socket with neither data nor PONG for this long (docs/protocol.md §1: 120 s; real sockets are quiet for 40–60 s). */
  MARKET_WATCHDOG_SECONDS: z.coerce.number().positive().default(120),
  /** Ingestor: seconds between the market socket's PINGs; two unanswered in a row recycle it (docs/protocol.md §1: 10 s). */
  MARKET_PING_SECONDS: z.coerce.number().positive().default(10),
  /**
   * Worker: hours a closed event's page, history and calls lists stay in Redis after it closed, and its
   * tokens' chances and its markets' index entries (services/worker/src/retire; docs/redis-keys.md).
   * Past it, a page asked for is built again and kept an hour.
   */
  CLOSED_RETENTION_HOURS: z.coerce.number().positive().max(24 * 365).default(24),
  /**
   * Worker and API: the archive's directory (docs/archive.md), one folder per closed UTC day, written
   * by the worker and served by the API (both must see the same one). A relative path is resolved
   * from the working directory: `npm start` runs at the repository, so the default is its .data/archive.
   */
  ARCHIVE_DIR: z.string().min(1).default('.data/archive'),
  /**
   * Worker and API: whole days the trade tape keeps raw trades (the worker drops a day's partition once
   * it is wholly older; `/trades` refuses a window that starts before it).
   */
  TRADES_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Coalescing window of record-snapshot rebuilds, and the period of the market-snapshot safety sweep (price changes never wait for it). */
  SNAPSHOT_INTERVAL_MS: z.coerce.number().int().min(10).default(250),
  /** Simulator: seed, and speed multiplier of its clock. */
  SIM_SEED: z.coerce.number().int().default(42),
  SIM_SCENARIO: z.string().optional(),
  /**
   * Simulator: the epoch its ids carry (0 = the seed's ids as always: 30001…). The run line sets it
   * to the start's Unix seconds, so a restarted simulator on the same database never gives an event
   * id, market id or slug to a different event than the one the database holds under it.
   */
  SIM_ID_EPOCH: z.coerce.number().int().min(0).max(9_999_999_999).default(0),
  SIM_SPEED: z.coerce.number().positive().default(1),
  /**
   * Simulator: open events to keep at least (the synthetic catalog has about 70; more are filled with
   * politics/economy/tech/culture questions, each replaced when it closes). Benchmarks set it to
   * size the catalog (bench:api runs with 5,000); unset = the catalog as designed.
   */
  SIM_EVENTS: z.coerce.number().int().min(0).max(100_000).optional(),
  /** Simulator: a quiet spell (books still, PONGs answered) of SIM_QUIET_SECONDS every SIM_QUIET_EVERY_SECONDS of wall clock; 0 = none. */
  SIM_QUIET_EVERY_SECONDS: z.coerce.number().min(0).default(480),
  SIM_QUIET_SECONDS: z.coerce.number().min(0).default(60),
  /** Simulator: start with the walk (or replayed feed) paused until `POST /_sim/resume` (tests that need every frame). */
  SIM_PAUSED: bool.default(false),
  /**
   * Simulator: the bearer token its control API (`/_sim/*`) requires; unset = the controls are off.
   * The run line makes one when none is given and hands it to the simulator and the demo crowd.
   */
  SIM_CONTROL_TOKEN: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16, 'must be at least 16 characters').optional()),
  PRETTY_LOGS: bool.default(false),
  /** API processes sharing PORT (node:cluster). Default: 1, or one per core when NODE_ENV=production. */
  API_PROCESSES: z.coerce.number().int().min(1).max(256).optional(),
  /**
   * Port of the API's /metrics (aggregated over its processes), /healthz and /readyz, on OPS_HOST
   * like the other ops ports. Unset: /metrics is served on the public port — only with one process outside
   * production; otherwise it defaults to 9464.
   */
  API_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Stream: a heartbeat comment this often, so proxies keep an idle stream open (15 s; shorter in tests). */
  STREAM_HEARTBEAT_MS: z.coerce.number().int().min(10).default(15_000),
  /** Stream: open streams one client IP may hold at once, over every API process and replica; past it, 429. */
  STREAM_MAX_PER_IP: z.coerce.number().int().min(1).default(10),
  /** Stream: bytes a client may fall behind (unsent in its socket's buffer) before it is cut. */
  STREAM_CLIENT_BUFFER_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parse the environment; throws ConfigError naming every bad variable and its rule. */
export function parseConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  return result.data;
}

/** For a service's main: parse or print one clear line and exit 1. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  try {
    return parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
