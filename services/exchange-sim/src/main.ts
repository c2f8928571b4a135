import { createLogger } from '@pm/shared/logger';
import { loadConfig } from '@pm/shared/config';
import { startSimulator } from './simulator.js';

/** Composition root of the exchange simulator. */
const config = loadConfig();
const log = createLogger('exchange-sim', config);

const sim = await startSimulator({
  port: config.SIM_PORT,
  host: config.HOST,
  seed: config.SIM_SEED,
  speed: config.SIM_SPEED,
  paused: config.SIM_PAUSED,
  controlToken: config.SIM_CONTROL_TOKEN ?? null,
  quietSpells: { everyMs: config.SIM_QUIET_EVERY_SECONDS * 1000, forMs: config.SIM_QUIET_SECONDS * 1000 },
  ...(config.SIM_SCENARIO ? { scenario: config.SIM_SCENARIO } : {}),
  logger: log,
});
log.info(
  {
    http: sim.httpUrl,
    marketWs: `${sim.wsUrl}/ws/market`,
    sportsWs: `${sim.wsUrl}/ws`,
    seed: config.SIM_SEED,
    speed: config.SIM_SPEED,
    scenario: config.SIM_SCENARIO ?? null,
    controls: sim.controlToken ? 'on (loopback, bearer token)' : 'off (no SIM_CONTROL_TOKEN)',
  },
  'exchange simulator listening',
);

let stopping = false;
const shutdown = (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'exchange simulator stopping');
  void sim.close().then(() => process.exit(0));
};
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));
