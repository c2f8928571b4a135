import type { Metric } from 'prom-client';
import { metricTable, type ServiceMetrics } from '@pm/shared/metrics';

/**
 * `http_request_duration_seconds` (shared/src/metrics.ts) counted without prom-client's per-call
 * work. Its Histogram resolves every observation again from its labels (a label object made,
 * validated and hashed into a string, then looked up): measured under bench:api, about 5 µs of
 * the API's 45 µs per cached read. Here a series is resolved once and an observation is an
 * increment of a number array.
 *
 * The metric keeps its name, help, buckets and exposition: `get()` returns what prom-client's own
 * Histogram returns (cumulative `_bucket` series with `le`, `+Inf`, `_sum`, `_count`), so the text
 * format, the registry's default labels and the cluster's summing (cluster-metrics.ts) are
 * unchanged. It takes the place of the table's Histogram in the service's registry.
 *
 * The registry reads `getForPromString` and `sharedLabels` when it writes the text format; prom-client
 * uses them for its own Histogram but does not declare them. This module is the only one that relies
 * on them, and request-durations.unit.test.ts holds its output equal to prom-client's Histogram.
 */

export interface DurationSeries {
  observe(seconds: number): void;
}

export interface RequestDurations {
  series(labels: Readonly<Record<'route' | 'method' | 'status', string>>): DurationSeries;
}

const DEF = metricTable.api.httpRequestDuration;

interface Held {
  labels: Readonly<Record<string, string>>;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

export function requestDurations(metrics: ServiceMetrics<'api'>): RequestDurations {
  const bounds: readonly number[] = DEF.buckets;
  const held: Held[] = [];

  /**
   * The values as prom-client's Histogram gives them: for the text format with the series' labels
   * apart (`sharedLabels`, written after `le` and the default labels), for JSON merged into `labels`.
   */
  const values = (splay: boolean) =>
    held.flatMap(({ labels, counts, sum, count }) => {
      const value = (own: Record<string, string | number>, v: number, suffix: string) =>
        splay ? { labels: { ...own, ...labels }, value: v, metricName: DEF.name + suffix } : { labels: own, sharedLabels: labels, value: v, metricName: DEF.name + suffix };
      let cumulative = 0;
      return [
        ...bounds.map((le, i) => value({ le }, (cumulative += counts[i] ?? 0), '_bucket')),
        value({ le: '+Inf' }, count, '_bucket'),
        value({}, sum, '_sum'),
        value({}, count, '_count'),
      ];
    });
  const described = (splay: boolean) => ({ name: DEF.name, help: DEF.help, type: 'histogram', aggregator: 'sum', values: values(splay) });

  const metric = {
    name: DEF.name,
    help: DEF.help,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => described(true),
    getForPromString: async () => described(false),
    reset: () => {
      for (const h of held) {
        h.counts.fill(0);
        h.sum = 0;
        h.count = 0;
      }
    },
  };
  metrics.registry.removeSingleMetric(DEF.name);
  metrics.registry.registerMetric(metric as unknown as Metric);

  return {
    series(labels) {
      const h: Held = { labels: { ...labels }, counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 };
      held.push(h);
      return {
        observe(seconds) {
          let i = 0;
          while (i < bounds.length && seconds > bounds[i]!) i++;
          h.counts[i] = (h.counts[i] ?? 0) + 1;
          h.sum += seconds;
          h.count++;
        },
      };
    },
  };
}
