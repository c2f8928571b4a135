import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../support/stack.js';
import { until } from '@pm/shared/wait';

/**
 * Market-socket liveness on the whole stack against the simulator (docs/protocol.md §1): PONGs count as
 * life. Intervals are scaled down 20× so the test runs in seconds (the defaults stay: PING every
 * 10 s, recycle after 120 s of total silence): PING every 0.5 s, and a quiet spell of 3 s (= 60 s)
 * with data stopped but PONGs answered. The silence limit is set to 2 s, SHORTER than the quiet
 * spell, so only the PONGs can keep the socket: it must not be recycled. Then the simulator stops
 * answering altogether: the socket must be recycled for missing PONGs within 1.5 s (= 30 s), and
 * `live` must be back within 5 s of the silence ending. Prints what it measured.
 */
const PING_S = 0.5;
const SILENCE_LIMIT_S = 2;
const QUIET_MS = 3_000;

let stack: Stack;

const recycles = (why: 'silent' | 'missed PONGs') => (stack.logs().match(new RegExp(`market socket ${why}; recycling`, 'g')) ?? []).length;
const anyRecycles = () => recycles('silent') + recycles('missed PONGs');
const apiLive = async () => ((await (await fetch(`${stack.apiUrl}/api/v1/markets`)).json()) as { live?: boolean }).live === true;

beforeAll(async () => {
  stack = await startStack({
    env: {
      MARKET_PING_SECONDS: String(PING_S),
      MARKET_WATCHDOG_SECONDS: String(SILENCE_LIMIT_S),
      SIM_QUIET_EVERY_SECONDS: '0',
      RATE_LIMIT_PER_MINUTE: '1000000',
    },
    readyTimeoutMs: 90_000,
  });
  await until('live at start', apiLive, { timeoutMs: 30_000, everyMs: 200, context: () => stack.logs() });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('market socket liveness with the simulator', () => {
  it('a quiet spell longer than the silence limit, with steady PONGs, is never recycled and stays live', async () => {
    const before = anyRecycles();
    const quiet = await stack.simControl('/_sim/quiet', { ms: QUIET_MS });
    expect(quiet.status).toBe(200);
    const { quietUntil } = (await quiet.json()) as { quietUntil: number };
    let notLive = 0;
    let checks = 0;
    // Ask the API every 200 ms until the spell is over (and half a second more).
    await until(
      'the quiet spell to end',
      async () => {
        checks++;
        if (!(await apiLive())) notLive++;
        return Date.now() >= quietUntil + 500;
      },
      { timeoutMs: quietUntil + 5_000 - Date.now(), everyMs: 200 },
    );
    const during = anyRecycles() - before;
    console.log(`quiet spell of ${QUIET_MS} ms (silence limit ${SILENCE_LIMIT_S * 1000} ms, PING every ${PING_S * 1000} ms): ${during} recycles, live false in ${notLive} of ${checks} checks`);
    expect(during).toBe(0);
    expect(notLive).toBe(0);
  });

  it('a socket whose PONGs stop is recycled within three ping intervals, and live is back within 5 s of the silence ending', async () => {
    const before = recycles('missed PONGs');
    const silenced = await stack.simControl('/_sim/silence', { ms: 4_000 });
    expect(silenced.status).toBe(200);
    const stoppedAt = Date.now();
    const { silencedUntil } = (await silenced.json()) as { silencedUntil: number };
    const recycledAfter = await until('recycled for missing PONGs', async () => (recycles('missed PONGs') > before ? Date.now() - stoppedAt : undefined), {
      timeoutMs: 10_000,
      everyMs: 20,
      context: () => stack.logs(),
    });
    await until('the silence over', async () => Date.now() > silencedUntil, { timeoutMs: 10_000, everyMs: 50 });
    const liveAfter = await until('live again', async () => ((await apiLive()) ? Date.now() - silencedUntil : undefined), {
      timeoutMs: 15_000,
      everyMs: 50,
      context: () => stack.logs(),
    });
    console.log(`PONGs stopped: recycled after ${recycledAfter} ms (bound ${3 * PING_S * 1000} ms = 30 s at the defaults); live again ${liveAfter} ms after the silence ended`);
    // Two unanswered PINGs recycle it: 2–3 ping intervals after the last PONG (slack for a loaded machine).
    expect(recycledAfter).toBeLessThan(3 * PING_S * 1000 + 1_000);
    expect(liveAfter).toBeLessThan(5_000);
  });
});
