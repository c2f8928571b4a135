import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { keyFamily, stackKeyPatterns } from '@pm/shared/queues';

/**
 * One soak sample: the measures of every process (from the services' own /metrics, prom-client's
 * default metrics, and for the simulator, the crowd and the run line from the soak probe), Redis's
 * memory and its keys by family, and Postgres's size by table. Each measure is a row
 * `(name, measure, value)`; the CSV holds them with the time.
 */
export interface Row {
  name: string;
  measure: string;
  value: number;
}

export interface ProcessMeasures {
  pid: number | null;
  rss_mb: number;
  heap_used_mb: number;
  heap_total_mb: number;
  external_mb: number;
  loop_p99_ms: number;
  handles: number;
  /** The RSS by kind of mapping (the probe's, Linux only): malloc's arenas, other anonymous, files. */
  malloc_mb?: number;
  anon_mb?: number;
  file_mb?: number;
}

/** The measures a process may have, in the CSV's and the summary's order. */
export const PROCESS_MEASURES = ['rss_mb', 'heap_used_mb', 'heap_total_mb', 'external_mb', 'loop_p99_ms', 'handles', 'malloc_mb', 'anon_mb', 'file_mb'] as const;

const MB = 1024 * 1024;

/** Sums of every series of each metric name in a Prometheus text page (labels ignored). */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const v = Number(m[3]);
    if (Number.isFinite(v)) out.set(m[1]!, (out.get(m[1]!) ?? 0) + v);
  }
  return out;
}

/** A service's measures from its /metrics, or null when it does not answer. */
export async function scrapeService(url: string): Promise<ProcessMeasures | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    if (!res.ok) return null;
    const m = parseMetrics(await res.text());
    return {
      pid: null,
      rss_mb: (m.get('process_resident_memory_bytes') ?? NaN) / MB,
      heap_used_mb: (m.get('nodejs_heap_size_used_bytes') ?? NaN) / MB,
      heap_total_mb: (m.get('nodejs_heap_size_total_bytes') ?? NaN) / MB,
      external_mb: (m.get('nodejs_external_memory_bytes') ?? NaN) / MB,
      loop_p99_ms: (m.get('nodejs_eventloop_lag_p99_seconds') ?? NaN) * 1000,
      handles: m.get('nodejs_active_handles') ?? NaN,
    };
  } catch {
    return null;
  }
}

/** Which process a probe line is from, by its command line; null for a process the soak does not report. */
export function processName(argv: string): string | null {
  if (/exchange-sim\/dist\/main\.mjs/.test(argv)) return 'exchange-sim';
  if (/scripts\/crowd\.ts/.test(argv)) return 'crowd';
  if (/scripts\/start\.ts/.test(argv)) return 'run-line';
  if (/services\/(api|ingestor|worker)\/dist\/main\.mjs/.test(argv)) return `probe:${/services\/(\w+)\//.exec(argv)![1]}`;
  return null;
}

interface ProbeLine {
  t: number;
  pid: number;
  argv: string;
  rss: number;
  heap_used: number;
  heap_total: number;
  external: number;
  loop_p99_ms: number;
  handles: number;
  rss_malloc?: number;
  rss_anon?: number;
  rss_file?: number;
}

/** The newest probe line of each named process in `dir` (a restarted process: its newest pid). */
export function readProbes(dir: string): Map<string, ProcessMeasures> {
  const newest = new Map<string, ProbeLine>();
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return new Map();
  }
  for (const file of files) {
    // The newest whole line: the probe may be halfway through appending the next.
    const lines = readFileSync(path.join(dir, file), 'utf8').split('\n');
    let line: ProbeLine | undefined;
    for (let i = lines.length - 1; i >= 0 && !line; i--) {
      try {
        if (lines[i]) line = JSON.parse(lines[i]!) as ProbeLine;
      } catch {
        /* a partial line */
      }
    }
    if (!line) continue;
    const name = processName(line.argv);
    if (!name) continue;
    const held = newest.get(name);
    if (!held || line.t > held.t) newest.set(name, line);
  }
  const out = new Map<string, ProcessMeasures>();
  const fresh = Date.now() - 3 * 60_000;
  for (const [name, l] of newest) {
    if (l.t < fresh) continue;
    out.set(name, {
      pid: l.pid,
      rss_mb: l.rss / MB,
      heap_used_mb: l.heap_used / MB,
      heap_total_mb: l.heap_total / MB,
      external_mb: l.external / MB,
      loop_p99_ms: l.loop_p99_ms,
      handles: l.handles,
      malloc_mb: l.rss_malloc === undefined ? undefined : l.rss_malloc / MB,
      anon_mb: l.rss_anon === undefined ? undefined : l.rss_anon / MB,
      file_mb: l.rss_file === undefined ? undefined : l.rss_file / MB,
    });
  }
  return out;
}

/** Redis's used memory and the stack's keys counted by family (SCAN, so it never blocks the server). */
export async function sampleRedis(redis: Redis, prefix: string): Promise<Row[]> {
  const info = await redis.info('memory');
  const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
  const counts = new Map<string, number>();
  const bytes = new Map<string, number>();
  let total = 0;
  for (const pattern of stackKeyPatterns(prefix)) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      // What each key takes (MEMORY USAGE, sampling the elements of a big one), so a family that
      // grows in size rather than in keys (the stream, the chance hashes) shows too.
      const sizes = redis.pipeline();
      for (const key of keys) sizes.call('MEMORY', 'USAGE', key, 'SAMPLES', '5');
      const replies = keys.length ? ((await sizes.exec()) ?? []) : [];
      keys.forEach((key, i) => {
        const family = keyFamily(key, prefix)?.family ?? 'unknown';
        counts.set(family, (counts.get(family) ?? 0) + 1);
        const size = replies[i]?.[1];
        bytes.set(family, (bytes.get(family) ?? 0) + (typeof size === 'number' ? size : 0));
        total++;
      });
    } while (cursor !== '0');
  }
  const rows: Row[] = [
    { name: 'redis', measure: 'used_mb', value: used / MB },
    { name: 'redis', measure: 'keys', value: total },
    // used_mb is the whole server's (other stacks on a shared Redis included); this is the stack's own.
    { name: 'redis', measure: 'stack_mb', value: [...bytes.values()].reduce((a, b) => a + b, 0) / MB },
  ];
  for (const [family, n] of counts) {
    rows.push({ name: `redis:${family}`, measure: 'keys', value: n }, { name: `redis:${family}`, measure: 'mb', value: (bytes.get(family) ?? 0) / MB });
  }
  return rows;
}

/** The database's size and each table's (with indexes and TOAST; partitions summed into their parent). */
export async function samplePostgres(client: pg.Client): Promise<Row[]> {
  const { rows } = await client.query<{ name: string; bytes: string }>(`
    select coalesce(parent.relname, c.relname) as name, sum(pg_total_relation_size(c.oid))::bigint as bytes
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
    left join pg_inherits i on i.inhrelid = c.oid
    left join pg_class parent on parent.oid = i.inhparent
    where c.relkind in ('r', 'm')
    group by 1`);
  const { rows: db } = await client.query<{ bytes: string }>('select pg_database_size(current_database())::bigint as bytes');
  const out: Row[] = [{ name: 'postgres', measure: 'size_mb', value: Number(db[0]!.bytes) / MB }];
  for (const r of rows) out.push({ name: `postgres:${r.name}`, measure: 'size_mb', value: Number(r.bytes) / MB });
  return out;
}

export function processRows(name: string, m: ProcessMeasures): Row[] {
  return PROCESS_MEASURES.filter((measure) => m[measure] !== undefined).map((measure) => ({ name, measure, value: m[measure]! }));
}
