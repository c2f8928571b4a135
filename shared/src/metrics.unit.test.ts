import { describe, expect, it } from 'vitest';
import { createServiceMetrics, exportedMetricNames, metricTable, setTotal, type MetricDef, type ServiceName } from './metrics.js';

/** The metric table follows Prometheus naming, and each service's registry exports exactly its rows. */
const services = Object.keys(metricTable) as ServiceName[];

describe('the metric table', () => {
  it('names every metric the Prometheus way, once', () => {
    const seen = new Map<string, string>();
    for (const service of services) {
      for (const def of Object.values(metricTable[service]) as MetricDef[]) {
        expect(def.name).toMatch(/^[a-z_][a-z0-9_]*$/);
        expect(def.help.length, def.name).toBeGreaterThan(10);
        if (def.type === 'counter') expect(def.name, def.name).toMatch(/_total$/);
        else expect(def.name, def.name).not.toMatch(/_total$/);
        if (/duration|(^|_)age(_|$)/.test(def.name)) expect(def.name).toMatch(/_seconds$/);
        const owner = seen.get(def.name);
        // The common rows repeat per service by design; any other name is one service's.
        if (owner && def.name !== 'metrics_collector_errors_total') throw new Error(`${def.name} in both ${owner} and ${service}`);
        seen.set(def.name, service);
      }
    }
  });

  it('gives each service its own rows plus the default process metrics, labelled with the service', async () => {
    for (const service of services) {
      const names = exportedMetricNames(service);
      for (const def of Object.values(metricTable[service]) as MetricDef[]) expect(names).toContain(def.name);
      expect(names).toContain('process_cpu_user_seconds_total');
      expect(names).not.toContain('nodejs_active_handles_total');
    }
    const api = createServiceMetrics('api');
    api.metric.httpRateLimited.inc();
    expect((await api.scrape()).body).toMatch(/^http_rate_limited_total\{service="api"\} 1$/m);
  });
});

describe('scrape-time collectors', () => {
  it('copy running totals into counters, and count a collector that fails without failing the scrape', async () => {
    const metrics = createServiceMetrics('ingestor');
    let frames = 5;
    metrics.beforeScrape('stats', () => setTotal(metrics.metric.wsFrames, { channel: 'market' }, frames));
    metrics.beforeScrape('broken', () => Promise.reject(new Error('redis away')));
    metrics.beforeScrape('hung', () => new Promise(() => {}), 50);
    const first = (await metrics.scrape()).body;
    expect(first).toMatch(/^ingestor_ws_frames_total\{channel="market",service="ingestor"\} 5$/m);
    expect(first).toMatch(/^metrics_collector_errors_total\{collector="broken",service="ingestor"\} 1$/m);
    expect(first).toMatch(/^metrics_collector_errors_total\{collector="hung",service="ingestor"\} 1$/m);
    frames = 9;
    expect((await metrics.scrape()).body).toMatch(/^ingestor_ws_frames_total\{channel="market",service="ingestor"\} 9$/m);
  });
});
