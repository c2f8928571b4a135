import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portOpen } from '@pm/shared/net';
import { freePort, startStack, type Stack } from '../support/stack.js';
import * as waiting from '@pm/shared/wait';
import { promtool } from '../support/promtool.js';

/**
 * Running it like production, on the whole stack started by the run line: every service answers
 * /healthz and /readyz, and its /metrics passes `promtool check metrics` and moves while the demo
 * runs (API requests, ingestor frames, worker jobs), read twice some seconds apart.
 */

let stack: Stack;
let ports: { ingestor: number; worker: number };

function base(service: 'api' | 'ingestor' | 'worker'): string {
  return service === 'api' ? stack.apiUrl : `http://127.0.0.1:${ports[service]}`;
}

/** Sum of every series of `name` whose labels include `labels`. */
function total(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function scrape(service: 'api' | 'ingestor' | 'worker'): Promise<string> {
  const res = await fetch(`${base(service)}/metrics`);
  expect(res.status, `${service} /metrics`).toBe(200);
  return res.text();
}

const until = (what: string, ok: () => Promise<boolean>, timeoutMs: number) => waiting.until(what, ok, { timeoutMs, context: () => stack.logs() });

beforeAll(async () => {
  ports = { ingestor: await freePort(), worker: await freePort() };
  stack = await startStack({ env: { INGESTOR_PORT: String(ports.ingestor), WORKER_PORT: String(ports.worker) } });
});

afterAll(async () => {
  await stack?.stop();
});

describe('operations surface of every service', () => {
  it('is alive and, once started, ready with Postgres and Redis checked', async () => {
    for (const service of ['api', 'ingestor', 'worker'] as const) {
      // The stack counts as started once the API answers; the others' ops ports open as they start.
      await until(`${service} /healthz`, async () => (await fetch(`${base(service)}/healthz`).catch(() => undefined))?.status === 200, 30_000);
      const alive = await fetch(`${base(service)}/healthz`);
      expect(alive.status, `${service} /healthz`).toBe(200);
      expect(await alive.json()).toMatchObject({ ok: true, service });
      await until(`${service} /readyz`, async () => (await fetch(`${base(service)}/readyz`)).status === 200, 30_000);
      const ready = (await (await fetch(`${base(service)}/readyz`)).json()) as { ok: boolean; checks: Record<string, { ok: boolean }> };
      expect(ready.ok).toBe(true);
      expect(ready.checks['redis']?.ok).toBe(true);
      if (service !== 'api') expect(ready.checks['postgres']?.ok).toBe(true);
      else expect(ready.checks['snapshots']?.ok).toBe(true);
    }
  });

  // An address of this machine that is not loopback, when it has one.
  const lan = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

  it.runIf(lan)('keeps the ingestor and worker ops ports on loopback (OPS_HOST), while the API listens everywhere', async () => {
    const apiPort = Number(new URL(stack.apiUrl).port);
    for (const service of ['ingestor', 'worker'] as const) await until(`${service} listening`, () => portOpen('127.0.0.1', ports[service]), 30_000);
    expect(await portOpen(lan!, apiPort), `API on ${lan}`).toBe(true);
    for (const service of ['ingestor', 'worker'] as const) {
      expect(await portOpen('127.0.0.1', ports[service]), `${service} on 127.0.0.1`).toBe(true);
      expect(await portOpen(lan!, ports[service]), `${service} on ${lan}`).toBe(false);
    }
  });

  it('runs every service on the Node 24 LTS the project pins, whatever Node the machine has', async () => {
    for (const service of ['api', 'ingestor', 'worker'] as const) {
      const version = /^nodejs_version_info\{[^}]*version="(v[^"]+)"/m.exec(await scrape(service))?.[1];
      expect(version, `${service} nodejs_version_info`).toMatch(/^v24\./);
    }
    const sim = (await (await stack.simControl('/_sim/state')).json()) as { node?: string };
    expect(sim.node, 'simulator /_sim/state node').toMatch(/^v24\./);
    // The test runner itself: npm put the pinned binary first on PATH.
    expect(process.version).toMatch(/^v24\./);
  });

  it('exports metrics that promtool accepts and that move while the demo runs', async () => {
    // Traffic for the API between the two scrapes; the simulator moves books on its own.
    const first = { api: await scrape('api'), ingestor: await scrape('ingestor'), worker: await scrape('worker') };
    for (let i = 0; i < 5; i++) expect((await fetch(`${stack.apiUrl}/api/v1/markets`)).status).toBe(200);
    const requests = (t: string) => total(t, 'http_request_duration_seconds_count', { route: '/api/v1/markets', status: '200' });
    const frames = (t: string) => total(t, 'ingestor_ws_frames_total', { channel: 'market' });
    const jobs = (t: string) => total(t, 'worker_jobs_total', { queue: 'snapshots', outcome: 'completed' });
    const moved = (s: typeof first) =>
      requests(s.api) - requests(first.api) >= 5 && frames(s.ingestor) > frames(first.ingestor) && jobs(s.worker) > jobs(first.worker);
    // The second scrape once every counter moved (the API's requests, the feed's frames, the builds).
    const second = await waiting.until(
      'the metrics to move',
      async () => {
        const s = { api: await scrape('api'), ingestor: await scrape('ingestor'), worker: await scrape('worker') };
        return moved(s) && s;
      },
      { timeoutMs: 30_000, everyMs: 500, context: () => stack.logs() },
    );
    expect(requests(second.api) - requests(first.api)).toBeGreaterThanOrEqual(5);
    expect(frames(second.ingestor)).toBeGreaterThan(frames(first.ingestor));
    expect(jobs(second.worker)).toBeGreaterThan(jobs(first.worker));

    // Series a dashboard reads are present with the service label.
    expect(total(second.ingestor, 'ingestor_feed_connected', { channel: 'market', service: 'ingestor' })).toBe(1);
    expect(total(second.ingestor, 'ingestor_feed_last_message_age_seconds', { channel: 'market' })).toBeLessThan(30);
    expect(second.worker).toMatch(/^worker_queue_jobs\{queue="settlement",state="waiting",service="worker"\} \d+$/m);
    expect(second.worker).toMatch(/^calls_settled_total\{status="won",service="worker"\} \d+$/m);
    expect(total(second.api, 'snapshot_age_seconds', { snapshot: 'markets:trending' })).toBeGreaterThanOrEqual(0);
    expect(total(second.worker, 'metrics_collector_errors_total')).toBe(0);
    expect(total(second.ingestor, 'metrics_collector_errors_total')).toBe(0);

    for (const [service, text] of Object.entries(second)) {
      const check = promtool(['check', 'metrics'], text);
      expect(`${check.stdout}${check.stderr}`, `promtool check metrics on ${service}`).toBe('');
      expect(check.status, `promtool exit status on ${service}`).toBe(0);
    }
  });
});
