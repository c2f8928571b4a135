import { runService } from '@pm/shared/ops';
import { startSimulator } from './simulator.js';

/** Composition root of the exchange simulator (service.ts does the configuration, logger and signals). */
runService('exchange-sim', async ({ config, logger }) => {
  let sim: Awaited<ReturnType<typeof startSimulator>> | undefined;
  return {
    async start() {
      sim = await startSimulator({
        port: config.SIM_PORT,
        host: config.HOST,
        seed: config.SIM_SEED,
        speed: config.SIM_SPEED,
        ...(config.SIM_EVENTS === undefined ? {} : { openEvents: config.SIM_EVENTS }),
        paused: config.SIM_PAUSED,
        idEpoch: config.SIM_ID_EPOCH,
        controlToken: config.SIM_CONTROL_TOKEN ?? null,
        quietSpells: { everyMs: config.SIM_QUIET_EVERY_SECONDS * 1000, forMs: config.SIM_QUIET_SECONDS * 1000 },
        ...(config.SIM_SCENARIO ? { scenario: config.SIM_SCENARIO } : {}),
        logger,
      });
      logger.info(
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
    },
    stop: async () => {
      await sim?.close();
    },
  };
});
