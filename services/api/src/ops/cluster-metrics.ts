import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { ServiceMetrics } from '@pm/shared/metrics';

/**
 * /metrics of an API that runs several processes (node:cluster): the primary asks every worker for
 * its registry as JSON and sums them with prom-client's AggregatorRegistry (counters and histograms
 * add up; the default process metrics use their own aggregators), together with the primary's own
 * registry, which alone collects the Redis-derived series (snapshot_age_seconds). A worker that
 * does not answer within the timeout is left out of that scrape rather than failing it.
 */

const REQUEST = 'pm:api-metrics-request';
const REPLY = 'pm:api-metrics-reply';

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];
interface Reply {
  type: typeof REPLY;
  id: number;
  metrics: MetricsJson;
}

/** In a worker: answer the primary's requests with this process's registry. */
export function serveMetricsToPrimary(metrics: ServiceMetrics<'api'>): void {
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message?.type !== REQUEST || message.id === undefined) return;
    const id = message.id;
    metrics.registry.getMetricsAsJSON().then(
      (json) => process.send?.({ type: REPLY, id, metrics: json } satisfies Reply),
      () => process.send?.({ type: REPLY, id, metrics: [] } satisfies Reply),
    );
  });
}

/** In the primary: `own` with `scrape()` answering for every process. */
export function clusterMetrics(own: ServiceMetrics<'api'>, timeoutMs = 2_000): ServiceMetrics<'api'> {
  let nextId = 0;
  const ask = (worker: Worker, id: number) =>
    new Promise<MetricsJson>((resolve) => {
      const timer = setTimeout(() => done([]), timeoutMs);
      const onMessage = (message: Reply) => {
        if (message?.type === REPLY && message.id === id) done(message.metrics);
      };
      function done(json: MetricsJson) {
        clearTimeout(timer);
        worker.off('message', onMessage);
        resolve(json);
      }
      worker.on('message', onMessage);
      worker.send({ type: REQUEST, id });
    });

  return {
    ...own,
    async scrape() {
      // Runs the primary's collectors (snapshot ages) and renders nothing of its own yet.
      await own.scrape();
      const id = nextId++;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
      const replies = await Promise.all(workers.map((w) => ask(w, id)));
      const mine = await own.registry.getMetricsAsJSON();
      const registry = AggregatorRegistry.aggregate([mine, ...replies]);
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
