import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { isKnownSeries, metricNamesIn } from '../support/promql.js';
import { promtool } from '../support/promtool.js';

/**
 * The Grafana dashboard and the Prometheus scrape config, checked against what the services really
 * export (shared/src/metrics.ts) and where compose runs them. A query naming a metric nobody exports
 * draws an empty panel forever; this is where that is caught.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const dashboardSchema = z.object({
  uid: z.string(),
  title: z.string(),
  panels: z.array(
    z.object({
      title: z.string(),
      datasource: z.object({ type: z.literal('prometheus'), uid: z.string() }),
      targets: z.array(z.object({ expr: z.string().min(1), refId: z.string() })).min(1),
    }),
  ),
});
const dashboard = dashboardSchema.parse(JSON.parse(read('infra/grafana/dashboards/service.json')));
const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: t.expr })));

describe('Grafana dashboard', () => {
  it('has the panels operations asked for', () => {
    const text = JSON.stringify(dashboard.panels.map((p) => [p.title, p.targets.map((t) => t.expr)]));
    for (const needed of [
      'http_request_duration_seconds_count', // traffic
      'histogram_quantile(0.99', // latency percentiles
      'http_rate_limited_total',
      'status=~\\"5..\\"',
      'ingestor_feed_last_message_age_seconds',
      'ingestor_ws_reconnects_total',
      'worker_queue_jobs',
      'outcome=\\"failed\\"',
      'calls_settled_total',
      // what operators must see of the change channel and of crash loops, and the alerts.
      'outbox_backlog',
      'outbox_oldest_unsent_age_seconds',
      'reconciler_repairs_total',
      'settlement_oldest_pending_age_seconds',
      'changes(process_start_time_seconds',
      'ALERTS',
    ]) {
      expect(text, needed).toContain(needed);
    }
  });

  it('queries only metrics the services export', () => {
    expect(metricNamesIn('sum by (route) (rate(http_request_duration_seconds_count{route!="x"}[5m])) * 60')).toEqual([
      'http_request_duration_seconds_count',
    ]);
    for (const { panel, expr } of exprs) {
      const names = metricNamesIn(expr);
      expect(names.length, `${panel}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(isKnownSeries(name), `${panel}: ${name} is not exported by any service`).toBe(true);
    }
  });

  it('uses the provisioned Prometheus data source', () => {
    const provisioned = z
      .object({ datasources: z.array(z.object({ uid: z.string(), type: z.string(), url: z.string() })) })
      .parse(parse(read('infra/grafana/provisioning/datasources/prometheus.yml')));
    const uids = provisioned.datasources.map((d) => d.uid);
    for (const p of dashboard.panels) expect(uids, p.title).toContain(p.datasource.uid);
    expect(provisioned.datasources[0]!.url).toBe('http://prometheus:9090');
  });

  it('writes every query in valid PromQL (promtool)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dashboard-rules-'));
    try {
      const rules = { groups: [{ name: 'dashboard', rules: exprs.map((e, i) => ({ record: `dashboard:query_${i}`, expr: e.expr })) }] };
      const file = path.join(dir, 'rules.json');
      writeFileSync(file, JSON.stringify(rules));
      const check = promtool(['check', 'rules', file]);
      expect(check.status, check.stdout + check.stderr).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Prometheus scrape config', () => {
  const prometheus = z
    .object({
      scrape_configs: z.array(
        z.object({ job_name: z.string(), metrics_path: z.string().default('/metrics'), static_configs: z.array(z.object({ targets: z.array(z.string()) })) }),
      ),
    })
    .parse(parse(read('infra/prometheus/prometheus.yml')));
  const compose = z
    .object({ services: z.record(z.string(), z.object({ environment: z.record(z.string(), z.unknown()).optional() })) })
    .parse(parse(read('docker-compose.yml'), { merge: true }));

  it('scrapes the api, ingestor and worker on the ports compose gives them', () => {
    // The API's metrics (summed over its processes) are on their own port, not the public one (docs/operations.md).
    const portKey = { api: 'API_METRICS_PORT', ingestor: 'INGESTOR_PORT', worker: 'WORKER_PORT' } as const;
    expect(prometheus.scrape_configs.map((s) => s.job_name).sort()).toEqual(['api', 'ingestor', 'worker']);
    for (const job of prometheus.scrape_configs) {
      expect(job.metrics_path).toBe('/metrics');
      const targets = job.static_configs.flatMap((c) => c.targets);
      const service = job.job_name as keyof typeof portKey;
      const port = String(compose.services[service]?.environment?.[portKey[service]]);
      expect(targets).toEqual([`${service}:${port}`]);
    }
  });

  it('is a valid Prometheus configuration, alert rules included (promtool)', () => {
    const check = promtool(['check', 'config', path.join(root, 'infra/prometheus/prometheus.yml')]);
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain('SUCCESS: 1 rule files found');
  });
});
