import { describe, expect, it } from 'vitest';
import { DEFAULT_RESTART_POLICY, NO_RESTARTS, onDeath, type RestartHistory } from './restart-policy.js';
import { describeStatus, type ServiceStatus } from './supervisor.js';

const deaths = (ranMs: number[]) => {
  let history: RestartHistory = NO_RESTARTS;
  return ranMs.map((ran) => {
    const decision = onDeath(history, ran);
    history = decision.history;
    return decision;
  });
};

describe('restart policy', () => {
  it('given quick deaths in a row, doubles the delay up to its cap and never gives up', () => {
    const decisions = deaths(Array.from({ length: 10 }, () => 1_000));
    expect(decisions.map((d) => d.delayMs)).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]);
    expect(decisions.at(-1)!.history.restarts).toBe(10);
  });

  it('calls it a crash loop from the fifth quick death in a row', () => {
    expect(deaths([1, 1, 1, 1, 1, 1]).map((d) => d.crashLooping)).toEqual([false, false, false, false, true, true]);
  });

  it('given a death after a healthy run, starts the count again but keeps counting restarts', () => {
    const decisions = deaths([1, 1, 1, 1, 1, DEFAULT_RESTART_POLICY.stableMs]);
    expect(decisions.at(-1)).toEqual({ history: { restarts: 6, quickDeaths: 1 }, delayMs: 500, crashLooping: false });
  });
});

describe('the run line status line', () => {
  const up = (name: string): ServiceStatus => ({ name, state: 'up', pid: 1, restarts: 0, crashLooping: false, quickDeaths: 0, nextStartInMs: null });

  it('names the crash-looping service first, with its restarts and next start', () => {
    const looping: ServiceStatus = { ...up('ingestor'), state: 'restarting', pid: null, restarts: 6, crashLooping: true, quickDeaths: 6, nextStartInMs: 16_000 };
    expect(describeStatus([up('api'), looping, { ...up('worker'), restarts: 1 }])).toBe(
      'ingestor CRASH-LOOPING (6 restarts, next start in 16 s) · api up · worker up (1 restart)',
    );
  });
});
