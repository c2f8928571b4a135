import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createLogger, type Logger } from '@pm/shared/logger';
import { createSimServer } from './http/server.js';
import type { ExchangeSource } from './protocol.js';
import { ReplayExchange } from './replay/replay-source.js';
import { loadScenario } from './replay/scenario.js';
import { SyntheticExchange } from './synthetic/engine.js';
import { MarketChannel } from './ws/market-channel.js';
import { SportsChannel } from './ws/sports-channel.js';

export interface SimulatorOptions {
  /** 0 = an ephemeral port. Default 0. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Seed of the synthetic generator. Default 42. */
  seed?: number;
  /** Multiplier of the simulation clock (replay: of the feed's timeline). Default 1. */
  speed?: number;
  /** A scenario folder to replay instead of the synthetic generator. */
  scenario?: string;
  /** Simulation start in ms (synthetic); default now. Fix it to compare two runs' catalogs. */
  startTime?: number;
  /** Start with the synthetic walk (or the replayed feed) paused, for tests; POST /_sim/resume starts it. */
  paused?: boolean;
  /**
   * The bearer token the control API (`/_sim/*`) requires. Default: a random one, readable as
   * `controlToken` of the running simulator (tests in the same process); null = the controls are off.
   */
  controlToken?: string | null;
  /** Synthetic: quiet spells (books still, sockets answering PONG); default every 8 min for 60 s, `everyMs: 0` = none. */
  quietSpells?: { everyMs: number; forMs: number };
  /** Synthetic: open events to keep at least (SIM_EVENTS); default the catalog as designed (about 70). */
  openEvents?: number;
  /** Synthetic: this run's id epoch (SIM_ID_EPOCH); 0 = the seed's ids as always. */
  idEpoch?: number;
  logger?: Logger;
}

export interface RunningSimulator {
  /** http://host:port (same as httpUrl). */
  url: string;
  httpUrl: string;
  /** ws://host:port — market channel at /ws/market, sports channel at /ws. */
  wsUrl: string;
  port: number;
  /** The control API's token (send `Authorization: Bearer <token>`), or null when the controls are off. */
  controlToken: string | null;
  close(): Promise<void>;
}

/**
 * Start the exchange simulator: Gamma, CLOB REST, the market channel and the sports channel on one
 * port, fed by the seeded generator or by a scenario folder, plus `/_sim/` test controls.
 */
export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const log = opts.logger ?? createLogger('exchange-sim', { LOG_LEVEL: 'silent' });
  const speed = opts.speed ?? 1;
  const source: ExchangeSource = opts.scenario
    ? new ReplayExchange(loadScenario(opts.scenario), speed, opts.paused ?? false)
    : new SyntheticExchange({
        seed: opts.seed ?? 42,
        speed,
        paused: opts.paused ?? false,
        ...(opts.startTime === undefined ? {} : { startTime: opts.startTime }),
        ...(opts.quietSpells === undefined ? {} : { quietSpells: opts.quietSpells }),
        ...(opts.openEvents === undefined ? {} : { openEvents: opts.openEvents }),
        ...(opts.idEpoch === undefined ? {} : { idEpoch: opts.idEpoch }),
      });
  const market = new MarketChannel(source, log);
  const sports = new SportsChannel(source, log);
  const controlToken = opts.controlToken === undefined ? randomBytes(24).toString('base64url') : opts.controlToken;
  const server = createSimServer({ source, market, sports, log, controlToken });

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  source.start({
    market: (messages) => market.publish(messages),
    marketRaw: (frame, assetId) => market.publishRaw(frame, assetId),
    sports: (frame) => sports.publish(frame),
  });

  const port = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const httpUrl = `http://${shownHost}:${port}`;
  let closing: Promise<void> | null = null;
  return {
    url: httpUrl,
    httpUrl,
    wsUrl: `ws://${shownHost}:${port}`,
    port,
    controlToken,
    close() {
      closing ??= new Promise<void>((resolve) => {
        source.stop();
        market.close();
        sports.close();
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
