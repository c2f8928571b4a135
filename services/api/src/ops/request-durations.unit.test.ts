import { describe, expect, it } from 'vitest';
import { AggregatorRegistry } from 'prom-client';
import { createServiceMetrics, metricTable } from '@pm/shared/metrics';
import { requestDurations } from './request-durations.js';

/**
 * request-durations.ts stands in for prom-client's Histogram through members prom-client reads but
 * does not declare (`getForPromString`, `sharedLabels`). Held here against prom-client's own
 * Histogram fed the same observations: the text format, the JSON and the cluster's sum must be the
 * same, so a prom-client release that stops reading those members fails here, by name.
 */

const NAME = metricTable.api.httpRequestDuration.name;
const observations: Array<[Record<'route' | 'method' | 'status', string>, number]> = [
  [{ route: '/api/v1/markets', method: 'GET', status: '200' }, 0.0004],
  [{ route: '/api/v1/markets', method: 'GET', status: '200' }, 0.003],
  [{ route: '/api/v1/markets', method: 'GET', status: '200' }, 7],
  [{ route: '/api/v1/odds', method: 'HEAD', status: '304' }, 0.02],
  [{ route: 'unmatched', method: 'GET', status: '404' }, 0.05],
];

function both() {
  const ours = createServiceMetrics('api');
  const durations = requestDurations(ours);
  const theirs = createServiceMetrics('api');
  // A series is resolved once per label set (metrics.ts keeps them), then observed.
  const series = new Map<string, ReturnType<typeof durations.series>>();
  for (const [labels, seconds] of observations) {
    const key = JSON.stringify(labels);
    if (!series.has(key)) series.set(key, durations.series(labels));
    series.get(key)!.observe(seconds);
    theirs.metric.httpRequestDuration.observe(labels, seconds);
  }
  return { ours: ours.registry, theirs: theirs.registry };
}

describe('http_request_duration_seconds without prom-client per-call work', () => {
  it("writes the text format exactly as prom-client's Histogram does", async () => {
    const { ours, theirs } = both();
    expect(await ours.getSingleMetricAsString(NAME)).toBe(await theirs.getSingleMetricAsString(NAME));
    const line = (await ours.metrics()).split('\n').find((l) => l.startsWith(`${NAME}_bucket`));
    // The registry's default label and the series' labels both written.
    expect(line).toMatch(/le="[^"]+",service="api",route="[^"]+",method="GET",status="200"/);
  });

  it('gives the same JSON, and the same sum over a cluster of processes', async () => {
    const { ours, theirs } = both();
    const json = async (r: typeof ours) => (await r.getMetricsAsJSON()).filter((m) => m.name === NAME);
    // Exemplars are off (prom-client then writes an empty one per value): left out of the comparison.
    const withoutExemplars = (metrics: Awaited<ReturnType<typeof json>>) =>
      metrics.map((m) => ({ ...m, values: m.values.map((v) => ({ labels: v.labels, value: v.value, metricName: (v as { metricName?: string }).metricName })) }));
    expect(withoutExemplars(await json(ours))).toEqual(withoutExemplars(await json(theirs)));
    const summed = async (r: typeof ours) => AggregatorRegistry.aggregate([await json(r), await json(r)]).getSingleMetricAsString(NAME);
    expect(await summed(ours)).toBe(await summed(theirs));
  });
});
