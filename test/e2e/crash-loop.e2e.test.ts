import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtEntry } from '../../scripts/lib/build.js';
import { until } from '@pm/shared/wait';
import { freePort, runLineChildren, startStack, type Stack } from '../support/stack.js';

/**
 * A crash-looping service under the run line: the ingestor is killed (SIGKILL, as a crash) six times
 * within a minute while the API is asked for the market list the whole time. The run line must keep
 * the rest of the stack up (every answer 200, the API process never restarted), say which service is
 * crash-looping with its restart count and backoff, and bring the ingestor back after the backoff.
 */

let stack: Stack;
let ingestorPort: number;

/** The pid of the run line's child running `entry`, or undefined while none is running. */
function childPid(entry: string): number | undefined {
  return runLineChildren(stack).find((child) => child.args.includes(entry))?.pid;
}

const INGESTOR = builtEntry('ingestor');
const API = builtEntry('api');

beforeAll(async () => {
  ingestorPort = await freePort();
  // The API is polled every 100 ms for a minute: far past the public rate limit.
  stack = await startStack({ env: { INGESTOR_PORT: String(ingestorPort), RATE_LIMIT_PER_MINUTE: '1000000', CROWD: '0' } });
});

afterAll(async () => {
  await stack?.stop();
});

describe('a crash-looping service under the run line', () => {
  it('is backed off and reported while the API keeps answering 200', async () => {
    const apiPid = childPid(API);
    expect(apiPid, 'the API process').toBeDefined();

    // Ask the API all along; any answer but 200 (or no answer) counts against it.
    let polls = 0;
    const failures: string[] = [];
    let polling = true;
    // Every 100 ms until the kills are over.
    const poller = until(
      'the kills to end',
      async () => {
        polls += 1;
        try {
          const res = await fetch(`${stack.apiUrl}/api/v1/markets`, { signal: AbortSignal.timeout(5_000) });
          if (res.status !== 200) failures.push(`${new Date().toISOString()} ${res.status}`);
          await res.arrayBuffer();
        } catch (err) {
          failures.push(`${new Date().toISOString()} ${err instanceof Error ? err.message : String(err)}`);
        }
        return !polling;
      },
      { timeoutMs: 600_000, everyMs: 100 },
    );

    const kills: Array<{ at: number; pid: number }> = [];
    try {
      for (let i = 0; i < 6; i++) {
        const previous = kills.at(-1)?.pid;
        // The next instance, once the backoff has passed (1 s, 2 s, … between kills).
        const pid = await until(`ingestor instance ${i + 1}`, async () => {
          const p = childPid(INGESTOR);
          return p !== undefined && p !== previous ? p : undefined;
        }, { timeoutMs: 40_000, everyMs: 50, context: () => stack.logs() });
        process.kill(pid, 'SIGKILL');
        kills.push({ at: Date.now(), pid });
      }
      const killWindowS = (kills.at(-1)!.at - kills[0]!.at) / 1000;
      expect(killWindowS, 'six deaths within a minute').toBeLessThan(60);
      // Each next instance came only after a delay that doubled: 0.5 s, 1 s, 2 s, 4 s, 8 s.
      const gapsMs = kills.slice(1).map((k, i) => k.at - kills[i]!.at);
      gapsMs.forEach((gap, i) => expect(gap, `gap before kill ${i + 2}`).toBeGreaterThanOrEqual(500 * 2 ** i));

      // The run line names the crash-looping service, its restart count and its backoff.
      const statusLine = await until('the crash-loop status line', async () =>
        /^start\s+status: ingestor CRASH-LOOPING \(6 restarts, next start in [\d.]+ s\).*$/m.exec(stack.logs())?.[0],
      { timeoutMs: 5_000, context: () => stack.logs() });
      expect(stack.logs()).toMatch(/^ingestor\s+CRASH-LOOPING: died 6 times in a row/m);

      // It comes back by itself after the backoff, ready to answer its ops port.
      const backAt = await until('the ingestor back after its backoff', async () => {
        const res = await fetch(`http://127.0.0.1:${ingestorPort}/healthz`).catch(() => undefined);
        return res?.status === 200 ? Date.now() : undefined;
      }, { timeoutMs: 90_000, everyMs: 200, context: () => stack.logs() });
      const backAfterS = (backAt - kills.at(-1)!.at) / 1000;
      expect(backAfterS, 'the sixth restart waited its 16 s backoff').toBeGreaterThanOrEqual(16);
      // Its restart shows in the metric a crash-loop alert watches (infra/prometheus/alerts.yml).
      const metrics = await (await fetch(`http://127.0.0.1:${ingestorPort}/metrics`)).text();
      const startTime = Number(/^process_start_time_seconds\{[^}]*\} (\d+)/m.exec(metrics)?.[1]);
      expect(startTime * 1000).toBeGreaterThanOrEqual(Math.floor(kills.at(-1)!.at / 1000) * 1000);

      polling = false;
      await poller;
      process.stdout.write(
        `\ncrash loop: 6 SIGKILLs of the ingestor within ${killWindowS.toFixed(1)} s (gaps ${gapsMs.map((g) => (g / 1000).toFixed(1)).join(', ')} s); ` +
          `back ${backAfterS.toFixed(1)} s after the last one; API polled ${polls} times, ${failures.length} answers not 200\n` +
          `run line said: ${statusLine.trim()}\n`,
      );
      expect(failures, 'API answers other than 200 while the ingestor crash-looped').toEqual([]);
      expect(polls).toBeGreaterThan(100);
      expect(childPid(API), 'the API process was never restarted').toBe(apiPid);
    } finally {
      polling = false;
      await poller;
    }
  }, 180_000);
});
