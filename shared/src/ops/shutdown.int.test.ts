import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { processAlive as alive } from '../testing/index.js';
import { until } from '../wait.js';

/**
 * A service started by a parent with an IPC channel (the run line's supervisor) stops when that
 * parent is gone — also when the parent died while the service was still starting, before it had
 * registered its shutdown (a starting demo crowd outlived a killed run line in CI that way).
 */

const shutdownModule = path.join(path.dirname(fileURLToPath(import.meta.url)), 'shutdown.ts');

it('stops a process whose parent died before it registered its shutdown', async () => {
  // The child registers onShutdown 1 s after it starts; its parent has exited long before.
  const child = `
    import { pino } from 'pino';
    import { onShutdown } from ${JSON.stringify(shutdownModule)};
    setInterval(() => {}, 1000); // a service's open handles
    setTimeout(() => onShutdown(async () => {}, { logger: pino({ level: 'silent' }) }), 1000);
  `;
  const parent = `
    const { spawn } = require('node:child_process');
    const c = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', ${JSON.stringify(child)}], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], detached: true });
    console.log(c.pid);
    process.exit(0);
  `;
  const pid = Number(execFileSync(process.execPath, ['-e', parent], { encoding: 'utf8', cwd: process.cwd() }).trim());
  expect(pid).toBeGreaterThan(0);
  try {
    await until('the orphaned child to stop', async () => !alive(pid), { timeoutMs: 15_000, everyMs: 100 });
  } finally {
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
});
