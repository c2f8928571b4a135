import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refuseControl } from '../src/http/control-guard.js';
import { startSimulator, type RunningSimulator } from '../src/simulator.js';
import { control, getEvents } from './helpers.js';

/**
 * The control API (`/_sim/*`) answers only loopback clients that send the simulator's token; the
 * exchange's public routes stay open. A refused control changes nothing.
 */

const TOKEN = 'test-token-0123456789abcdef';
/** An address of this machine that is not loopback, when it has one. */
const lan = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

describe('the simulator control API', () => {
  let sim: RunningSimulator;
  let off: RunningSimulator;

  beforeAll(async () => {
    [sim, off] = await Promise.all([
      startSimulator({ seed: 9, paused: true, controlToken: TOKEN, host: '0.0.0.0' }),
      startSimulator({ seed: 9, paused: true, controlToken: null }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([sim?.close(), off?.close()]);
  });

  const ask = (base: string, path: string, init: RequestInit = {}) => fetch(`${base}${path}`, init);

  it('refuses a request without the token with 401 and a JSON error, and a wrong token with 403', async () => {
    const missing = await ask(sim.url, '/_sim/state');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(missing.headers.get('content-type')).toContain('application/json');
    expect(await missing.json()).toEqual({ error: 'the control API needs Authorization: Bearer <SIM_CONTROL_TOKEN>' });

    const wrong = await ask(sim.url, '/_sim/state', { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toEqual({ error: 'wrong control token' });

    expect(await control(sim).get('/_sim/state')).toMatchObject({ mode: 'synthetic', paused: true });
  });

  it('changes nothing when it refuses a resolution', async () => {
    const [event] = await getEvents(`${sim.url}/events?active=true&closed=false&limit=1`);
    const market = event!.markets[0]!;
    const refused = await ask(sim.url, '/_sim/resolve', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ market_id: market.id, winning_outcome_index: 0 }),
    });
    expect(refused.status).toBe(401);
    const after = await getEvents(`${sim.url}/events?closed=true&limit=500`);
    expect(after.flatMap((e) => e.markets).some((m) => m.id === market.id)).toBe(false);
    expect((await control(sim).post('/_sim/resolve', { market_id: market.id, winning_outcome_index: 0 })).status).toBe(200);
  });

  it('keeps the exchange routes open without a token, as the real exchange does', async () => {
    expect((await ask(sim.url, '/events?limit=1')).status).toBe(200);
    expect((await ask(sim.url, '/sports')).status).toBe(200);
  });

  it('is off, with a 403 saying how to turn it on, when the simulator has no token', async () => {
    const res = await ask(off.url, '/_sim/state', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'the control API is off: start the simulator with SIM_CONTROL_TOKEN set' });
  });

  it.runIf(lan)('refuses a client that is not on this machine, token or not', async () => {
    const res = await ask(`http://${lan}:${sim.port}`, '/_sim/state', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'the control API answers only on 127.0.0.1' });
    expect((await ask(`http://${lan}:${sim.port}`, '/events?limit=1')).status).toBe(200);
  });

  it('takes loopback over IPv4, IPv6 and mapped IPv4 and nothing else', () => {
    const req = (remoteAddress: string) => ({ socket: { remoteAddress }, headers: { authorization: `Bearer ${TOKEN}` } });
    for (const address of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) expect(refuseControl(req(address), TOKEN), address).toBeNull();
    for (const address of ['10.0.0.5', '::ffff:10.0.0.5', '192.0.2.2']) expect(refuseControl(req(address), TOKEN)?.status, address).toBe(403);
  });
});
