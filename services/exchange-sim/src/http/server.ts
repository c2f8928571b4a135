import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '@pm/shared/logger';
import type { ExchangeSource } from '../protocol.js';
import type { MarketChannel } from '../ws/market-channel.js';
import type { SportsChannel } from '../ws/sports-channel.js';
import { handleControlRoute } from './control-routes.js';
import { handleExchangeRoute } from './exchange-routes.js';
import { BodyError, sendJson } from './respond.js';

export interface ServerDeps {
  source: ExchangeSource;
  market: MarketChannel;
  sports: SportsChannel;
  log: Logger;
  /** The control API's bearer token; null = the controls are off. */
  controlToken: string | null;
}

/**
 * One HTTP server for all four interfaces: REST routes, and websocket upgrades on `/ws/market`
 * (market channel) and `/ws` (sports channel).
 */
export function createSimServer(deps: ServerDeps): Server {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://sim.local');
    try {
      if (handleExchangeRoute(deps.source, req.method ?? 'GET', url, res)) return;
      if (await handleControlRoute(deps, req, url, res)) return;
      sendJson(res, 404, { error: `not found: ${url.pathname}` });
    } catch (err) {
      if (err instanceof BodyError) {
        sendJson(res, 400, { error: err.message });
        return;
      }
      deps.log.error({ err, path: url.pathname }, 'simulator request failed');
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
    }
  };
  const server = createServer((req, res) => void handle(req, res));
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://sim.local').pathname.replace(/\/+$/, '');
    if (path === '/ws/market') deps.market.handleUpgrade(req, socket, head);
    else if (path === '/ws') deps.sports.handleUpgrade(req, socket, head);
    else socket.destroy();
  });
  return server;
}
