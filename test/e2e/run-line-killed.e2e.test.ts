import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processAlive as alive } from '@pm/shared/testing';
import { builtEntry, SERVICE_NAMES } from '../../scripts/lib/build.js';
import { until } from '@pm/shared/wait';
import { runLineChildren, startStack, type Stack } from '../support/stack.js';

/**
 * The run line killed outright (SIGKILL: no handler runs, nothing is told): its services must not
 * live on as orphans holding their ports and a share of the machine. Each learns of it when the
 * IPC channel to the run line closes and stops as on SIGTERM (shared/src/ops/shutdown.ts); so does
 * the demo crowd.
 */

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

describe('the run line killed with SIGKILL', () => {
  it('takes every service it started with it within the shutdown deadline, and the API port closes', async () => {
    const services = runLineChildren(stack);
    const names = services.map(({ args }) => SERVICE_NAMES.find((name) => args.includes(builtEntry(name))) ?? (args.includes('scripts/crowd.ts') ? 'crowd' : undefined));
    // Besides the services, the run line may have a helper of its own (tsx's esbuild): it must go too.
    expect(names.filter(Boolean).sort()).toEqual(['api', 'crowd', 'exchange-sim', 'ingestor', 'worker']);
    expect((await fetch(`${stack.apiUrl}/healthz`)).status).toBe(200);

    process.kill(stack.pid, 'SIGKILL');
    // Each stops as on SIGTERM: at most the 10 s shutdown deadline, plus slack for a loaded machine.
    await until('every service to exit', async () => services.every((s) => !alive(s.pid)), {
      timeoutMs: 20_000,
      everyMs: 100,
      context: () => services.filter((s) => alive(s.pid)).map((s) => `${s.pid} ${s.args}`).join('\n'),
    });
    await expect(fetch(`${stack.apiUrl}/healthz`)).rejects.toThrow();
  });
});
