import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { isKnownSeries, metricNamesIn } from '../support/promql.js';
import { promtool } from '../support/promtool.js';

/**
 * The Prometheus alert rules (infra/prometheus/alerts.yml): the ones operations asked for exist,
 * read only metrics the services export, are loaded by Prometheus in compose, pass `promtool check
 * rules`, and `promtool test rules` sees each of them fire on a bad series and stay silent on a good one.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RULES = 'infra/prometheus/alerts.yml';
const RULE_TESTS = 'infra/prometheus/alerts.test.yml';
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const rules = z
  .object({
    groups: z.array(
      z.object({
        name: z.string(),
        rules: z.array(
          z.object({
            alert: z.string(),
            expr: z.string().min(1),
            for: z.string().optional(),
            labels: z.object({ severity: z.enum(['page', 'ticket']) }),
            annotations: z.object({ summary: z.string().min(1), description: z.string().min(1) }),
          }),
        ),
      }),
    ),
  })
  .parse(parse(read(RULES)))
  .groups.flatMap((g) => g.rules);

const ruleTests = z
  .object({
    rule_files: z.array(z.string()),
    tests: z.array(
      z.object({
        name: z.string(),
        alert_rule_test: z.array(z.object({ eval_time: z.string(), alertname: z.string(), exp_alerts: z.array(z.unknown()) })),
      }),
    ),
  })
  .parse(parse(read(RULE_TESTS)));

describe('alert rules', () => {
  it('cover what operations asked for: feed, settlement, outbox, jobs, snapshots, 5xx, crash loops, the archive', () => {
    expect(rules.map((r) => r.alert).sort()).toEqual(
      ['ApiErrorRate', 'ArchiveYesterdayIncomplete', 'CrashLooping', 'FailedJobs', 'FeedStale', 'OutboxBacklog', 'ServiceDown', 'SettlementLag', 'SnapshotStale'].sort(),
    );
  });

  it('read only metrics a service exports (or that Prometheus makes)', () => {
    for (const rule of rules) {
      const names = metricNamesIn(rule.expr);
      expect(names.length, `${rule.alert}: ${rule.expr}`).toBeGreaterThan(0);
      for (const name of names) expect(isKnownSeries(name), `${rule.alert}: ${name} is not exported by any service`).toBe(true);
    }
  });

  it('are loaded by Prometheus, in compose too', () => {
    const prometheus = z.object({ rule_files: z.array(z.string()) }).parse(parse(read('infra/prometheus/prometheus.yml')));
    expect(prometheus.rule_files).toEqual(['alerts.yml']);
    const compose = z
      .object({ services: z.object({ prometheus: z.object({ volumes: z.array(z.string()) }) }) })
      .parse(parse(read('docker-compose.yml'), { merge: true }));
    expect(compose.services.prometheus.volumes).toContain(`./${RULES}:/etc/prometheus/alerts.yml:ro`);
  });

  it('each have a test where they fire and one where they stay silent', () => {
    expect(ruleTests.rule_files).toEqual(['alerts.yml']);
    const cases = ruleTests.tests.flatMap((t) => t.alert_rule_test);
    for (const { alert } of rules) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect(mine.some((c) => c.exp_alerts.length > 0), `${alert} fires in ${RULE_TESTS}`).toBe(true);
      expect(mine.some((c) => c.exp_alerts.length === 0), `${alert} stays silent in ${RULE_TESTS}`).toBe(true);
    }
  });

  it('pass promtool check rules', () => {
    const check = promtool(['check', 'rules', path.join(root, RULES)]);
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('fire and stay silent as promtool test rules expects', () => {
    const run = promtool(['test', 'rules', path.join(root, RULE_TESTS)]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('SUCCESS');
  });
});
