/**
 * The run line (`npm start`): finds or starts Postgres and Redis, migrates, and runs the exchange
 * simulator, ingestor, worker and API together with readable logs. The API listens on PORT (3000).
 *   npm start                 everything, against the bundled simulator
 *   npm start -- --live       against the real exchange (no simulator)
 *   npm start -- --scenario <folder> [--speed N]   replay a recorded feed
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, parseConfig } from '@pm/shared/config';
import { ensureDatabase, migrate } from '@pm/shared/db';
import { ensureInfra, InfraError, portOpen } from './lib/infra.js';
import { createSupervisor, describeStatus, type ServiceSpec } from './lib/supervisor.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const LIVE_URLS = {
  GAMMA_URL: 'https://gamma-api.polymarket.com',
  CLOB_URL: 'https://clob.polymarket.com',
  CLOB_WS_URL: 'wss://ws-subscriptions-clob.polymarket.com',
  SPORTS_WS_URL: 'wss://sports-api.polymarket.com',
};

async function waitForPort(host: string, port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await portOpen(host, port, 300)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

function say(line: string) {
  process.stdout.write(`${'start'.padEnd(12)} ${line}\n`);
}

async function main() {
  const { values } = parseArgs({
    options: {
      live: { type: 'boolean', default: false },
      scenario: { type: 'string' },
      speed: { type: 'string' },
      'no-sim': { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });

  const infra = await ensureInfra(root, process.env, say);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: infra.databaseUrl,
    REDIS_URL: infra.redisUrl,
    PRETTY_LOGS: process.env.PRETTY_LOGS ?? '1',
  };
  const runSim = !values.live && !values['no-sim'];
  if (values.live) Object.assign(env, LIVE_URLS);
  if (values.scenario) env.SIM_SCENARIO = path.resolve(values.scenario);
  if (values.speed) env.SIM_SPEED = values.speed;
  if (runSim) {
    const simPort = env.SIM_PORT ?? '4000';
    for (const k of ['GAMMA_URL', 'CLOB_URL'] as const) env[k] ??= `http://127.0.0.1:${simPort}`;
    for (const k of ['CLOB_WS_URL', 'SPORTS_WS_URL'] as const) env[k] ??= `ws://127.0.0.1:${simPort}`;
  }

  // Validate once here so a bad variable is one clear line, not four crashing services.
  const config = parseConfig(env);
  for (const line of infra.describe) say(line);
  await ensureDatabase(config.DATABASE_URL);
  const { applied } = await migrate(config.DATABASE_URL);
  say(applied.length ? `migrated: ${applied.join(', ')}` : 'database schema is current');

  // The simulator's control API (`/_sim/*`: resolve markets, force books) needs a token; the run line
  // makes one unless given one and hands it only to the simulator and the demo crowd.
  const simEnv: NodeJS.ProcessEnv = { ...env, SIM_CONTROL_TOKEN: env.SIM_CONTROL_TOKEN || randomBytes(24).toString('base64url') };
  const serviceEnv: NodeJS.ProcessEnv = { ...env };
  delete serviceEnv.SIM_CONTROL_TOKEN;
  const sim: ServiceSpec = { name: 'exchange-sim', entry: 'services/exchange-sim/src/main.ts', env: simEnv };
  const services: ServiceSpec[] = [
    { name: 'ingestor', entry: 'services/ingestor/src/main.ts', env: serviceEnv },
    { name: 'worker', entry: 'services/worker/src/main.ts', env: serviceEnv },
    { name: 'api', entry: 'services/api/src/main.ts', env: serviceEnv },
  ];
  // A service that dies is restarted with a growing, capped delay and never takes the others down:
  // a crash-looping ingestor must not stop the API from serving what it has. Every death, restart and
  // crash loop prints the status line, so the one that is failing is named in the terminal.
  const supervisor = createSupervisor({
    cwd: root,
    pretty: config.PRETTY_LOGS,
    onChange: (changed, all) => {
      if (changed.restarts > 0 && changed.state !== 'stopped') say(`status: ${describeStatus(all)}`);
    },
  });
  // The demo crowd (scripts/crowd.ts) makes calls and resolves markets on the simulator, so it runs
  // only with the synthetic simulator (a replayed scenario stays as recorded), and not with CROWD=0.
  const runCrowd = runSim && !values.scenario && env.CROWD !== '0';
  const crowd: ServiceSpec = { name: 'crowd', entry: 'scripts/crowd.ts', env: simEnv };

  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    say('stopping…');
    await supervisor.stop(10_000, (name) => name === crowd.name);
    // The services first, the simulator last: their in-flight requests to it then end normally.
    await supervisor.stop(10_000, (name) => name !== sim.name);
    await supervisor.stop();
    await infra.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));

  if (runSim) {
    // The simulator first, so the ingestor's first catalog sync finds it listening.
    supervisor.run([sim]);
    const up = await waitForPort('127.0.0.1', config.SIM_PORT, 15_000);
    if (!up) say(`the simulator is not listening on port ${config.SIM_PORT} yet; starting the services anyway`);
  }
  supervisor.run(services);
  if (runCrowd) supervisor.run([crowd]);
  say(`API on http://localhost:${config.PORT}/api/v1/markets, reference at http://localhost:${config.PORT}/api/v1/docs — Ctrl-C stops everything`);
}

main().catch((err) => {
  if (err instanceof ConfigError || err instanceof InfraError) {
    process.stderr.write(`${err.message}\n`);
  } else {
    process.stderr.write(`start failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  }
  process.exit(1);
});
