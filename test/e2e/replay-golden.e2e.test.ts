import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startStack, untilMarketConnected, type Stack } from '../support/stack.js';
import * as waiting from '@pm/shared/wait';

/**
 * Golden-file test of the whole stack on the hand-made scenario (test/fixtures/scenario-basic):
 * two fresh stacks replay it, and after the feed has finished the API answers the same, byte for
 * byte, in both runs and as committed in golden.json.
 *
 * Regenerate the golden file after an intended change of the API's output:
 *   UPDATE_GOLDEN=1 npx vitest run test/e2e/replay-golden.e2e.test.ts
 *
 * Stripped before comparing: the top-level `live` of each body. It says whether the feed is
 * connected and fresh at request time; after the feed ends the watchdog keeps recycling the silent
 * socket, so it flips with the moment of the request rather than with the data. A market's
 * `resolved_at` is the wall-clock moment the service saw the resolution: kept only as set or null. History points
 * are kept only up to the end of the scenario's recorded history: live points carry wall-clock
 * times.
 *
 * The simulator starts paused (SIM_PAUSED) and is resumed once the ingestor's market socket is
 * subscribed, so every frame reaches it in both runs.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const scenario = path.resolve(here, '../fixtures/scenario-basic');
const goldenPath = path.join(scenario, 'golden.json');
/** Last `t` (s) of the scenario's history files, plus a day: later points are live ones. */
const HISTORY_CUTOFF_S = Date.UTC(2026, 10, 21, 12) / 1000;

const SPEED = 2;
const feedLines = readFileSync(path.join(scenario, 'feed.jsonl'), 'utf8').split('\n').filter((l) => l.trim()).length;
const catalog = JSON.parse(readFileSync(path.join(scenario, 'catalog.json'), 'utf8')) as Array<{ slug: string; markets: Array<{ id: string }> }>;

type Captured = Record<string, { status: number; body: unknown }>;

const waitFor = <T>(label: string, check: () => Promise<T | undefined | null | false>, timeoutMs: number) => waiting.until(label, check, { timeoutMs, everyMs: 200 });

/** Every `resolved_at` timestamp in `value` replaced by "<set>" (null stays null). */
function stripResolvedAt(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripResolvedAt);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === 'resolved_at' && typeof v === 'string' ? '<set>' : stripResolvedAt(v)]),
  );
}

function normalise(url: string, raw: unknown): unknown {
  const body = stripResolvedAt(raw);
  if (typeof body !== 'object' || body === null) return body;
  const { live: _live, ...rest } = body as Record<string, unknown>;
  if (url.includes('/history') && Array.isArray(rest.points)) {
    rest.points = (rest.points as Array<{ t: number }>).filter((p) => p.t < HISTORY_CUTOFF_S);
  }
  return rest;
}

async function capture(stack: Stack): Promise<Captured> {
  const urls = ['/api/v1/markets', '/api/v1/markets?category=Sport', '/api/v1/live'];
  for (const e of catalog) {
    urls.push(`/api/v1/markets/${e.slug}`);
    urls.push(`/api/v1/markets/${e.slug}/history?range=max`);
  }
  const out: Captured = {};
  for (const url of urls) {
    const res = await fetch(`${stack.apiUrl}${url}`);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text: an HTML 404 of a route that does not exist yet is still a stable answer
    }
    out[url] = { status: res.status, body: normalise(url, body) };
  }
  return out;
}

async function replayOnce(): Promise<Captured> {
  const stack = await startStack({
    env: {
      SIM_SCENARIO: scenario,
      SIM_SPEED: String(SPEED),
      SIM_PAUSED: '1',
      MARKET_WATCHDOG_SECONDS: '1',
      CATALOG_SYNC_SECONDS: '1',
      SNAPSHOT_INTERVAL_MS: '100',
    },
    readyTimeoutMs: 90_000,
  });
  try {
    await untilMarketConnected(stack);
    const resumed = await stack.simControl('/_sim/resume', {});
    expect(resumed.status).toBe(200);
    await waitFor(
      'the whole feed dispatched',
      async () => ((await (await stack.simControl('/_sim/state')).json()) as { tick: number }).tick >= feedLines,
      30_000,
    );
    // Settled: catalog syncs (1 s) and snapshot rebuilds have caught up when two captures 2.5 s
    // apart agree.
    let previous = await capture(stack);
    let previousAt = Date.now();
    return await waiting.until(
      'the API output to settle (two captures 2.5 s apart agreeing)',
      async () => {
        if (Date.now() - previousAt < 2_500) return false;
        const next = await capture(stack);
        previousAt = Date.now();
        const settled = JSON.stringify(next) === JSON.stringify(previous);
        previous = next;
        return settled && next;
      },
      { timeoutMs: 22_000, everyMs: 250, context: () => stack.logs() },
    );
  } finally {
    await stack.stop();
  }
}

describe('replaying the fixture scenario', () => {
  it('gives identical API output twice, equal to the committed golden file', { timeout: 300_000 }, async () => {
    const first = await replayOnce();
    const second = await replayOnce();
    expect(second).toEqual(first);

    // What the scenario is built to show, so a golden file of broken output cannot pass silently.
    const soccer = first['/api/v1/markets/epl-ars-che-2027-01-10'];
    expect(soccer?.status).toBe(200);
    const crypto = JSON.stringify(first['/api/v1/markets/bitcoin-above-on-january-9']);
    expect(crypto).toContain('"closed":true');

    if (process.env.UPDATE_GOLDEN === '1') {
      writeFileSync(goldenPath, `${JSON.stringify(first, null, 2)}\n`);
    }
    expect(existsSync(goldenPath), 'golden.json is missing: run with UPDATE_GOLDEN=1').toBe(true);
    const golden = JSON.parse(readFileSync(goldenPath, 'utf8')) as Captured;
    expect(first).toEqual(golden);
  });
});
