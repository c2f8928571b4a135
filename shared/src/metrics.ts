import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every Prometheus metric the services export, in ONE table (docs/design.md "Observability"): name,
 * type, help and labels. A service builds its registry with `createServiceMetrics(service)`, which
 * also registers prom-client's default process metrics (`process_*`, `nodejs_*`). Every series of a
 * registry carries a `service` label, so one Prometheus query can tell the three apart.
 *
 * Values that a service already counts for itself (the ingestor's `stats()`, BullMQ's job counts,
 * feed health in Redis) are read at scrape time by `beforeScrape` collectors instead of being
 * incremented on hot paths; `setTotal` sets a counter from such a running total.
 */

export type ServiceName = 'api' | 'ingestor' | 'worker';

export interface MetricDef {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly buckets?: readonly number[];
}

/** Request and job durations: 1 ms to 10 s; the API's p99 target sits well inside. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

const NONCONFORMING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** In every service: a scrape-time collector that failed (its series keep their last values). */
const common = {
  collectorErrors: {
    name: 'metrics_collector_errors_total',
    type: 'counter',
    help: 'Scrape-time collectors that failed or timed out, by collector; their series keep the last values read.',
    labelNames: ['collector'],
  },
} as const satisfies Record<string, MetricDef>;

export const metricTable = {
  api: {
    ...common,
    httpRequestDuration: {
      name: 'http_request_duration_seconds',
      type: 'histogram',
      help: 'Time to answer an HTTP request, by route template (the endpoint table path, or unmatched), method and status.',
      labelNames: ['route', 'method', 'status'],
      buckets: DURATION_BUCKETS,
    },
    httpRateLimited: {
      name: 'http_rate_limited_total',
      type: 'counter',
      help: 'Requests refused with 429 because the client exceeded the rate limit.',
      labelNames: [],
    },
    dbReads: {
      name: 'api_db_reads_total',
      type: 'counter',
      help: 'Read-only Postgres statements of the API, by the server that ran them (replica: DATABASE_READ_URL; primary: DATABASE_URL, also the fallback).',
      labelNames: ['server'],
    },
    dbReplicaLag: {
      name: 'api_db_replica_lag_seconds',
      type: 'gauge',
      help: 'How far behind the primary the read replica was at its last measurement; absent without DATABASE_READ_URL or while it does not answer.',
      labelNames: [],
    },
    snapshotAge: {
      name: 'snapshot_age_seconds',
      type: 'gauge',
      help: 'Seconds since a read snapshot last changed, by snapshot; absent while the snapshot does not exist.',
      labelNames: ['snapshot'],
    },
  },
  ingestor: {
    ...common,
    wsFrames: {
      name: 'ingestor_ws_frames_total',
      type: 'counter',
      help: 'WebSocket frames received from the exchange, by channel (market, sports).',
      labelNames: ['channel'],
    },
    wsMessages: {
      name: 'ingestor_ws_messages_total',
      type: 'counter',
      help: 'Messages handled, by channel and type (market: the event_type, text, unknown; sports: update).',
      labelNames: ['channel', 'type'],
    },
    wsMalformed: {
      name: 'ingestor_ws_malformed_total',
      type: 'counter',
      help: 'Frames or elements that could not be parsed and were skipped, by channel.',
      labelNames: ['channel'],
    },
    wsReconnects: {
      name: 'ingestor_ws_reconnects_total',
      type: 'counter',
      help: 'WebSocket reconnects, by channel.',
      labelNames: ['channel'],
    },
    wsOpenSockets: {
      name: 'ingestor_ws_open_sockets',
      type: 'gauge',
      help: 'WebSocket connections open now, by channel.',
      labelNames: ['channel'],
    },
    booksHeld: {
      name: 'ingestor_books_held',
      type: 'gauge',
      help: 'Order books held in memory.',
      labelNames: [],
    },
    subscribedTokens: {
      name: 'ingestor_subscribed_tokens',
      type: 'gauge',
      help: 'Outcome tokens subscribed on the market channel.',
      labelNames: [],
    },
    feedConnected: {
      name: 'ingestor_feed_connected',
      type: 'gauge',
      help: '1 while the channel is connected, else 0, by channel.',
      labelNames: ['channel'],
    },
    feedAge: {
      name: 'ingestor_feed_last_message_age_seconds',
      type: 'gauge',
      help: 'Seconds since the last sign of life on the channel (market: a data frame or a PONG; feed freshness, prices count as live under 30 s), by channel.',
      labelNames: ['channel'],
    },
    tradePrints: {
      name: 'ingestor_trade_prints_total',
      type: 'counter',
      help: 'Prints of the match feed (last_trade_price), by outcome: recorded (added to the tape by this ingestor), repeated (already on the tape: a reconnect, another ingestor, a retry), malformed (unreadable size, side, timestamp or price: skipped), dropped (Postgres away past the pending bound).',
      labelNames: ['outcome'],
    },
    tradesPending: {
      name: 'ingestor_trade_prints_pending',
      type: 'gauge',
      help: 'Prints held in memory for the tape\'s next write.',
      labelNames: [],
    },
    chancesPublished: {
      name: 'ingestor_chances_published_total',
      type: 'counter',
      help: 'Displayed chances published to Redis because they moved: every publication, so a token that moves twice counts twice.',
      labelNames: [],
    },
    catalogSyncs: {
      name: 'ingestor_catalog_syncs_total',
      type: 'counter',
      help: 'Full catalog syncs (the first, the periodic ones and those new markets ask for), by outcome (ok, failed).',
      labelNames: ['outcome'],
    },
    catalogSyncDuration: {
      name: 'ingestor_catalog_sync_duration_seconds',
      type: 'gauge',
      help: 'Duration of the last successful catalog sync.',
      labelNames: [],
    },
  },
  worker: {
    ...common,
    jobs: {
      name: 'worker_jobs_total',
      type: 'counter',
      help: 'Jobs finished by this process, by queue and outcome (completed, failed).',
      labelNames: ['queue', 'outcome'],
    },
    jobDuration: {
      name: 'worker_job_duration_seconds',
      type: 'histogram',
      help: 'Time a job took from start to finish, by queue and outcome.',
      labelNames: ['queue', 'outcome'],
      buckets: DURATION_BUCKETS,
    },
    queueJobs: {
      name: 'worker_queue_jobs',
      type: 'gauge',
      help: 'Jobs in a queue now, by queue and state (waiting, active, failed, delayed); the same for every worker replica.',
      labelNames: ['queue', 'state'],
    },
    callsSettled: {
      name: 'calls_settled_total',
      type: 'counter',
      help: 'Calls settled, by status (won, lost, void), read from Postgres; the same for every worker replica.',
      labelNames: ['status'],
    },
    combosSettled: {
      name: 'combos_settled_total',
      type: 'counter',
      help: 'Combos settled, by status (won, lost, void), read from Postgres; the same for every worker replica.',
      labelNames: ['status'],
    },
    // The outbox relay, the reconciler and settlement lag (names fixed in the team's contract,
    // read by infra/prometheus/alerts.yml and the dashboard).
    outboxBacklog: {
      name: 'outbox_backlog',
      type: 'gauge',
      help: 'Outbox rows not yet relayed into jobs, read from Postgres; the same for every worker replica.',
      labelNames: [],
    },
    outboxOldestUnsentAge: {
      name: 'outbox_oldest_unsent_age_seconds',
      type: 'gauge',
      help: 'Age of the oldest outbox row not yet relayed (0 when none).',
      labelNames: [],
    },
    reconcilerRepairs: {
      name: 'reconciler_repairs_total',
      type: 'counter',
      help: 'Work the reconciler re-derived from Postgres because it was missing from Redis, by kind (settle, projection, snapshot).',
      labelNames: ['kind'],
    },
    queueWorkersReplaced: {
      name: 'queue_workers_replaced_total',
      type: 'counter',
      help: 'Queue workers that took no job for ~30 s while jobs waited, closed and replaced by new ones, by queue.',
      labelNames: ['queue'],
    },
    settlementPendingMarkets: {
      name: 'settlement_pending_markets',
      type: 'gauge',
      help: 'Resolved markets with open calls or legs whose settlement has not committed, read from Postgres.',
      labelNames: [],
    },
    // The archive (docs/archive.md), read from its manifest in Postgres: the same for every worker replica.
    archiveDays: {
      name: 'archive_days_written',
      type: 'gauge',
      help: 'Days of the archive written, by dataset and format (parquet, ndjson.gz).',
      labelNames: ['dataset', 'format'],
    },
    archiveRows: {
      name: 'archive_rows',
      type: 'gauge',
      help: 'Rows in the archive over every day written, by dataset.',
      labelNames: ['dataset'],
    },
    archiveBytes: {
      name: 'archive_bytes',
      type: 'gauge',
      help: 'Bytes of the archive over every day written, by dataset and format.',
      labelNames: ['dataset', 'format'],
    },
    archiveNewestCompleteDay: {
      name: 'archive_newest_complete_day_seconds',
      type: 'gauge',
      help: 'Start (Unix seconds, 00:00 UTC) of the newest day whose every dataset is written in every format; 0 when none.',
      labelNames: [],
    },
    settlementOldestPendingAge: {
      name: 'settlement_oldest_pending_age_seconds',
      type: 'gauge',
      help: 'Seconds since the oldest market pending settlement was resolved (0 when none).',
      labelNames: [],
    },
  },
} as const satisfies Record<ServiceName, Record<string, MetricDef>>;

type LabelsOf<D> = D extends { labelNames: readonly (infer L)[] } ? Extract<L, string> : never;
type HandleOf<D> = D extends { type: 'counter' }
  ? Counter<LabelsOf<D>>
  : D extends { type: 'gauge' }
    ? Gauge<LabelsOf<D>>
    : D extends { type: 'histogram' }
      ? Histogram<LabelsOf<D>>
      : never;

export type ServiceMetricHandles<S extends ServiceName> = { readonly [K in keyof (typeof metricTable)[S]]: HandleOf<(typeof metricTable)[S][K]> };

/** Reads values the service holds anyway into the metrics, just before a scrape. Throw when it cannot. */
export type ScrapeCollector = () => Promise<void> | void;

export interface ServiceMetrics<S extends ServiceName> {
  readonly service: S;
  readonly registry: Registry;
  readonly metric: ServiceMetricHandles<S>;
  /** Run `collect` before every scrape (at most `timeoutMs`, default 2 s; a failure is counted, not thrown). */
  beforeScrape(name: string, collect: ScrapeCollector, timeoutMs?: number): void;
  /** Run the collectors, then render the registry in the Prometheus text format. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** A registry with the default process metrics and this service's rows of `metricTable`. */
export function createServiceMetrics<S extends ServiceName>(service: S): ServiceMetrics<S> {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  // prom-client names these three sums of gauges `_total`, which `promtool check metrics` rejects
  // (the suffix means a counter); the per-type gauges they sum (`nodejs_active_handles` …) stay.
  for (const name of NONCONFORMING_DEFAULTS) registry.removeSingleMetric(name);
  const handles: Record<string, Counter<string> | Gauge<string> | Histogram<string>> = {};
  for (const [key, def] of Object.entries(metricTable[service]) as Array<[string, MetricDef]>) {
    const base = { name: def.name, help: def.help, labelNames: [...def.labelNames], registers: [registry] };
    handles[key] =
      def.type === 'counter'
        ? new Counter(base)
        : def.type === 'gauge'
          ? new Gauge(base)
          : new Histogram({ ...base, buckets: [...(def.buckets ?? DURATION_BUCKETS)] });
  }
  const metric = handles as unknown as ServiceMetricHandles<S>;
  const collectorErrors = handles['collectorErrors'] as Counter<'collector'>;
  const collectors: Array<{ name: string; collect: ScrapeCollector; timeoutMs: number }> = [];

  async function runCollector(c: (typeof collectors)[number]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.resolve().then(c.collect),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`collector ${c.name} timed out`)), c.timeoutMs);
        }),
      ]);
    } catch {
      // A scrape must still answer when Postgres or Redis is away; the count shows it on the dashboard.
      collectorErrors.inc({ collector: c.name });
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    service,
    registry,
    metric,
    beforeScrape(name, collect, timeoutMs = 2_000) {
      collectors.push({ name, collect, timeoutMs });
    },
    async scrape() {
      await Promise.all(collectors.map(runCollector));
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** Sets a counter's series to a running total kept elsewhere (a total only grows, so this stays a counter). */
export function setTotal<L extends string>(counter: Counter<L>, labels: Partial<Record<L, string | number>>, total: number): void {
  counter.remove(labels);
  counter.inc(labels, Math.max(0, total));
}

/** The names of every metric a service exports (ours and the default process metrics). */
export function exportedMetricNames(service: ServiceName): string[] {
  return createServiceMetrics(service)
    .registry.getMetricsAsArray()
    .map((m) => (m as unknown as { name: string }).name);
}
